-- On PostgreSQL the keys table loses its primary key (see the migration of the same name
-- there). On SQLite `enrollment_keys` is a view of `enrollments`: nothing changes.
SELECT 1;
