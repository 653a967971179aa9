-- The engine's tables: enrollments (the planner's key is next_run_at), their journey, the
-- dispatch outbox, tasks, and stored signals. Same portable column types as the
-- foundation (ids TEXT, instants BIGINT epoch ms UTC, JSON TEXT), so one diesel schema serves
-- both backends. Runs are not a table: the current run lives in `state`, and every run's
-- opening and closing is a journey entry (so what a run did is answered from the journey alone).

CREATE TABLE enrollments (
    id            TEXT PRIMARY KEY,
    account_id    TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    flow_id       TEXT NOT NULL,
    flow_version  INTEGER NOT NULL,
    contact_id    TEXT NOT NULL,
    sender_id     TEXT NOT NULL,
    -- active | paused | completed | exited | failed (mirrors state.status for filtering).
    status        TEXT NOT NULL,
    -- The caller's idempotency key for Enroll; NULLs never collide.
    client_key    TEXT,
    -- The engine's EnrollmentState as JSON.
    state         TEXT NOT NULL,
    -- When the planner must wake it; NULL while paused, waiting on a signal only, or finished.
    next_run_at   BIGINT,
    -- The last journey seq written, so appends need no MAX() query.
    journey_seq   BIGINT NOT NULL DEFAULT 0,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL,
    FOREIGN KEY (flow_id, flow_version) REFERENCES flow_versions (flow_id, version),
    FOREIGN KEY (account_id, contact_id) REFERENCES contacts (account_id, id),
    UNIQUE (account_id, client_key)
);
-- The planner's claim query: only rows that have a wake time are indexed.
CREATE INDEX enrollments_due ON enrollments (next_run_at) WHERE next_run_at IS NOT NULL;
CREATE INDEX enrollments_contact ON enrollments (account_id, contact_id, status);
CREATE INDEX enrollments_flow ON enrollments (account_id, flow_id, status, id);

-- Append-only, ordered by seq within an enrollment.
CREATE TABLE journey (
    enrollment_id TEXT NOT NULL REFERENCES enrollments (id) ON DELETE CASCADE,
    seq           BIGINT NOT NULL,
    at            BIGINT NOT NULL,
    -- enrolled, run_opened, run_closed, dispatch, task_created, signal, paused, … (the engine's
    -- effect or journey entry name).
    kind          TEXT NOT NULL,
    detail        TEXT NOT NULL,
    PRIMARY KEY (enrollment_id, seq)
);

-- The outbox: written in the same transaction as the step transition; created exactly once
-- (idempotency_key = enrollment:run), delivered at least once (leases).
CREATE TABLE dispatches (
    id                  TEXT PRIMARY KEY,
    account_id          TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    enrollment_id       TEXT NOT NULL REFERENCES enrollments (id) ON DELETE CASCADE,
    run                 BIGINT NOT NULL,
    step                TEXT NOT NULL,
    idempotency_key     TEXT NOT NULL UNIQUE,
    channel             TEXT NOT NULL,
    recipient           TEXT NOT NULL,
    template            TEXT NOT NULL,
    input               TEXT NOT NULL,
    -- The step's params.channel (e.g. a subject line) as JSON, copied for the delivery side.
    channel_params      TEXT,
    message_id          TEXT,
    -- pending | sent | failed | held
    status              TEXT NOT NULL,
    lease_owner         TEXT,
    lease_until         BIGINT,
    attempts            INTEGER NOT NULL DEFAULT 0,
    provider_message_id TEXT,
    failure             TEXT,
    created_at          BIGINT NOT NULL,
    due_at              BIGINT NOT NULL
);
CREATE INDEX dispatches_claim ON dispatches (account_id, due_at) WHERE status = 'pending';
CREATE INDEX dispatches_enrollment ON dispatches (enrollment_id, run);

CREATE TABLE tasks (
    id            TEXT PRIMARY KEY,
    account_id    TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    enrollment_id TEXT NOT NULL REFERENCES enrollments (id) ON DELETE CASCADE,
    run           BIGINT NOT NULL,
    kind          TEXT NOT NULL,
    step          TEXT NOT NULL,
    -- open | completed | closed (the run ended another way: timeout, exit, moved)
    status        TEXT NOT NULL,
    outcome       TEXT,
    params        TEXT NOT NULL,
    due_by        BIGINT,
    created_at    BIGINT NOT NULL,
    completed_at  BIGINT,
    UNIQUE (enrollment_id, run)
);
CREATE INDEX tasks_open ON tasks (account_id, status, created_at);

-- Every signal, stored once (deduplicated by provider id when there is one), before it is routed.
CREATE TABLE signals (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    contact_id  TEXT NOT NULL,
    -- task_outcome, reply, event, … (what reported it).
    source      TEXT NOT NULL,
    provider_id TEXT,
    -- JSON array of the events it raises.
    raises      TEXT NOT NULL,
    payload     TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    UNIQUE (account_id, provider_id)
);
