-- The tables written on every enrollment, step and signal lose their foreign keys, as the
-- journey and the outbox did (120000_unchecked_outputs). PostgreSQL checks each key with a
-- trigger per written row, a lookup in the referenced table's index: three per new enrollment
-- (account, contact, flow version), two per task and per signal delivery, one per signal.
-- None of them can fail: the service checks the contact and the flow version before it
-- enrolls, every row below is written by nudge in the transaction that reads or locks what it
-- refers to, and nothing deletes accounts, contacts, flow versions, enrollments or signals.
ALTER TABLE enrollments DROP CONSTRAINT enrollments_account_id_fkey;
ALTER TABLE enrollments DROP CONSTRAINT enrollments_flow_id_flow_version_fkey;
ALTER TABLE enrollments DROP CONSTRAINT enrollments_account_id_contact_id_fkey;
ALTER TABLE tasks DROP CONSTRAINT tasks_account_id_fkey;
ALTER TABLE tasks DROP CONSTRAINT tasks_enrollment_id_fkey;
ALTER TABLE signals DROP CONSTRAINT signals_account_id_fkey;
ALTER TABLE signal_deliveries DROP CONSTRAINT signal_deliveries_signal_id_fkey;
ALTER TABLE signal_deliveries DROP CONSTRAINT signal_deliveries_enrollment_id_fkey;

-- Most enrollments have no client key. A full unique index holds an entry for each of them
-- anyway, and every planner step (an update that changes the indexed `next_run_at`, so never
-- a HOT update) adds another; the partial index holds only the keyed ones and refuses the
-- same duplicates.
ALTER TABLE enrollments DROP CONSTRAINT enrollments_account_id_client_key_key;
CREATE UNIQUE INDEX enrollments_client_key ON enrollments (account_id, client_key)
    WHERE client_key IS NOT NULL;
