DROP INDEX enrollments_due;
CREATE INDEX enrollments_due ON enrollments (next_run_at) WHERE next_run_at IS NOT NULL;
DROP VIEW enrollment_keys;
