DROP VIEW enrollment_keys;
CREATE VIEW enrollment_keys AS
SELECT id, account_id, contact_id, flow_id, status, client_key, allow_duplicate FROM enrollments;
