-- First journey steps go back to rows of their own.
DROP VIEW journey;
INSERT INTO journey_steps (enrollment_id, seq, n, at, account_id, xid, entries)
SELECT id, 1, first_n, first_at, account_id, first_xid, first_entries
FROM enrollment_keys WHERE first_xid IS NOT NULL;
DROP INDEX enrollment_keys_by_xid;
ALTER TABLE enrollment_keys
    DROP COLUMN first_xid,
    DROP COLUMN first_n,
    DROP COLUMN first_at,
    DROP COLUMN first_entries;
CREATE VIEW journey AS
SELECT s.enrollment_id, s.seq + e.ord - 1 AS seq, s.at,
       e.item ->> 0 AS kind, (e.item -> 1)::text AS detail
FROM journey_steps s, json_array_elements(s.entries::json) WITH ORDINALITY AS e(item, ord);
