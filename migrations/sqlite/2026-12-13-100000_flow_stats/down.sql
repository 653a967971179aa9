DROP TABLE exposures;
DROP TABLE flow_counts;
