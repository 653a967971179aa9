ALTER TABLE contacts DROP COLUMN country;
