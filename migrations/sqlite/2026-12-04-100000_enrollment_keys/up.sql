-- `enrollment_keys` (see the PostgreSQL migration of the same name) is a table on PostgreSQL,
-- kept beside `enrollments` so that a step's update writes fewer index entries. SQLite's
-- single writer pays little per index, so there it is a view of `enrollments`, whose indexes
-- (contact, flow, one live, client key) stay: the same queries run on both.
CREATE VIEW enrollment_keys AS
SELECT id, account_id, contact_id, flow_id, status, client_key, allow_duplicate FROM enrollments;

-- The planner claims due enrollments by (due time, id), each claim of a drain after the last.
DROP INDEX enrollments_due;
CREATE INDEX enrollments_due ON enrollments (next_run_at, id) WHERE next_run_at IS NOT NULL;
