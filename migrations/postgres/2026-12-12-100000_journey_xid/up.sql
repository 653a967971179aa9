-- The Watch key of an enrollment's last journey row, kept on the enrollment row its writer
-- already holds: the next writer keys its rows at least this high (so an enrollment's entries
-- stay in order in Watch) without looking the previous row up — that lookup, one index probe a
-- journey row, cost a due step about 3 µs (7 % of the planner's rate).
ALTER TABLE enrollments ADD COLUMN journey_xid BIGINT NOT NULL DEFAULT 0;
UPDATE enrollments e SET journey_xid = j.xid
FROM (SELECT enrollment_id, MAX(xid) AS xid FROM journey_steps GROUP BY enrollment_id) j
WHERE j.enrollment_id = e.id;
