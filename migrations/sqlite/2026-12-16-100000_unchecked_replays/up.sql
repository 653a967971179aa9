-- On PostgreSQL webhook signatures lose their foreign key (see the migration of the same name
-- there): its check locked the account's row for every signature. SQLite has one writer and
-- no such lock: nothing changes.
SELECT 1;
