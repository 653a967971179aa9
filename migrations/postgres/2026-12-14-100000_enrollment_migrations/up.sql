-- An operator's move of a flow's running enrollments to another version (MigrateEnrollments):
-- one row per move, so it is idempotent by the caller's key, resumes after a crash from its
-- cursor, and tells afterwards who moved when. The enrollments move in batches that commit one
-- by one; each batch adds its counts here in the same transaction, so the counts are exact
-- whoever runs the batches and however often the move is resumed.
CREATE TABLE enrollment_migrations (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    flow_id TEXT NOT NULL,
    -- The caller's idempotency key (unique per account), or the migration's id when none.
    client_key TEXT NOT NULL,
    -- What was asked, normalized (JSON: from_versions, to_version, step_map): a second call
    -- with the same key and another request is refused.
    request TEXT NOT NULL,
    -- running or done.
    status TEXT NOT NULL,
    moved BIGINT NOT NULL DEFAULT 0,
    -- The groups moved so far (JSON: from_version, from_step, to_step, count, problem).
    groups TEXT NOT NULL,
    -- The last enrollment id a committed batch passed: a resumed move starts after it.
    cursor TEXT NOT NULL DEFAULT '',
    -- Who started it (the token's name or the command line).
    started_by TEXT NOT NULL,
    -- A replica running the move holds it until then; after, another one resumes it.
    lease_until BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    finished_at BIGINT
);
CREATE UNIQUE INDEX enrollment_migrations_client_key ON enrollment_migrations (account_id, client_key);
CREATE INDEX enrollment_migrations_running ON enrollment_migrations (lease_until)
    WHERE status = 'running';
