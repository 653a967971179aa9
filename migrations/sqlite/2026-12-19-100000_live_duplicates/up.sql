-- The live enrollments made with `allow_duplicate`, by flow: usually none (see the migration of
-- the same name for PostgreSQL). While a flow has none, the unique index
-- `enrollments_one_live` alone refuses every duplicate, and enrolling writes without reading
-- the contacts' live enrollments first.
CREATE INDEX enrollments_live_duplicates ON enrollments (account_id, flow_id)
    WHERE allow_duplicate AND status IN ('active', 'paused');
