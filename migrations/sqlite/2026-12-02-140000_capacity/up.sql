-- A sender's caps per channel (the validated `caps` document as JSON; NULL: no caps),
-- and the capacity ledger: one row per reserved send or created task of a capped sender,
-- written in the transaction that writes the dispatch or task (key = its idempotency key, so a
-- re-processed step never counts twice). A dispatch acked as failed deletes its row.
ALTER TABLE senders ADD COLUMN caps TEXT;
CREATE TABLE capacity_ledger (
    key TEXT PRIMARY KEY NOT NULL,
    account_id TEXT NOT NULL,
    sender_id TEXT NOT NULL,
    channel TEXT NOT NULL,
    at BIGINT NOT NULL,
    domain TEXT,
    gap_until BIGINT NOT NULL
);
CREATE INDEX capacity_ledger_sender ON capacity_ledger (account_id, sender_id, at);
