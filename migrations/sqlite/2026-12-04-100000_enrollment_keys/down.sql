DROP VIEW enrollment_keys;
