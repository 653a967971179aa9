ALTER TABLE dispatches ADD FOREIGN KEY (account_id) REFERENCES accounts (id) ON DELETE CASCADE;
ALTER TABLE dispatches ADD FOREIGN KEY (enrollment_id) REFERENCES enrollments (id) ON DELETE CASCADE;
ALTER TABLE journey ADD FOREIGN KEY (enrollment_id) REFERENCES enrollments (id) ON DELETE CASCADE;
