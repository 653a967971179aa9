-- The delivery side reads the outbox (GetDispatch, ListDispatches): a held dispatch keeps its
-- hold code (ZONE_UNKNOWN, NO_OPENING, …) apart from the message in `failure`, and a listing by
-- status pages by id.
ALTER TABLE dispatches ADD COLUMN hold_code TEXT;
CREATE INDEX dispatches_status ON dispatches (account_id, status, id);
