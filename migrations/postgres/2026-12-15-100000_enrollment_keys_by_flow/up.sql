-- An enrollment's keys row loses its primary key: one index entry fewer for every enrollment
-- made (BatchEnroll writes three rows an enrollment, and each index entry is a share of it).
--
-- The one writer that finds a keys row by its enrollment, a status change, finds it in
-- `enrollment_keys_flow` instead: by (account, flow, the status it had, id), every column of
-- that index, so one probe as before, however many rows share the contact or the flow. Every
-- reader comes to the keys through the contact, flow or client-key index and joins
-- `enrollments` by its primary key. A keys row is only ever written with its enrollment, in the
-- same transaction, and the enrollment's primary key keeps the ids unique.
ALTER TABLE enrollment_keys DROP CONSTRAINT enrollment_keys_pkey;

-- The contact index leads with the contact, so the status change above cannot take it instead
-- (on a table without statistics PostgreSQL chose it for its account and flow columns, the
-- fewer conditions costing less, and walked every enrollment of the account in the flow).
-- Every reader of it names the contact and the account; the rule it holds is the same.
DROP INDEX enrollment_keys_contact;
CREATE UNIQUE INDEX enrollment_keys_contact ON enrollment_keys (contact_id, account_id, flow_id,
    (CASE WHEN status IN ('active', 'paused') AND NOT allow_duplicate THEN TRUE END));
