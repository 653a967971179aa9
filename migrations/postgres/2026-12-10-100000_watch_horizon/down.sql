-- Positions again, numbered in the order the horizon gave (old rows keep theirs).
CREATE TABLE journey_heads (
    account_id TEXT PRIMARY KEY,
    pos BIGINT NOT NULL
);
WITH base AS (SELECT account_id, COALESCE(MAX(last_pos), 0) AS pos FROM journey_steps GROUP BY account_id),
numbered AS (
    SELECT j.enrollment_id, j.seq, b.pos + SUM(j.n) OVER (PARTITION BY j.account_id ORDER BY j.xid, j.enrollment_id, j.seq) AS last_pos
    FROM journey_steps j JOIN base b ON b.account_id = j.account_id
    WHERE j.last_pos IS NULL
)
UPDATE journey_steps j SET last_pos = n.last_pos FROM numbered n
WHERE j.enrollment_id = n.enrollment_id AND j.seq = n.seq;
INSERT INTO journey_heads (account_id, pos)
SELECT account_id, MAX(last_pos) FROM journey_steps GROUP BY account_id;
DROP INDEX journey_steps_by_xid;
DROP INDEX journey_steps_by_pos;
ALTER TABLE journey_steps ALTER COLUMN last_pos SET NOT NULL;
CREATE UNIQUE INDEX journey_steps_by_pos ON journey_steps (account_id, last_pos);
ALTER TABLE journey_steps DROP COLUMN xid;
