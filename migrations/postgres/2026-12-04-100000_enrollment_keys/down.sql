DROP INDEX dispatches_held;
CREATE INDEX dispatches_status ON dispatches (account_id, status, id);
CREATE INDEX dispatches_message_id ON dispatches (account_id, message_id) WHERE message_id IS NOT NULL;
CREATE INDEX dispatches_enrollment ON dispatches (enrollment_id, run);
ALTER TABLE dispatches ALTER COLUMN idempotency_key TYPE TEXT COLLATE "default";

ALTER TABLE enrollments RESET (fillfactor);
DROP INDEX enrollments_due;
CREATE INDEX enrollments_due ON enrollments (next_run_at) WHERE next_run_at IS NOT NULL;
CREATE UNIQUE INDEX enrollments_client_key ON enrollments (account_id, client_key)
    WHERE client_key IS NOT NULL;
CREATE UNIQUE INDEX enrollments_one_live ON enrollments (account_id, contact_id, flow_id)
    WHERE status IN ('active', 'paused') AND NOT allow_duplicate;
CREATE INDEX enrollments_flow ON enrollments (account_id, flow_id, status, id);
CREATE INDEX enrollments_contact ON enrollments (account_id, contact_id, status);
DROP TABLE enrollment_keys;
