DROP INDEX enrollments_one_live;
ALTER TABLE enrollments DROP COLUMN allow_duplicate;
