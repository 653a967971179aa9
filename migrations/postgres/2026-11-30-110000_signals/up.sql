-- Inbound signals (docs/signals.md). The `signals` table itself comes with the engine's tables;
-- this adds what routing and webhooks need. Same portable column types as before.

-- What kind of signal it is, its channel, every contact it is addressed to, and when its
-- fan-out finished (NULL: a duplicate arrival finishes it).
ALTER TABLE signals ADD COLUMN kind TEXT NOT NULL DEFAULT '';
ALTER TABLE signals ADD COLUMN channel TEXT;
ALTER TABLE signals ADD COLUMN contact_ids TEXT NOT NULL DEFAULT '[]';
ALTER TABLE signals ADD COLUMN routed_at BIGINT;
CREATE INDEX signals_contact ON signals (account_id, contact_id, created_at);

-- Which enrollments a signal reached and what it did there; written in the same transaction
-- as the enrollment's new state, so a signal is applied to an enrollment at most once.
CREATE TABLE signal_deliveries (
    signal_id     TEXT NOT NULL REFERENCES signals (id) ON DELETE CASCADE,
    enrollment_id TEXT NOT NULL REFERENCES enrollments (id) ON DELETE CASCADE,
    -- woke | buffered | exited | ignored_paused | none
    effect        TEXT NOT NULL,
    branch        TEXT,
    at            BIGINT NOT NULL,
    PRIMARY KEY (signal_id, enrollment_id)
);
CREATE INDEX signal_deliveries_enrollment ON signal_deliveries (enrollment_id);

-- Webhook signatures already used (replay refusal); kept for twice the 5-minute tolerance.
CREATE TABLE webhook_replays (
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    signature  TEXT NOT NULL,
    seen_at    BIGINT NOT NULL,
    PRIMARY KEY (account_id, signature)
);
CREATE INDEX webhook_replays_seen ON webhook_replays (seen_at);

-- Email replies are matched to their thread by the Message-ID nudge assigned.
CREATE INDEX dispatches_message_id ON dispatches (account_id, message_id) WHERE message_id IS NOT NULL;
-- Signals address contacts by email in any case.
CREATE INDEX contacts_email_lower ON contacts (account_id, lower(email));

-- Twilio signs its webhooks with the account's auth token (X-Twilio-Signature).
ALTER TABLE accounts ADD COLUMN twilio_auth_token TEXT;
