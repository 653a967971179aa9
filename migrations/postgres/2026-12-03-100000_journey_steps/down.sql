DROP VIEW journey;
CREATE TABLE journey (
    enrollment_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    at BIGINT NOT NULL,
    kind TEXT NOT NULL,
    detail TEXT NOT NULL,
    PRIMARY KEY (enrollment_id, seq)
);
CREATE TABLE journey_log (
    account_id TEXT NOT NULL,
    pos BIGINT NOT NULL,
    enrollment_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    PRIMARY KEY (account_id, pos)
);
INSERT INTO journey (enrollment_id, seq, at, kind, detail)
SELECT s.enrollment_id, s.seq + e.ord - 1, s.at, e.item ->> 0, (e.item -> 1)::text
FROM journey_steps s, json_array_elements(s.entries::json) WITH ORDINALITY AS e(item, ord);
INSERT INTO journey_log (account_id, pos, enrollment_id, seq)
SELECT s.account_id, s.last_pos - s.n + g.i, s.enrollment_id, s.seq + g.i - 1
FROM journey_steps s, generate_series(1, s.n) AS g(i)
WHERE s.last_pos > 0;
DROP TABLE journey_steps;
