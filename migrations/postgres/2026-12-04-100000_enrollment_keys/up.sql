-- What an enrollment is found by moves out of its hot row.
--
-- A planner step rewrites its enrollment's row (the state, the next wake), and PostgreSQL writes
-- a new entry into every index of a row it rewrites unless no indexed column changed (a HOT
-- update); the wake time is indexed, so every step wrote five index entries, one per index,
-- though only the wake time had moved. `enrollments` now keeps two indexes (the key and the
-- wake time) and `enrollment_keys` holds the rest: a narrow copy of the columns enrollments are
-- looked up by (contact, flow, status, client key), written when an enrollment is made and
-- again only when its status changes (Tx::write_all). A step that only moves the state writes
-- two index entries instead of five; measured, the step's share of the enrollment write fell
-- from about 45 to about 22 µs (docs/benchmarks.md).
--
-- The columns stay on `enrollments` too (every reader of a row gets them); the writer keeps the
-- two in one transaction.
CREATE TABLE enrollment_keys (
    id              TEXT PRIMARY KEY,
    account_id      TEXT NOT NULL,
    contact_id      TEXT NOT NULL,
    flow_id         TEXT NOT NULL,
    status          TEXT NOT NULL,
    client_key      TEXT,
    allow_duplicate BOOLEAN NOT NULL
);
-- Keyed by the enrollment's id, so a status change updates its row with one probe whatever the
-- data. Found through the flow or contact index instead, PostgreSQL (without statistics on a
-- young table) chose the contact index and walked every enrollment of the contact in the flow:
-- 4 to 6 s for a batch of 1,000 completions of one contact's 20,000 enrollments.

INSERT INTO enrollment_keys (id, account_id, contact_id, flow_id, status, client_key, allow_duplicate)
SELECT id, account_id, contact_id, flow_id, status, client_key, allow_duplicate FROM enrollments;

-- A contact's enrollments (signals reach them, BatchEnroll checks duplicates, listings filter by
-- contact), and "one live enrollment of a contact in a flow" in the same index: the
-- last column is TRUE for a live enrollment that was not enrolled with allow_duplicate and NULL
-- otherwise, and NULLs never collide, so only the live ones are unique per (contact, flow).
CREATE UNIQUE INDEX enrollment_keys_contact ON enrollment_keys (account_id, contact_id, flow_id,
    (CASE WHEN status IN ('active', 'paused') AND NOT allow_duplicate THEN TRUE END));
-- A flow's enrollments, by status, in id order (ListEnrollments).
CREATE INDEX enrollment_keys_flow ON enrollment_keys (account_id, flow_id, status, id);
-- Client keys are unique per account; most enrollments have none.
CREATE UNIQUE INDEX enrollment_keys_client_key ON enrollment_keys (account_id, client_key)
    WHERE client_key IS NOT NULL;

DROP INDEX enrollments_contact;
DROP INDEX enrollments_flow;
DROP INDEX enrollments_one_live;
DROP INDEX enrollments_client_key;

-- Half of each page is kept free for the next versions of its rows. An enrollment's row is
-- written again at every step, and a new version that does not fit on its page goes to another
-- one, which costs PostgreSQL an extra WAL record (the old version is locked first) and the
-- whole row in the log; on the same page only the changed bytes are logged. Enrollments made
-- together (one BatchEnroll, one campaign) share pages and come due together, so a batch
-- rewrites whole pages at once: at fill factor 50 a page has room for a new version of every
-- row on it (measured on a batch of 1,000 steps: no lock records instead of 1,000, 525 kB of WAL
-- instead of 940 kB). Pages already written keep their rows until they are rewritten.
ALTER TABLE enrollments SET (fillfactor = 50);

-- The planner claims due enrollments by (due time, id): the batches of one drain each claim after
-- where the previous claim ended, instead of walking over the rows their siblings hold.
DROP INDEX enrollments_due;
CREATE INDEX enrollments_due ON enrollments (next_run_at, id) WHERE next_run_at IS NOT NULL;

-- The outbox keeps the indexes its writers and the delivery side need. A dispatch's key is
-- `enrollment:run`, so the key's unique index also finds an enrollment's dispatches
-- (a range of keys: the column sorts bytewise) and the dispatch of a reply's Message-ID
-- (`<enrollment.run@nudge>`, which names the same key); held and failed dispatches, the ones
-- an operator lists by status, have a small index of their own.
ALTER TABLE dispatches ALTER COLUMN idempotency_key TYPE TEXT COLLATE "C";
DROP INDEX dispatches_enrollment;
DROP INDEX dispatches_message_id;
DROP INDEX dispatches_status;
CREATE INDEX dispatches_held ON dispatches (account_id, status, id)
    WHERE status IN ('held', 'failed');
