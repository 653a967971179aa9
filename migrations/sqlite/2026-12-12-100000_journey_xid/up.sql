-- The Watch key of an enrollment's last journey row (PostgreSQL's writers keep it; SQLite's one
-- writer keys rows in commit order and needs no hint, so here it stays 0).
ALTER TABLE enrollments ADD COLUMN journey_xid BIGINT NOT NULL DEFAULT 0;
