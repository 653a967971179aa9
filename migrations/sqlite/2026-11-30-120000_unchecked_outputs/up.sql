-- The journey and the dispatch outbox lose their foreign keys, as on PostgreSQL (see the
-- PostgreSQL migration of the same name for why). SQLite cannot drop a constraint, so both
-- tables are rebuilt with the same columns and indexes.
CREATE TABLE journey_new (
    enrollment_id TEXT NOT NULL,
    seq           BIGINT NOT NULL,
    at            BIGINT NOT NULL,
    kind          TEXT NOT NULL,
    detail        TEXT NOT NULL,
    PRIMARY KEY (enrollment_id, seq)
);
INSERT INTO journey_new SELECT enrollment_id, seq, at, kind, detail FROM journey;
DROP TABLE journey;
ALTER TABLE journey_new RENAME TO journey;

CREATE TABLE dispatches_new (
    id                  TEXT PRIMARY KEY,
    account_id          TEXT NOT NULL,
    enrollment_id       TEXT NOT NULL,
    run                 BIGINT NOT NULL,
    step                TEXT NOT NULL,
    idempotency_key     TEXT NOT NULL UNIQUE,
    channel             TEXT NOT NULL,
    recipient           TEXT NOT NULL,
    template            TEXT NOT NULL,
    input               TEXT NOT NULL,
    channel_params      TEXT,
    message_id          TEXT,
    status              TEXT NOT NULL,
    lease_owner         TEXT,
    lease_until         BIGINT,
    attempts            INTEGER NOT NULL DEFAULT 0,
    provider_message_id TEXT,
    failure             TEXT,
    created_at          BIGINT NOT NULL,
    due_at              BIGINT NOT NULL
);
INSERT INTO dispatches_new SELECT id, account_id, enrollment_id, run, step, idempotency_key,
    channel, recipient, template, input, channel_params, message_id, status, lease_owner,
    lease_until, attempts, provider_message_id, failure, created_at, due_at FROM dispatches;
DROP TABLE dispatches;
ALTER TABLE dispatches_new RENAME TO dispatches;
CREATE INDEX dispatches_claim ON dispatches (account_id, due_at) WHERE status = 'pending';
CREATE INDEX dispatches_enrollment ON dispatches (enrollment_id, run);
CREATE INDEX dispatches_message_id ON dispatches (account_id, message_id) WHERE message_id IS NOT NULL;
