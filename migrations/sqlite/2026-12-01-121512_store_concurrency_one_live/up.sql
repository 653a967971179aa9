-- "One active enrollment of a contact in a flow" as a unique index (see the PostgreSQL
-- migration of the same name for why). SQLite has one writer per database, but several
-- processes may still share a file.
ALTER TABLE enrollments ADD COLUMN allow_duplicate BOOLEAN NOT NULL DEFAULT 0;
UPDATE enrollments SET allow_duplicate = 1
WHERE status IN ('active', 'paused') AND EXISTS (
    SELECT 1 FROM enrollments o
    WHERE o.account_id = enrollments.account_id AND o.contact_id = enrollments.contact_id
      AND o.flow_id = enrollments.flow_id AND o.status IN ('active', 'paused')
      AND (o.created_at, o.id) < (enrollments.created_at, enrollments.id));
CREATE UNIQUE INDEX enrollments_one_live ON enrollments (account_id, contact_id, flow_id)
    WHERE status IN ('active', 'paused') AND allow_duplicate = 0;
