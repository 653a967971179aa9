-- Watch's order without a row every writer takes in turn. Each journey row carries the id of
-- the transaction that wrote it (`pg_current_xact_id()`, or the enrollment's previous row's
-- when that is higher, so an enrollment's entries keep their order); a Watch cursor is
-- (xid, enrollment_id, seq), and a reader returns only rows whose xid is below the oldest
-- transaction still running (`pg_snapshot_xmin`), read in the same statement: below it, every
-- writer has finished, so nothing new can appear behind a cursor.
--
-- Rows written before keep their old position in `last_pos`, so a cursor handed out then is
-- still read as the entry it named; their xid is that position moved below every transaction
-- id (2^62 below), which keeps them first and in their old order.
ALTER TABLE journey_steps ADD COLUMN xid BIGINT;
UPDATE journey_steps SET xid = last_pos - 4611686018427387904;
ALTER TABLE journey_steps ALTER COLUMN xid SET NOT NULL;
ALTER TABLE journey_steps ALTER COLUMN last_pos DROP NOT NULL;
DROP INDEX journey_steps_by_pos;
CREATE INDEX journey_steps_by_pos ON journey_steps (account_id, last_pos) WHERE last_pos IS NOT NULL;
CREATE INDEX journey_steps_by_xid ON journey_steps (account_id, xid, enrollment_id, seq);
DROP TABLE journey_heads;
