-- The foundation tables. Column types are kept portable so one diesel schema serves PostgreSQL
-- and SQLite: ids TEXT, instants BIGINT epoch milliseconds UTC, JSON as TEXT, flags BOOLEAN.

CREATE TABLE accounts (
    id                TEXT PRIMARY KEY,
    name              TEXT NOT NULL,
    -- Plan limit on the longest wait (`max_wait`), a duration such as `7d`; NULL means no limit.
    max_wait          TEXT,
    webhook_secret    TEXT NOT NULL,
    default_sender_id TEXT,
    created_at        BIGINT NOT NULL
);

CREATE TABLE api_tokens (
    id         TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    -- Hex SHA-256 of the token: the token itself is never stored.
    hash       TEXT NOT NULL UNIQUE,
    -- `full` or `enrollment:<id>`.
    scope      TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE contacts (
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    id         TEXT NOT NULL,
    email      TEXT,
    phone      TEXT,
    tz         TEXT,
    attributes TEXT NOT NULL DEFAULT '{}',
    -- JSON array of channel names, sorted.
    opted_out  TEXT NOT NULL DEFAULT '[]',
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (account_id, id)
);
-- Signals address a contact by email or phone (docs/signals.md, "Routing, with examples").
CREATE INDEX contacts_email ON contacts (account_id, email);
CREATE INDEX contacts_phone ON contacts (account_id, phone);

CREATE TABLE senders (
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    id         TEXT NOT NULL,
    email      TEXT,
    tz         TEXT NOT NULL,
    calendar   TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (account_id, id)
);

CREATE TABLE flows (
    id             TEXT PRIMARY KEY,
    account_id     TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name           TEXT NOT NULL,
    latest_version INTEGER NOT NULL,
    created_at     BIGINT NOT NULL,
    UNIQUE (account_id, name)
);

-- Immutable: a row is written once and never updated (enrollments point at a version).
CREATE TABLE flow_versions (
    flow_id    TEXT NOT NULL REFERENCES flows (id) ON DELETE CASCADE,
    version    INTEGER NOT NULL,
    definition TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (flow_id, version)
);
