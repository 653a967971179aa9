-- Identifiers compare by the database's collation again.
DROP VIEW journey;

ALTER TABLE accounts
    ALTER COLUMN id TYPE TEXT COLLATE "default",
    ALTER COLUMN default_sender_id TYPE TEXT COLLATE "default";
ALTER TABLE api_tokens
    ALTER COLUMN id TYPE TEXT COLLATE "default",
    ALTER COLUMN account_id TYPE TEXT COLLATE "default",
    ALTER COLUMN hash TYPE TEXT COLLATE "default",
    ALTER COLUMN scope TYPE TEXT COLLATE "default";
ALTER TABLE capacity_ledger
    ALTER COLUMN key TYPE TEXT COLLATE "default",
    ALTER COLUMN account_id TYPE TEXT COLLATE "default",
    ALTER COLUMN sender_id TYPE TEXT COLLATE "default",
    ALTER COLUMN channel TYPE TEXT COLLATE "default",
    ALTER COLUMN domain TYPE TEXT COLLATE "default";
ALTER TABLE contacts
    ALTER COLUMN account_id TYPE TEXT COLLATE "default",
    ALTER COLUMN id TYPE TEXT COLLATE "default",
    ALTER COLUMN phone TYPE TEXT COLLATE "default";
ALTER TABLE dispatches
    ALTER COLUMN id TYPE TEXT COLLATE "default",
    ALTER COLUMN account_id TYPE TEXT COLLATE "default",
    ALTER COLUMN enrollment_id TYPE TEXT COLLATE "default",
    ALTER COLUMN step TYPE TEXT COLLATE "default",
    ALTER COLUMN channel TYPE TEXT COLLATE "default",
    ALTER COLUMN message_id TYPE TEXT COLLATE "default",
    ALTER COLUMN status TYPE TEXT COLLATE "default",
    ALTER COLUMN lease_owner TYPE TEXT COLLATE "default",
    ALTER COLUMN provider_message_id TYPE TEXT COLLATE "default",
    ALTER COLUMN hold_code TYPE TEXT COLLATE "default",
    ALTER COLUMN variant TYPE TEXT COLLATE "default";
ALTER TABLE enrollment_keys
    ALTER COLUMN id TYPE TEXT COLLATE "default",
    ALTER COLUMN account_id TYPE TEXT COLLATE "default",
    ALTER COLUMN contact_id TYPE TEXT COLLATE "default",
    ALTER COLUMN flow_id TYPE TEXT COLLATE "default",
    ALTER COLUMN status TYPE TEXT COLLATE "default",
    ALTER COLUMN client_key TYPE TEXT COLLATE "default";
ALTER TABLE enrollment_migrations
    ALTER COLUMN id TYPE TEXT COLLATE "default",
    ALTER COLUMN account_id TYPE TEXT COLLATE "default",
    ALTER COLUMN flow_id TYPE TEXT COLLATE "default",
    ALTER COLUMN client_key TYPE TEXT COLLATE "default",
    ALTER COLUMN status TYPE TEXT COLLATE "default";
ALTER TABLE enrollments
    ALTER COLUMN id TYPE TEXT COLLATE "default",
    ALTER COLUMN account_id TYPE TEXT COLLATE "default",
    ALTER COLUMN flow_id TYPE TEXT COLLATE "default",
    ALTER COLUMN contact_id TYPE TEXT COLLATE "default",
    ALTER COLUMN sender_id TYPE TEXT COLLATE "default",
    ALTER COLUMN status TYPE TEXT COLLATE "default",
    ALTER COLUMN client_key TYPE TEXT COLLATE "default";
ALTER TABLE exposures
    ALTER COLUMN enrollment_id TYPE TEXT COLLATE "default",
    ALTER COLUMN experiment TYPE TEXT COLLATE "default",
    ALTER COLUMN account_id TYPE TEXT COLLATE "default",
    ALTER COLUMN flow_id TYPE TEXT COLLATE "default",
    ALTER COLUMN step TYPE TEXT COLLATE "default",
    ALTER COLUMN variant TYPE TEXT COLLATE "default",
    ALTER COLUMN goal TYPE TEXT COLLATE "default";
ALTER TABLE fetch_requests
    ALTER COLUMN id TYPE TEXT COLLATE "default",
    ALTER COLUMN account_id TYPE TEXT COLLATE "default",
    ALTER COLUMN enrollment_id TYPE TEXT COLLATE "default",
    ALTER COLUMN status TYPE TEXT COLLATE "default";
ALTER TABLE flow_counts
    ALTER COLUMN account_id TYPE TEXT COLLATE "default",
    ALTER COLUMN flow_id TYPE TEXT COLLATE "default",
    ALTER COLUMN step TYPE TEXT COLLATE "default",
    ALTER COLUMN metric TYPE TEXT COLLATE "default",
    ALTER COLUMN variant TYPE TEXT COLLATE "default";
ALTER TABLE flow_versions
    ALTER COLUMN flow_id TYPE TEXT COLLATE "default";
ALTER TABLE flows
    ALTER COLUMN id TYPE TEXT COLLATE "default",
    ALTER COLUMN account_id TYPE TEXT COLLATE "default";
ALTER TABLE journey_steps
    ALTER COLUMN enrollment_id TYPE TEXT COLLATE "default",
    ALTER COLUMN account_id TYPE TEXT COLLATE "default";
ALTER TABLE provider_secrets
    ALTER COLUMN account_id TYPE TEXT COLLATE "default",
    ALTER COLUMN provider TYPE TEXT COLLATE "default";
ALTER TABLE senders
    ALTER COLUMN account_id TYPE TEXT COLLATE "default",
    ALTER COLUMN id TYPE TEXT COLLATE "default";
ALTER TABLE signal_deliveries
    ALTER COLUMN signal_id TYPE TEXT COLLATE "default",
    ALTER COLUMN enrollment_id TYPE TEXT COLLATE "default",
    ALTER COLUMN effect TYPE TEXT COLLATE "default",
    ALTER COLUMN branch TYPE TEXT COLLATE "default";
ALTER TABLE signals
    ALTER COLUMN id TYPE TEXT COLLATE "default",
    ALTER COLUMN account_id TYPE TEXT COLLATE "default",
    ALTER COLUMN contact_id TYPE TEXT COLLATE "default",
    ALTER COLUMN source TYPE TEXT COLLATE "default",
    ALTER COLUMN provider_id TYPE TEXT COLLATE "default",
    ALTER COLUMN kind TYPE TEXT COLLATE "default",
    ALTER COLUMN channel TYPE TEXT COLLATE "default";
ALTER TABLE tasks
    ALTER COLUMN id TYPE TEXT COLLATE "default",
    ALTER COLUMN account_id TYPE TEXT COLLATE "default",
    ALTER COLUMN enrollment_id TYPE TEXT COLLATE "default",
    ALTER COLUMN kind TYPE TEXT COLLATE "default",
    ALTER COLUMN step TYPE TEXT COLLATE "default",
    ALTER COLUMN status TYPE TEXT COLLATE "default";
ALTER TABLE variant_states
    ALTER COLUMN account_id TYPE TEXT COLLATE "default",
    ALTER COLUMN flow_id TYPE TEXT COLLATE "default",
    ALTER COLUMN experiment TYPE TEXT COLLATE "default",
    ALTER COLUMN variant TYPE TEXT COLLATE "default",
    ALTER COLUMN state TYPE TEXT COLLATE "default";
ALTER TABLE webhook_replays
    ALTER COLUMN account_id TYPE TEXT COLLATE "default",
    ALTER COLUMN signature TYPE TEXT COLLATE "default";

CREATE VIEW journey AS
SELECT s.enrollment_id, s.seq + e.ord - 1 AS seq, s.at,
       e.item ->> 0 AS kind, (e.item -> 1)::text AS detail
FROM journey_steps s, json_array_elements(s.entries::json) WITH ORDINALITY AS e(item, ord);
