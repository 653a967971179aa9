DROP TABLE enrollment_migrations;
