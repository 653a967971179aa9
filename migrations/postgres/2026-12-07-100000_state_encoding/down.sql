-- Back to text: only states still in JSON survive (a MessagePack state is not UTF-8 text);
-- run it only on a store whose states have not stepped since the upgrade.
ALTER TABLE enrollments ALTER COLUMN state TYPE TEXT USING convert_from(state, 'UTF8');
