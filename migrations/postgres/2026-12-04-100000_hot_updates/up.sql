-- Room on each page for an updated row's new version, so an update that changes no indexed
-- column stays on its page and writes no index entry (a HOT update; issue 18). A claim's lease
-- and attempts, and an ack's journey_seq on the enrollment, are such updates: at the default
-- fillfactor (100) the pages the planner filled had no room, and each claim of 1,000 wrote six
-- index entries per dispatch. Existing pages keep their layout until rewritten.
ALTER TABLE dispatches SET (fillfactor = 70);
ALTER TABLE enrollments SET (fillfactor = 80);
