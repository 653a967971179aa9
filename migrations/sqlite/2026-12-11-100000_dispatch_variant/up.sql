-- The variant of its step a dispatch sends, when the step has variants (who got which is
-- also in the journey; the column is what the delivery side and the statistics read).
ALTER TABLE dispatches ADD COLUMN variant TEXT;
