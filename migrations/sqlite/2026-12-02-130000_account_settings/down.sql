ALTER TABLE accounts DROP COLUMN quiet_hours;
ALTER TABLE accounts DROP COLUMN fetch_allow;
