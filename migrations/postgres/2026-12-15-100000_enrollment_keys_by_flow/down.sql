DROP INDEX enrollment_keys_contact;
CREATE UNIQUE INDEX enrollment_keys_contact ON enrollment_keys (account_id, contact_id, flow_id,
    (CASE WHEN status IN ('active', 'paused') AND NOT allow_duplicate THEN TRUE END));
ALTER TABLE enrollment_keys ADD PRIMARY KEY (id);
