-- The server's secret for signed links (approval pages, one-click unsubscribe): one row, made at
-- first start; `nudge link-secret rotate` replaces it, which invalidates every open link.
CREATE TABLE link_secret (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    secret TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
