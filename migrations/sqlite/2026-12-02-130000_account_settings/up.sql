-- AccountService: the hosts a `fetch` step may call (docs/security.md), as a JSON list of
-- {"host", "port", "allow_private"} entries, and the quiet-hours policy (docs/timing.md) as JSON.
-- Both NULL for an account that never set them: no host is allowed, the federal policy applies.
ALTER TABLE accounts ADD COLUMN fetch_allow TEXT;
ALTER TABLE accounts ADD COLUMN quiet_hours TEXT;
