ALTER TABLE accounts DROP COLUMN reply_unsubscribe;
