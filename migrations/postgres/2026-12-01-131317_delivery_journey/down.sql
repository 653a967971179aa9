DROP INDEX dispatches_status;
ALTER TABLE dispatches DROP COLUMN hold_code;
