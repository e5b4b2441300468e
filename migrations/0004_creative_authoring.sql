-- 0004: creative authoring (issue 15). The history records every change of
-- a creative, not only review actions, and titles are searchable.

-- pg_trgm is a trusted extension of PostgreSQL's contrib: a database owner
-- may create it.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- creative_events: type is what happened (created, version_added, updated
-- or the review action); from_status is null only for created; changes
-- lists the fields an update changed; public_id is the id the API shows
-- (id orders the history and pages it).
ALTER TABLE creative_events RENAME COLUMN action TO type;
ALTER TABLE creative_events
    DROP CONSTRAINT creative_events_action_check,
    ALTER COLUMN from_status DROP NOT NULL,
    ADD COLUMN public_id uuid NOT NULL DEFAULT gen_random_uuid(),
    ADD COLUMN changes jsonb,
    ADD CONSTRAINT creative_events_type_check
        CHECK (type IN ('created', 'version_added', 'updated', 'submit', 'request_changes', 'approve', 'archive')),
    ADD CONSTRAINT creative_events_from_status_check CHECK ((type = 'created') = (from_status IS NULL)),
    ADD CONSTRAINT creative_events_changes_check
        CHECK ((type = 'updated') = (changes IS NOT NULL AND jsonb_typeof(changes) = 'array')),
    ADD CONSTRAINT creative_events_public_id_key UNIQUE (public_id);

-- The list's filters: title contains (q), author, assigned reviewer.
CREATE INDEX creatives_title_trgm_idx ON creatives USING gin (title gin_trgm_ops);
CREATE INDEX creatives_organization_author_number_idx ON creatives (organization_id, author_id, number DESC);
CREATE INDEX creatives_organization_reviewer_number_idx ON creatives (organization_id, reviewer_id, number DESC)
    WHERE reviewer_id IS NOT NULL;
