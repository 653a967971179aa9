-- The live enrollments made with `allow_duplicate`, by flow: usually none.
--
-- A second live enrollment of a contact in a flow is refused unless the new one allows
-- duplicates. The unique index `enrollment_keys_contact` holds every live enrollment made
-- without `allow_duplicate`, so while a flow has no live one made with it, that index alone
-- refuses every duplicate, and enrolling writes without reading the contacts' live
-- enrollments first (a refused write is tried again with the read: the item is answered
-- ALREADY_EXISTS). This index answers "which of these flows have a live enrollment made with
-- `allow_duplicate`" with one probe a flow, and holds an entry only for such enrollments.
CREATE INDEX enrollment_keys_live_duplicates ON enrollment_keys (account_id, flow_id)
    WHERE allow_duplicate AND status IN ('active', 'paused');
