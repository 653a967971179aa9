DROP TABLE link_secret;
