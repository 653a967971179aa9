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
SELECT s.enrollment_id, s.seq + j.key, s.at, json_extract(j.value, '$[0]'),
       json_extract(j.value, '$[1]')
FROM journey_steps s, json_each(s.entries) j;
INSERT INTO journey_log (account_id, pos, enrollment_id, seq)
SELECT s.account_id, s.last_pos - s.n + 1 + j.key, s.enrollment_id, s.seq + j.key
FROM journey_steps s, json_each(s.entries) j
WHERE s.last_pos > 0;
DROP TABLE journey_steps;
