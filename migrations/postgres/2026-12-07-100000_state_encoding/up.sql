-- An enrollment's state becomes bytes: MessagePack behind a one-byte tag (store/state_encoding.rs),
-- a fraction of JSON's cost to read and write on every step. The JSON of every state stored
-- before is kept as its UTF-8 bytes, which the reader still reads (it starts with `{`); a state
-- is written in the new form the next time it steps, so nothing is rewritten here but the column.
ALTER TABLE enrollments ALTER COLUMN state TYPE BYTEA USING convert_to(state, 'UTF8');
