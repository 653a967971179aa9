-- One row per step instead of one per entry: a planner step writes about five
-- journey entries, and as five rows (plus five Watch log rows) they were most of the step's
-- writes. A row now holds the entries one step wrote to one enrollment, in order: `entries` is
-- a JSON array of `[kind, detail]` pairs, entry `i` (from 0) has seq `seq + i`, and `last_pos`
-- is the Watch position of the last entry (the first is `last_pos - n + 1`). The view
-- `journey` shows them one entry per row, as the table of that name did.
CREATE TABLE journey_steps (
    enrollment_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    n BIGINT NOT NULL CHECK (n > 0),
    at BIGINT NOT NULL,
    account_id TEXT NOT NULL,
    last_pos BIGINT NOT NULL,
    entries TEXT NOT NULL,
    PRIMARY KEY (enrollment_id, seq)
);
CREATE UNIQUE INDEX journey_steps_by_pos ON journey_steps (account_id, last_pos);

-- What is stored moves over as one-entry rows at the positions it had (an entry without one
-- gets a negative position, which no cursor reaches, as no Watch reached it).
INSERT INTO journey_steps (enrollment_id, seq, n, at, account_id, last_pos, entries)
SELECT j.enrollment_id, j.seq, 1, j.at, e.account_id,
       COALESCE(l.pos, -ROW_NUMBER() OVER (ORDER BY j.enrollment_id, j.seq)),
       '[[' || json_quote(j.kind) || ',' || j.detail || ']]'
FROM journey j
JOIN enrollments e ON e.id = j.enrollment_id
LEFT JOIN journey_log l ON l.enrollment_id = j.enrollment_id AND l.seq = j.seq;

DROP TABLE journey_log;
DROP TABLE journey;

CREATE VIEW journey AS
SELECT s.enrollment_id, s.seq + j.key AS seq, s.at,
       json_extract(j.value, '$[0]') AS kind, json_extract(j.value, '$[1]') AS detail
FROM journey_steps s, json_each(s.entries) j;
