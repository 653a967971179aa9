-- Webhook signatures lose their foreign key, as the other tables written on every signal did
-- (130000_unchecked_hot_tables). PostgreSQL checked it with a trigger per stored signature: a
-- lookup of the account that also locks its row `FOR KEY SHARE`, and as every concurrent
-- signal group of an account locked the same row, each lock rewrote it with a new shared-lock
-- id (a multixact) and a WAL record. The check cannot fail: a signature is stored only after
-- the webhook's account was read and its signature verified, in that request, and nothing
-- deletes accounts.
ALTER TABLE webhook_replays DROP CONSTRAINT webhook_replays_account_id_fkey;
