-- Threads follow the work (docs/review.md, "Threads that follow the
-- work"): the creative's author marks a top-level comment addressed in a
-- later version; a submit that goes past open threads not marked
-- addressed records them; openThreadCount counts a creative's open
-- threads of every version from an index of its own.
ALTER TABLE comments
    ADD COLUMN addressed_in_version integer,
    ADD CONSTRAINT comments_addressed_in_version_check
        CHECK (addressed_in_version IS NULL OR (parent_id IS NULL AND addressed_in_version > version_number));

ALTER TABLE creative_events ADD COLUMN acknowledged_threads uuid[];

CREATE INDEX comments_open_threads_idx ON comments (creative_id)
    WHERE parent_id IS NULL AND resolved_at IS NULL AND NOT deleted;

-- comments_shown lists comments' columns: made again to show the new one.
DROP VIEW comments_shown;
CREATE VIEW comments_shown AS
SELECT cm.*, au.name AS author_name, rb.name AS resolved_by_name,
       ARRAY(SELECT coalesce(u.name, '')
             FROM unnest(cm.mention_user_ids) WITH ORDINALITY AS m (user_id, n)
             LEFT JOIN users u ON u.id = m.user_id
             ORDER BY m.n)::text[] AS mention_names
FROM comments cm
JOIN users au ON au.id = cm.author_id
LEFT JOIN users rb ON rb.id = cm.resolved_by;
