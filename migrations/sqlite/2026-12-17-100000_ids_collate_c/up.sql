-- On PostgreSQL identifiers move to collation "C" (see the migration of the same name there).
-- SQLite compares text bytewise already (its BINARY collation): nothing changes.
SELECT 1;
