ALTER TABLE enrollments DROP COLUMN journey_xid;
