-- Identifiers compare byte by byte (collation "C"), as the outbox's keys already did.
--
-- Every id, key and status column was compared by the database's collation: on a server
-- made with a locale (en_US.UTF-8, or C.UTF-8 on PostgreSQL 15) each comparison in an index
-- goes through the C library's strcoll instead of memcmp, and a BatchEnroll or a planner batch
-- makes hundreds of thousands of them (seven index entries an enrollment, each a descent of
-- its tree). Measured with nudge-bench, 100,000 enrollments, three runs of each side on a
-- C.UTF-8 server (docs/benchmarks.md, "What bounds it"): BatchEnroll 2 % faster with one
-- caller and 8 % with four, due steps 4 % faster.
--
-- Equality is the same in both collations (a deterministic collation compares equal bytes
-- only), so no key, lookup or unique index changes meaning. Only the order of ids changes,
-- and only where the locale's order differed from the bytes' (mixed case, punctuation, non-ASCII
-- ids): listings in id order follow the bytes from now on; a page token issued before this
-- migration may, once, repeat or skip such ids. Text people read and search (names, emails and
-- their lower-case index, time zones, message bodies) keeps the database's collation.
--
-- Every column that holds ids of one kind changes together, so a join compares two "C" columns
-- and keeps its index (an index serves only a comparison in its own collation). PostgreSQL
-- rebuilds each table's indexes once, under its lock, while this runs.

-- The journey view reads journey_steps' columns; it is made again, the same, below.
DROP VIEW journey;

ALTER TABLE accounts
    ALTER COLUMN id TYPE TEXT COLLATE "C",
    ALTER COLUMN default_sender_id TYPE TEXT COLLATE "C";
ALTER TABLE api_tokens
    ALTER COLUMN id TYPE TEXT COLLATE "C",
    ALTER COLUMN account_id TYPE TEXT COLLATE "C",
    ALTER COLUMN hash TYPE TEXT COLLATE "C",
    ALTER COLUMN scope TYPE TEXT COLLATE "C";
ALTER TABLE capacity_ledger
    ALTER COLUMN key TYPE TEXT COLLATE "C",
    ALTER COLUMN account_id TYPE TEXT COLLATE "C",
    ALTER COLUMN sender_id TYPE TEXT COLLATE "C",
    ALTER COLUMN channel TYPE TEXT COLLATE "C",
    ALTER COLUMN domain TYPE TEXT COLLATE "C";
ALTER TABLE contacts
    ALTER COLUMN account_id TYPE TEXT COLLATE "C",
    ALTER COLUMN id TYPE TEXT COLLATE "C",
    ALTER COLUMN phone TYPE TEXT COLLATE "C";
ALTER TABLE dispatches
    ALTER COLUMN id TYPE TEXT COLLATE "C",
    ALTER COLUMN account_id TYPE TEXT COLLATE "C",
    ALTER COLUMN enrollment_id TYPE TEXT COLLATE "C",
    ALTER COLUMN step TYPE TEXT COLLATE "C",
    ALTER COLUMN channel TYPE TEXT COLLATE "C",
    ALTER COLUMN message_id TYPE TEXT COLLATE "C",
    ALTER COLUMN status TYPE TEXT COLLATE "C",
    ALTER COLUMN lease_owner TYPE TEXT COLLATE "C",
    ALTER COLUMN provider_message_id TYPE TEXT COLLATE "C",
    ALTER COLUMN hold_code TYPE TEXT COLLATE "C",
    ALTER COLUMN variant TYPE TEXT COLLATE "C";
ALTER TABLE enrollment_keys
    ALTER COLUMN id TYPE TEXT COLLATE "C",
    ALTER COLUMN account_id TYPE TEXT COLLATE "C",
    ALTER COLUMN contact_id TYPE TEXT COLLATE "C",
    ALTER COLUMN flow_id TYPE TEXT COLLATE "C",
    ALTER COLUMN status TYPE TEXT COLLATE "C",
    ALTER COLUMN client_key TYPE TEXT COLLATE "C";
ALTER TABLE enrollment_migrations
    ALTER COLUMN id TYPE TEXT COLLATE "C",
    ALTER COLUMN account_id TYPE TEXT COLLATE "C",
    ALTER COLUMN flow_id TYPE TEXT COLLATE "C",
    ALTER COLUMN client_key TYPE TEXT COLLATE "C",
    ALTER COLUMN status TYPE TEXT COLLATE "C";
ALTER TABLE enrollments
    ALTER COLUMN id TYPE TEXT COLLATE "C",
    ALTER COLUMN account_id TYPE TEXT COLLATE "C",
    ALTER COLUMN flow_id TYPE TEXT COLLATE "C",
    ALTER COLUMN contact_id TYPE TEXT COLLATE "C",
    ALTER COLUMN sender_id TYPE TEXT COLLATE "C",
    ALTER COLUMN status TYPE TEXT COLLATE "C",
    ALTER COLUMN client_key TYPE TEXT COLLATE "C";
ALTER TABLE exposures
    ALTER COLUMN enrollment_id TYPE TEXT COLLATE "C",
    ALTER COLUMN experiment TYPE TEXT COLLATE "C",
    ALTER COLUMN account_id TYPE TEXT COLLATE "C",
    ALTER COLUMN flow_id TYPE TEXT COLLATE "C",
    ALTER COLUMN step TYPE TEXT COLLATE "C",
    ALTER COLUMN variant TYPE TEXT COLLATE "C",
    ALTER COLUMN goal TYPE TEXT COLLATE "C";
ALTER TABLE fetch_requests
    ALTER COLUMN id TYPE TEXT COLLATE "C",
    ALTER COLUMN account_id TYPE TEXT COLLATE "C",
    ALTER COLUMN enrollment_id TYPE TEXT COLLATE "C",
    ALTER COLUMN status TYPE TEXT COLLATE "C";
ALTER TABLE flow_counts
    ALTER COLUMN account_id TYPE TEXT COLLATE "C",
    ALTER COLUMN flow_id TYPE TEXT COLLATE "C",
    ALTER COLUMN step TYPE TEXT COLLATE "C",
    ALTER COLUMN metric TYPE TEXT COLLATE "C",
    ALTER COLUMN variant TYPE TEXT COLLATE "C";
ALTER TABLE flow_versions
    ALTER COLUMN flow_id TYPE TEXT COLLATE "C";
ALTER TABLE flows
    ALTER COLUMN id TYPE TEXT COLLATE "C",
    ALTER COLUMN account_id TYPE TEXT COLLATE "C";
ALTER TABLE journey_steps
    ALTER COLUMN enrollment_id TYPE TEXT COLLATE "C",
    ALTER COLUMN account_id TYPE TEXT COLLATE "C";
ALTER TABLE provider_secrets
    ALTER COLUMN account_id TYPE TEXT COLLATE "C",
    ALTER COLUMN provider TYPE TEXT COLLATE "C";
ALTER TABLE senders
    ALTER COLUMN account_id TYPE TEXT COLLATE "C",
    ALTER COLUMN id TYPE TEXT COLLATE "C";
ALTER TABLE signal_deliveries
    ALTER COLUMN signal_id TYPE TEXT COLLATE "C",
    ALTER COLUMN enrollment_id TYPE TEXT COLLATE "C",
    ALTER COLUMN effect TYPE TEXT COLLATE "C",
    ALTER COLUMN branch TYPE TEXT COLLATE "C";
ALTER TABLE signals
    ALTER COLUMN id TYPE TEXT COLLATE "C",
    ALTER COLUMN account_id TYPE TEXT COLLATE "C",
    ALTER COLUMN contact_id TYPE TEXT COLLATE "C",
    ALTER COLUMN source TYPE TEXT COLLATE "C",
    ALTER COLUMN provider_id TYPE TEXT COLLATE "C",
    ALTER COLUMN kind TYPE TEXT COLLATE "C",
    ALTER COLUMN channel TYPE TEXT COLLATE "C";
ALTER TABLE tasks
    ALTER COLUMN id TYPE TEXT COLLATE "C",
    ALTER COLUMN account_id TYPE TEXT COLLATE "C",
    ALTER COLUMN enrollment_id TYPE TEXT COLLATE "C",
    ALTER COLUMN kind TYPE TEXT COLLATE "C",
    ALTER COLUMN step TYPE TEXT COLLATE "C",
    ALTER COLUMN status TYPE TEXT COLLATE "C";
ALTER TABLE variant_states
    ALTER COLUMN account_id TYPE TEXT COLLATE "C",
    ALTER COLUMN flow_id TYPE TEXT COLLATE "C",
    ALTER COLUMN experiment TYPE TEXT COLLATE "C",
    ALTER COLUMN variant TYPE TEXT COLLATE "C",
    ALTER COLUMN state TYPE TEXT COLLATE "C";
ALTER TABLE webhook_replays
    ALTER COLUMN account_id TYPE TEXT COLLATE "C",
    ALTER COLUMN signature TYPE TEXT COLLATE "C";

CREATE VIEW journey AS
SELECT s.enrollment_id, s.seq + e.ord - 1 AS seq, s.at,
       e.item ->> 0 AS kind, (e.item -> 1)::text AS detail
FROM journey_steps s, json_array_elements(s.entries::json) WITH ORDINALITY AS e(item, ord);
