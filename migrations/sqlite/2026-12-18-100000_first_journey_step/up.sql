-- On PostgreSQL an enrollment's first journey step moves onto its `enrollment_keys` row (see
-- the migration of the same name there). SQLite's one writer keeps every step in
-- `journey_steps`; its keys view shows the same columns, always NULL, so the journey's readers
-- run the same queries on both.
DROP VIEW enrollment_keys;
CREATE VIEW enrollment_keys AS
SELECT id, account_id, contact_id, flow_id, status, client_key, allow_duplicate,
       CAST(NULL AS BIGINT) AS first_xid, CAST(NULL AS BIGINT) AS first_n,
       CAST(NULL AS BIGINT) AS first_at, CAST(NULL AS TEXT) AS first_entries
FROM enrollments;
