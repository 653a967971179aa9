-- AccountService (SPEC §7): the hosts a `fetch` step may call, as a JSON list of
-- {"host", "port", "allow_private"} entries, and the quiet-hours policy (SPEC §11) as JSON.
-- Both NULL for an account that never set them: no host is allowed, the federal policy applies.
ALTER TABLE accounts ADD COLUMN fetch_allow TEXT;
ALTER TABLE accounts ADD COLUMN quiet_hours TEXT;
