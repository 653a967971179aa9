-- Watch's order without a head row. SQLite has one writer at a time, so the "transaction id"
-- of a journey row is simply one more than the account's highest when it is written: commit
-- order. (PostgreSQL stores the writer's transaction id and reads below the oldest one still
-- running.) A Watch cursor is (xid, enrollment_id, seq).
--
-- Rows written before keep their old position in `last_pos`, so a cursor handed out then is
-- still read as the entry it named; their xid is that position moved 2^62 below zero, which
-- keeps them first and in their old order.
DROP VIEW journey;
CREATE TABLE journey_steps_new (
    enrollment_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    n BIGINT NOT NULL CHECK (n > 0),
    at BIGINT NOT NULL,
    account_id TEXT NOT NULL,
    last_pos BIGINT,
    entries TEXT NOT NULL,
    xid BIGINT NOT NULL,
    PRIMARY KEY (enrollment_id, seq)
);
INSERT INTO journey_steps_new (enrollment_id, seq, n, at, account_id, last_pos, entries, xid)
SELECT enrollment_id, seq, n, at, account_id, last_pos, entries, last_pos - 4611686018427387904
FROM journey_steps;
DROP TABLE journey_steps;
ALTER TABLE journey_steps_new RENAME TO journey_steps;
CREATE INDEX journey_steps_by_pos ON journey_steps (account_id, last_pos) WHERE last_pos IS NOT NULL;
CREATE INDEX journey_steps_by_xid ON journey_steps (account_id, xid, enrollment_id, seq);
DROP TABLE journey_heads;
CREATE VIEW journey AS
SELECT s.enrollment_id, s.seq + j.key AS seq, s.at,
       json_extract(j.value, '$[0]') AS kind, json_extract(j.value, '$[1]') AS detail
FROM journey_steps s, json_each(s.entries) j;
