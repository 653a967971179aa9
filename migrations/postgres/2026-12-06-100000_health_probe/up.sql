-- One row gRPC health's probe updates every few seconds: a commit that writes WAL,
-- so the probe fails while commits cannot finish (a synchronous standby that is gone, a
-- read-only or full database), not only while the server is unreachable.
CREATE TABLE health_probe (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    at BIGINT NOT NULL
);
INSERT INTO health_probe (id, at) VALUES (1, 0);
