-- Positions again, numbered in xid order after the old ones.
DROP VIEW journey;
CREATE TABLE journey_heads (
    account_id TEXT PRIMARY KEY,
    pos BIGINT NOT NULL
);
CREATE TEMP TABLE numbered AS
SELECT j.enrollment_id, j.seq,
       COALESCE(b.pos, 0) + SUM(j.n) OVER (PARTITION BY j.account_id ORDER BY j.xid, j.enrollment_id, j.seq) AS pos
FROM journey_steps j
LEFT JOIN (SELECT account_id, MAX(last_pos) AS pos FROM journey_steps GROUP BY account_id) b
  ON b.account_id = j.account_id
WHERE j.last_pos IS NULL;
UPDATE journey_steps SET last_pos = (
    SELECT pos FROM numbered n WHERE n.enrollment_id = journey_steps.enrollment_id AND n.seq = journey_steps.seq
) WHERE last_pos IS NULL;
DROP TABLE numbered;
INSERT INTO journey_heads (account_id, pos)
SELECT account_id, MAX(last_pos) FROM journey_steps GROUP BY account_id;
CREATE TABLE journey_steps_old (
    enrollment_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    n BIGINT NOT NULL CHECK (n > 0),
    at BIGINT NOT NULL,
    account_id TEXT NOT NULL,
    last_pos BIGINT NOT NULL,
    entries TEXT NOT NULL,
    PRIMARY KEY (enrollment_id, seq)
);
INSERT INTO journey_steps_old SELECT enrollment_id, seq, n, at, account_id, last_pos, entries FROM journey_steps;
DROP TABLE journey_steps;
ALTER TABLE journey_steps_old RENAME TO journey_steps;
CREATE UNIQUE INDEX journey_steps_by_pos ON journey_steps (account_id, last_pos);
CREATE VIEW journey AS
SELECT s.enrollment_id, s.seq + j.key AS seq, s.at,
       json_extract(j.value, '$[0]') AS kind, json_extract(j.value, '$[1]') AS detail
FROM journey_steps s, json_each(s.entries) j;
