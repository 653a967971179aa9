-- Nothing changes on SQLite, which has no fillfactor. On PostgreSQL this migration leaves room
-- on the dispatch and enrollment pages for HOT updates. The migration exists so both backends
-- list the same versions.
SELECT 1;
