-- A contact's country (ISO 3166-1 alpha-2), for the `contact` holiday calendar (docs/timing.md).
ALTER TABLE contacts ADD COLUMN country TEXT;
