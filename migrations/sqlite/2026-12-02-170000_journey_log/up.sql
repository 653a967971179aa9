-- Watch: every journey entry's place in its account's one commit order. A writer
-- takes its account's head row (upsert, row-locked until commit) as its last statement, so
-- positions are handed out in commit order and a reader never sees a later position before an
-- earlier one: no gap is ever filled after it was read past.
CREATE TABLE journey_heads (
    account_id TEXT PRIMARY KEY,
    pos BIGINT NOT NULL
);
CREATE TABLE journey_log (
    account_id TEXT NOT NULL,
    pos BIGINT NOT NULL,
    enrollment_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    PRIMARY KEY (account_id, pos)
);
-- Entries written before this migration, numbered in (at, enrollment, seq) order.
INSERT INTO journey_log (account_id, pos, enrollment_id, seq)
SELECT e.account_id,
       ROW_NUMBER() OVER (PARTITION BY e.account_id ORDER BY j.at, j.enrollment_id, j.seq),
       j.enrollment_id, j.seq
FROM journey j JOIN enrollments e ON e.id = j.enrollment_id;
INSERT INTO journey_heads (account_id, pos)
SELECT account_id, MAX(pos) FROM journey_log GROUP BY account_id;
