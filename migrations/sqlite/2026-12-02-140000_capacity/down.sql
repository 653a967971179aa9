DROP INDEX capacity_ledger_sender;
DROP TABLE capacity_ledger;
ALTER TABLE senders DROP COLUMN caps;
