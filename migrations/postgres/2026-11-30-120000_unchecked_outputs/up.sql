-- The journey and the dispatch outbox lose their foreign keys. Both are written only by the
-- engine's writer (`write_all!`), in the same transaction that locks and updates the enrollment
-- they belong to, and nothing deletes enrollments or accounts, so the keys could never fail.
-- PostgreSQL checks each with a trigger per inserted row: with five journey rows and one
-- dispatch per planner step, the checks took 60 % of the journey insert and 40 % of the
-- dispatch insert (EXPLAIN ANALYZE of a 1,000-step batch; docs/benchmarks.md).
ALTER TABLE journey DROP CONSTRAINT journey_enrollment_id_fkey;
ALTER TABLE dispatches DROP CONSTRAINT dispatches_enrollment_id_fkey;
ALTER TABLE dispatches DROP CONSTRAINT dispatches_account_id_fkey;
