-- What a reply that asks in words to stop ("please remove me from your list", intent
-- `unsubscribe`) does: `opt_out` opts the contact out of the channel it came on, every
-- enrollment of the contact exits; `event` only raises `intent:unsubscribe` and the flow
-- decides. NULL: `opt_out`, so an account that never chose keeps the safe behaviour.
ALTER TABLE accounts ADD COLUMN reply_unsubscribe TEXT;
