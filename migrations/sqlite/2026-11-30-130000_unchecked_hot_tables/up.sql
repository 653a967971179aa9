-- Nothing changes on SQLite. On PostgreSQL this migration drops the foreign keys of the
-- enrollment, task, signal and delivery tables (a trigger lookup per written row) and makes
-- the client-key index partial. SQLite checks a key with a cheap in-process lookup, and
-- dropping one means rebuilding the table; for `enrollments`, whose children cascade on
-- delete, a rebuild would delete their rows. The migration exists so both backends list the
-- same versions.
SELECT 1;
