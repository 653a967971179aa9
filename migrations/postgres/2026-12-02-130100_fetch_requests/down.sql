DROP TABLE fetch_requests;
