DROP TABLE flow_versions;
DROP TABLE flows;
DROP TABLE senders;
DROP TABLE contacts;
DROP TABLE api_tokens;
DROP TABLE accounts;
