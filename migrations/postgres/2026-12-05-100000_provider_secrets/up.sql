-- The secrets each provider's own webhook is checked with: one row per account and
-- provider (`mailgun`, `sendgrid`, `sendgrid-events`, `postmark`, `ses`, `calendly`, `calcom`,
-- `twilio`). Set with `nudge provider-secret set` or AccountService.SetProviderSecret, never
-- shown back. The Twilio auth token, so far a column of `accounts`, moves here: one place for
-- every provider's secret.
CREATE TABLE provider_secrets (
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    provider   TEXT NOT NULL,
    secret     TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (account_id, provider)
);
INSERT INTO provider_secrets (account_id, provider, secret, updated_at)
    SELECT id, 'twilio', twilio_auth_token, created_at FROM accounts
    WHERE twilio_auth_token IS NOT NULL;
ALTER TABLE accounts DROP COLUMN twilio_auth_token;

-- A completed call lasting at least this long (a duration, `30s`) is a connected call
-- (`call_connected`); NULL: the default, 30 s.
ALTER TABLE accounts ADD COLUMN call_connected_threshold TEXT;

-- A provider's delivery event (a bounce, a Twilio status) finds its dispatch by the id the
-- provider gave it, which AckDispatch recorded.
CREATE INDEX dispatches_provider_message_id ON dispatches (account_id, provider_message_id)
    WHERE provider_message_id IS NOT NULL;
