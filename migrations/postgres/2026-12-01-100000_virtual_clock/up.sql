-- The manual clock's virtual "now" (`nudge serve --clock manual`), so virtual time survives a
-- restart on the same database. One row at most; a system-clock server never writes it.
CREATE TABLE virtual_clock (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    now_ms BIGINT NOT NULL
);
