-- 0015: review comments (issue 28).
-- comments are review comments on a version of a creative (docs/review.md,
-- "Review comments"): a top-level comment may point at an asset of its
-- version (anchor: a region, a time, a page) and be resolved; a reply's
-- parent is a top-level comment of the same creative (one level). A
-- deleted comment that has replies stays as a tombstone (deleted, body ''),
-- so its thread still reads right. seq orders a list oldest first and is
-- its cursor.
CREATE TABLE comments (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    seq              bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    creative_id      uuid NOT NULL REFERENCES creatives (id) ON DELETE CASCADE,
    version_id       uuid NOT NULL REFERENCES creative_versions (id) ON DELETE CASCADE,
    version_number   integer NOT NULL CHECK (version_number > 0),
    parent_id        uuid REFERENCES comments (id) ON DELETE CASCADE,
    author_id        uuid NOT NULL REFERENCES users (id),
    body             text NOT NULL,
    anchor           jsonb,
    mention_user_ids uuid[] NOT NULL DEFAULT '{}',
    resolved_by      uuid REFERENCES users (id),
    resolved_at      timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    edited_at        timestamptz,
    deleted          boolean NOT NULL DEFAULT false,
    resolved         boolean NOT NULL GENERATED ALWAYS AS (resolved_at IS NOT NULL) STORED,
    CHECK ((resolved_by IS NULL) = (resolved_at IS NULL)),
    CHECK (parent_id IS NULL OR (anchor IS NULL AND resolved_at IS NULL)),
    CHECK (NOT deleted OR (body = '' AND anchor IS NULL AND mention_user_ids = '{}'))
);

-- The list's shapes, each served by an index that returns a page in seq
-- order whatever the table holds: every comment of a creative, those of one
-- version, top-level ones by resolved (of one version), a thread's replies.
CREATE INDEX comments_creative_seq_idx ON comments (creative_id, seq);
CREATE INDEX comments_creative_version_seq_idx ON comments (creative_id, version_number, seq);
CREATE INDEX comments_top_level_resolved_seq_idx ON comments (creative_id, resolved, seq)
    WHERE parent_id IS NULL;
CREATE INDEX comments_top_level_version_resolved_seq_idx ON comments (creative_id, version_number, resolved, seq)
    WHERE parent_id IS NULL;
CREATE INDEX comments_parent_seq_idx ON comments (parent_id, seq) WHERE parent_id IS NOT NULL;
-- openCommentCount: the open top-level comments of a version, counted from
-- this index alone.
CREATE INDEX comments_open_version_idx ON comments (version_id)
    WHERE parent_id IS NULL AND resolved_at IS NULL AND NOT deleted;

-- comments_shown is a comment with the names its answer shows: its
-- author's, its resolver's and its mentions' (in the order sent).
CREATE VIEW comments_shown AS
SELECT cm.*, au.name AS author_name, rb.name AS resolved_by_name,
       ARRAY(SELECT coalesce(u.name, '')
             FROM unnest(cm.mention_user_ids) WITH ORDINALITY AS m (user_id, n)
             LEFT JOIN users u ON u.id = m.user_id
             ORDER BY m.n)::text[] AS mention_names
FROM comments cm
JOIN users au ON au.id = cm.author_id
LEFT JOIN users rb ON rb.id = cm.resolved_by;
