-- Review stages in a creative's history (docs/review.md, "Review
-- stages"): a stage whose rule held is an event of its own
-- (stage_approved); a decision on a creative with a review plan, and a
-- stage's event, name the stage as it was then (stage: its name, kept
-- when the plan changes later); override marks an admin's decision for
-- the whole creative.
ALTER TABLE creative_events DROP CONSTRAINT creative_events_type_check;
ALTER TABLE creative_events ADD CONSTRAINT creative_events_type_check
    CHECK (type IN ('created', 'version_added', 'updated', 'submit', 'request_changes', 'approve', 'archive', 'stage_approved'));
ALTER TABLE creative_events
    ADD COLUMN stage text,
    ADD COLUMN override boolean NOT NULL DEFAULT false;
