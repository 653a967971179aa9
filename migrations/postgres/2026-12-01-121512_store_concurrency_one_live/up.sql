-- "One active enrollment of a contact in a flow" as a unique index, not only a check
-- before the insert: two concurrent Enroll calls both passed the check and both inserted.
-- `allow_duplicate` records that the caller asked for a second live enrollment; those rows stay
-- outside the index, so allowed duplicates still enroll.
ALTER TABLE enrollments ADD COLUMN allow_duplicate BOOLEAN NOT NULL DEFAULT FALSE;
-- Duplicates stored before this index (allowed ones, or ones that raced in) are kept: every
-- live enrollment but the oldest of its (account, contact, flow) is marked as allowed.
UPDATE enrollments e SET allow_duplicate = TRUE
WHERE e.status IN ('active', 'paused') AND EXISTS (
    SELECT 1 FROM enrollments o
    WHERE o.account_id = e.account_id AND o.contact_id = e.contact_id AND o.flow_id = e.flow_id
      AND o.status IN ('active', 'paused') AND (o.created_at, o.id) < (e.created_at, e.id));
CREATE UNIQUE INDEX enrollments_one_live ON enrollments (account_id, contact_id, flow_id)
    WHERE status IN ('active', 'paused') AND NOT allow_duplicate;
