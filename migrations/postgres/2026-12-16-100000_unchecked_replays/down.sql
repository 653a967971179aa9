ALTER TABLE webhook_replays ADD CONSTRAINT webhook_replays_account_id_fkey
    FOREIGN KEY (account_id) REFERENCES accounts (id) ON DELETE CASCADE;
