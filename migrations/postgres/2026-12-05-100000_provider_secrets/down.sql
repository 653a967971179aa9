DROP INDEX dispatches_provider_message_id;
ALTER TABLE accounts DROP COLUMN call_connected_threshold;
ALTER TABLE accounts ADD COLUMN twilio_auth_token TEXT;
UPDATE accounts SET twilio_auth_token =
    (SELECT secret FROM provider_secrets
     WHERE provider_secrets.account_id = accounts.id AND provider = 'twilio');
DROP TABLE provider_secrets;
