-- gRPC health's probe row, kept on both backends so their migrations stay in step; SQLite's
-- probe is `SELECT 1` (the file is this process's: there is no commit to hang).
CREATE TABLE health_probe (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    at BIGINT NOT NULL
);
INSERT INTO health_probe (id, at) VALUES (1, 0);
