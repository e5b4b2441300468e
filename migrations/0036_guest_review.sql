-- Guest review (docs/shares.md, "What a guest may do"): a comment, its
-- resolution and a history event are a member's or a guest's, never
-- both; members' rows stay as they were (author_id, resolved_by,
-- actor_id). A comment's visibility: internal comments are for members
-- only, and a guest writes none.
ALTER TABLE comments
    ALTER COLUMN author_id DROP NOT NULL,
    ADD COLUMN author_guest_id uuid REFERENCES guests (id) ON DELETE CASCADE,
    ADD COLUMN resolved_by_guest_id uuid REFERENCES guests (id) ON DELETE CASCADE,
    ADD COLUMN visibility text NOT NULL DEFAULT 'everyone',
    ADD CONSTRAINT comments_author_check CHECK ((author_id IS NULL) <> (author_guest_id IS NULL)),
    ADD CONSTRAINT comments_visibility_check
        CHECK (visibility IN ('everyone', 'internal') AND (visibility = 'everyone' OR author_guest_id IS NULL)),
    DROP CONSTRAINT comments_check,
    ADD CONSTRAINT comments_resolved_check
        CHECK ((resolved_by IS NULL AND resolved_by_guest_id IS NULL) = (resolved_at IS NULL)
               AND (resolved_by IS NULL OR resolved_by_guest_id IS NULL));

ALTER TABLE creative_events
    ALTER COLUMN actor_id DROP NOT NULL,
    ADD COLUMN actor_guest_id uuid REFERENCES guests (id) ON DELETE CASCADE,
    ADD CONSTRAINT creative_events_actor_check CHECK ((actor_id IS NULL) <> (actor_guest_id IS NULL));

-- A guest's decision in a review stage names the guest who made it
-- (guest_email is the key the stage lists them by).
ALTER TABLE review_decisions ADD COLUMN guest_id uuid REFERENCES guests (id) ON DELETE CASCADE;

-- A stored answer belongs to its principal: a user, or a guest (whose
-- ids are random UUIDs as users' are, so the two never meet).
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_user_id_fkey;

-- comments_shown lists comments' columns: made again to show the new
-- ones, with a guest's name where a guest wrote or resolved (resolved_by_name
-- is '' while open).
DROP VIEW comments_shown;
CREATE VIEW comments_shown AS
SELECT cm.*, coalesce(au.name, ag.name) AS author_name, coalesce(rb.name, rg.name, '') AS resolved_by_name,
       ARRAY(SELECT coalesce(u.name, '')
             FROM unnest(cm.mention_user_ids) WITH ORDINALITY AS m (user_id, n)
             LEFT JOIN users u ON u.id = m.user_id
             ORDER BY m.n)::text[] AS mention_names
FROM comments cm
LEFT JOIN users au ON au.id = cm.author_id
LEFT JOIN guests ag ON ag.id = cm.author_guest_id
LEFT JOIN users rb ON rb.id = cm.resolved_by
LEFT JOIN guests rg ON rg.id = cm.resolved_by_guest_id;
