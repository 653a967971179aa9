DROP TABLE signals;
DROP TABLE tasks;
DROP TABLE dispatches;
DROP TABLE journey;
DROP TABLE enrollments;
