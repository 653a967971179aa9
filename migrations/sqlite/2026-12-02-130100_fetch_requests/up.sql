-- The fetch outbox (docs/flows.md): one row per attempt, written in the transaction that records
-- the attempt; a worker leases it, makes the request outside any transaction, and applies the
-- answer (and marks the row done) in another. A lease that runs out (a crash mid-request) is
-- claimed again: the same attempt, the same Idempotency-Key (the id).
CREATE TABLE fetch_requests (
    id TEXT PRIMARY KEY NOT NULL,
    account_id TEXT NOT NULL,
    enrollment_id TEXT NOT NULL,
    run BIGINT NOT NULL,
    attempt INTEGER NOT NULL,
    request TEXT NOT NULL,
    status TEXT NOT NULL,
    lease_until BIGINT,
    created_at BIGINT NOT NULL
);
CREATE INDEX fetch_requests_pending ON fetch_requests (status, lease_until);
