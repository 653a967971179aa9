DROP TABLE journey_log;
DROP TABLE journey_heads;
