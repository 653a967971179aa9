-- A contact's country (ISO 3166-1 alpha-2), for the `contact` holiday calendar (SPEC §11).
ALTER TABLE contacts ADD COLUMN country TEXT;
