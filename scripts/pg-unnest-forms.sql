-- The two ways to turn bound arrays into rows, timed on the outbox's real columns and indexes
-- (docs/benchmarks.md, "What bounds it": BatchEnroll). Run it on a database a `nudge-bench` run left
-- (it needs 1,000 rows in `dispatches`):
--
--   psql -h 127.0.0.1 -U postgres -d BENCH_DB -f scripts/pg-unnest-forms.sql
--
-- Each `SELECT run_ins(...)` inserts 100 batches of 1,000 rows, the arrays passed as
-- parameters as `store::pg_batch` binds them: form 1 is `FROM unnest($1, …, $21)` (ROWS FROM,
-- each array copied into a tuplestore first), form 2 is `SELECT unnest($1), …, unnest($21)`
-- (ProjectSet, streamed). The two forms alternate, on emptied copies of the table, three times.
-- It creates and drops its own tables (unnest_d1, unnest_d2, unnest_arrs) and function.
\set ON_ERROR_STOP on
DROP TABLE IF EXISTS unnest_d1, unnest_d2, unnest_arrs;
CREATE TABLE unnest_d1 (LIKE dispatches INCLUDING ALL);
CREATE TABLE unnest_d2 (LIKE dispatches INCLUDING ALL);
CREATE TABLE unnest_arrs AS SELECT array_agg(id) id, array_agg(account_id) acc,
    array_agg(enrollment_id) en, array_agg(run) run, array_agg(step) step,
    array_agg(idempotency_key) ik, array_agg(channel) ch, array_agg(recipient) rc,
    array_agg(template) tp, array_agg(input) inp, array_agg(channel_params) cp,
    array_agg(message_id) mid, array_agg(status) st, array_agg(lease_owner) lo,
    array_agg(lease_until) lu, array_agg(attempts) att, array_agg(provider_message_id) pm,
    array_agg(failure) f, array_agg(created_at) ca, array_agg(due_at) da, array_agg(hold_code) hc
FROM (SELECT * FROM dispatches LIMIT 1000) x;

CREATE OR REPLACE FUNCTION run_ins(tbl text, form int, reps int) RETURNS void AS $$
DECLARE r record; i int; sql text;
BEGIN
  SELECT * INTO r FROM unnest_arrs;
  IF form = 1 THEN
    sql := 'INSERT INTO %I SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int8[], '
        || '$5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], '
        || '$12::text[], $13::text[], $14::text[], $15::int8[], $16::int4[], $17::text[], '
        || '$18::text[], $19::int8[], $20::int8[], $21::text[])';
  ELSE
    sql := 'INSERT INTO %I SELECT unnest($1::text[]), unnest($2::text[]), unnest($3::text[]), '
        || 'unnest($4::int8[]), unnest($5::text[]), unnest($6::text[]), unnest($7::text[]), '
        || 'unnest($8::text[]), unnest($9::text[]), unnest($10::text[]), unnest($11::text[]), '
        || 'unnest($12::text[]), unnest($13::text[]), unnest($14::text[]), unnest($15::int8[]), '
        || 'unnest($16::int4[]), unnest($17::text[]), unnest($18::text[]), unnest($19::int8[]), '
        || 'unnest($20::int8[]), unnest($21::text[])';
  END IF;
  FOR i IN 1..reps LOOP
    -- Fresh keys each batch (both are unique).
    EXECUTE format(sql, tbl)
    USING array(SELECT x || ':' || i FROM unnest(r.id) x), r.acc, r.en, r.run, r.step,
      array(SELECT x || ':' || i FROM unnest(r.ik) x), r.ch, r.rc, r.tp, r.inp, r.cp, r.mid,
      r.st, r.lo, r.lu, r.att, r.pm, r.f, r.ca, r.da, r.hc;
  END LOOP;
END $$ LANGUAGE plpgsql;

\timing on
\echo from unnest (ROWS FROM), then select-list unnest
TRUNCATE unnest_d1, unnest_d2;
SELECT run_ins('unnest_d1', 1, 100);
SELECT run_ins('unnest_d2', 2, 100);
\echo select-list unnest, then from unnest
TRUNCATE unnest_d1, unnest_d2;
SELECT run_ins('unnest_d2', 2, 100);
SELECT run_ins('unnest_d1', 1, 100);
\echo from unnest, then select-list unnest
TRUNCATE unnest_d1, unnest_d2;
SELECT run_ins('unnest_d1', 1, 100);
SELECT run_ins('unnest_d2', 2, 100);
\timing off
DROP FUNCTION run_ins(text, int, int);
DROP TABLE unnest_d1, unnest_d2, unnest_arrs;
