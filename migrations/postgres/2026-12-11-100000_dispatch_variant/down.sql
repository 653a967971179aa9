ALTER TABLE dispatches DROP COLUMN variant;
