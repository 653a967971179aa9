-- An enrollment's state becomes bytes: MessagePack behind a one-byte tag (store/state_encoding.rs).
-- SQLite keeps a value's own type whatever the column's declared affinity (a blob bound to the
-- TEXT column `state` is stored as a blob), and diesel reads a text value as its bytes, so the
-- JSON states stored before read back as they are (the reader still reads JSON, which starts
-- with `{`) and nothing needs rewriting. This migration only records the change.
SELECT 1;
