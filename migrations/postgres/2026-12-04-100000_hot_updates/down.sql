ALTER TABLE dispatches RESET (fillfactor);
ALTER TABLE enrollments RESET (fillfactor);
