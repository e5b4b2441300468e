-- name: CommentTargetLock :one
-- CommentTargetLock reads, for a new comment, the creative (locked against
-- a concurrent archive: FOR SHARE lets comments be written side by side),
-- the caller's role and name, the version commented on (versionNumber, or
-- the current one when null; null columns when it names none) and the
-- transaction's clock. No row: the creative is not visible to the caller.
SELECT c.id, c.author_id, c.reviewer_id, c.review_status, c.version, c.current_version_id,
       m.role, cu.name AS caller_name,
       v.id AS version_id, v.number AS version_number, now()::timestamptz AS now
FROM creatives c
JOIN memberships m ON m.organization_id = c.organization_id AND m.user_id = @caller_id
JOIN users cu ON cu.id = @caller_id
LEFT JOIN creative_versions v ON v.creative_id = c.id
    AND v.number = coalesce(sqlc.narg('version_number')::integer,
                            (SELECT cv.number FROM creative_versions cv WHERE cv.id = c.current_version_id))
WHERE c.id = @id AND c.organization_id = @organization_id
FOR SHARE OF c;

-- name: CommentTargetLockGuest :one
-- CommentTargetLockGuest is CommentTargetLock for a guest: the creative
-- is visible when the guest's share holds it, the role is the guest's
-- ('guest'; the rules take the share's permission) and the name theirs.
SELECT c.id, c.author_id, c.reviewer_id, c.review_status, c.version, c.current_version_id,
       'guest'::text AS role, g.name AS caller_name,
       v.id AS version_id, v.number AS version_number, now()::timestamptz AS now
FROM creatives c
JOIN share_creatives sc ON sc.creative_id = c.id AND sc.share_id = @share_id
JOIN guests g ON g.id = @guest_id
LEFT JOIN creative_versions v ON v.creative_id = c.id
    AND v.number = coalesce(sqlc.narg('version_number')::integer,
                            (SELECT cv.number FROM creative_versions cv WHERE cv.id = c.current_version_id))
WHERE c.id = @id
FOR SHARE OF c;

-- name: CommentCreateFacts :one
-- CommentCreateFacts reads what a new comment refers to, in one query: its
-- parent (of this creative; null columns when none is), its anchor's asset
-- (with the creative version it belongs to, when of this creative: the one
-- commented on when the file is in it, as an uploaded file keeps its id in
-- every version that uses it), and which of the mentioned users are
-- members of the organization, with their names, in the order sent.
SELECT p.id AS parent_id, p.parent_id AS parent_parent_id, p.deleted AS parent_deleted, p.visibility AS parent_visibility,
       p.version_id AS parent_version_id, p.version_number AS parent_version_number,
       a.id AS asset_id, a.version_id AS asset_version_id, a.mime_type AS asset_mime_type,
       a.duration_ms AS asset_duration_ms,
       ARRAY(SELECT mb.user_id FROM unnest(@mention_user_ids::uuid[]) WITH ORDINALITY AS x (user_id, n)
             JOIN memberships mb ON mb.organization_id = @organization_id AND mb.user_id = x.user_id
             ORDER BY x.n)::uuid[] AS member_ids,
       ARRAY(SELECT u.name FROM unnest(@mention_user_ids::uuid[]) WITH ORDINALITY AS x (user_id, n)
             JOIN memberships mb ON mb.organization_id = @organization_id AND mb.user_id = x.user_id
             JOIN users u ON u.id = x.user_id
             ORDER BY x.n)::text[] AS member_names
FROM (SELECT 1) AS one
LEFT JOIN comments p ON p.id = sqlc.narg('parent_id')::uuid AND p.creative_id = @creative_id
LEFT JOIN assets a ON a.id = sqlc.narg('asset_id')::uuid
    AND a.version_id = (SELECT fa.version_id FROM assets fa
                        JOIN creative_versions av ON av.id = fa.version_id AND av.creative_id = @creative_id
                        WHERE fa.id = sqlc.narg('asset_id')::uuid
                        ORDER BY fa.version_id = sqlc.narg('version_id')::uuid DESC NULLS LAST
                        LIMIT 1);

-- name: CommentInsert :one
-- CommentInsert writes a member's comment (author_id) or a guest's
-- (author_guest_id, with the name and verification of their session).
INSERT INTO comments (creative_id, version_id, version_number, parent_id, author_id, author_guest_id, visibility,
                      body, anchor, mention_user_ids, created_at, author_guest_name, author_verified)
VALUES (@creative_id, @version_id, @version_number, sqlc.narg('parent_id')::uuid, sqlc.narg('author_id')::uuid,
        sqlc.narg('author_guest_id')::uuid, @visibility, @body, sqlc.narg('anchor')::jsonb, @mention_user_ids::uuid[], @created_at,
        sqlc.narg('author_guest_name')::text, sqlc.narg('author_verified')::boolean)
RETURNING id;

-- name: CommentLock :one
-- CommentLock locks a comment of a creative of an organization for a
-- change, and reads what the rules need: the creative (locked against a
-- concurrent archive), the caller's role, whether the comment has replies
-- and the transaction's clock. No row: not visible to the caller.
SELECT sqlc.embed(cm), c.author_id AS creative_author_id, c.reviewer_id AS creative_reviewer_id,
       c.review_status, c.version AS creative_version, c.current_version_id, m.role,
       (SELECT v.number FROM creative_versions v WHERE v.id = c.current_version_id) AS current_version_number,
       EXISTS (SELECT 1 FROM comments r WHERE r.parent_id = cm.id) AS has_replies,
       now()::timestamptz AS now
FROM comments cm
JOIN creatives c ON c.id = cm.creative_id
JOIN memberships m ON m.organization_id = c.organization_id AND m.user_id = @caller_id
WHERE cm.id = @id AND cm.creative_id = @creative_id AND c.organization_id = @organization_id
FOR UPDATE OF cm FOR SHARE OF c;

-- name: CommentLockGuest :one
-- CommentLockGuest is CommentLock for a guest: a comment of a creative
-- the guest's share holds, and never an internal one (no row: the 404 of
-- none).
SELECT sqlc.embed(cm), c.author_id AS creative_author_id, c.reviewer_id AS creative_reviewer_id,
       c.review_status, c.version AS creative_version, c.current_version_id, 'guest'::text AS role,
       (SELECT v.number FROM creative_versions v WHERE v.id = c.current_version_id) AS current_version_number,
       EXISTS (SELECT 1 FROM comments r WHERE r.parent_id = cm.id) AS has_replies,
       now()::timestamptz AS now
FROM comments cm
JOIN creatives c ON c.id = cm.creative_id
JOIN share_creatives sc ON sc.creative_id = c.id AND sc.share_id = @share_id
WHERE cm.id = @id AND cm.creative_id = @creative_id AND cm.visibility = 'everyone'
FOR UPDATE OF cm FOR SHARE OF c;

-- name: CommentUpdate :exec
UPDATE comments
SET body = @body, edited_at = sqlc.narg('edited_at')::timestamptz,
    resolved_by = sqlc.narg('resolved_by')::uuid, resolved_by_guest_id = sqlc.narg('resolved_by_guest_id')::uuid,
    resolved_at = sqlc.narg('resolved_at')::timestamptz,
    addressed_in_version = sqlc.narg('addressed_in_version')::integer
WHERE id = @id;

-- name: CommentTombstone :exec
-- CommentTombstone keeps a deleted comment that has replies, emptied.
UPDATE comments SET deleted = true, body = '', anchor = NULL, mention_user_ids = '{}'
WHERE id = @id;

-- name: CommentDelete :exec
-- CommentDelete removes a comment without replies, and its parent when
-- that is a tombstone left without replies by it (a thread of nothing).
WITH gone AS (
    DELETE FROM comments WHERE comments.id = @id RETURNING parent_id
)
DELETE FROM comments p
USING gone
WHERE p.id = gone.parent_id AND p.deleted
  AND NOT EXISTS (SELECT 1 FROM comments r WHERE r.parent_id = p.id AND r.id <> @id);

-- name: CommentShownGet :one
SELECT * FROM comments_shown WHERE id = @id;

-- name: CommentPage :many
-- CommentPage reads a page of a creative's comments, oldest first, after
-- after_seq (0 for the first page). Each CommentPage* query is one shape of
-- the list with the index that serves it, so its plan never depends on
-- which filters a request sent. mentioning (the caller, for mentions=me)
-- only narrows what the index found, as visibility (a guest's lists:
-- everyone) does.
SELECT * FROM comments_shown
WHERE creative_id = @creative_id AND seq > @after_seq::bigint
  AND (sqlc.narg('mentioning')::uuid IS NULL OR sqlc.narg('mentioning')::uuid = ANY(mention_user_ids))
  AND (sqlc.narg('visibility')::text IS NULL OR visibility = sqlc.narg('visibility')::text)
ORDER BY seq
LIMIT @row_limit;

-- name: CommentPageByVersion :many
SELECT * FROM comments_shown
WHERE creative_id = @creative_id AND version_number = @version_number AND seq > @after_seq::bigint
  AND (sqlc.narg('mentioning')::uuid IS NULL OR sqlc.narg('mentioning')::uuid = ANY(mention_user_ids))
  AND (sqlc.narg('visibility')::text IS NULL OR visibility = sqlc.narg('visibility')::text)
ORDER BY seq
LIMIT @row_limit;

-- name: CommentPageTopLevel :many
SELECT * FROM comments_shown
WHERE creative_id = @creative_id AND parent_id IS NULL AND resolved = @resolved AND seq > @after_seq::bigint
  AND (sqlc.narg('live')::boolean IS NULL OR deleted <> sqlc.narg('live')::boolean)
  AND (sqlc.narg('mentioning')::uuid IS NULL OR sqlc.narg('mentioning')::uuid = ANY(mention_user_ids))
ORDER BY seq
LIMIT @row_limit;

-- name: CommentPageTopLevelByVersion :many
SELECT * FROM comments_shown
WHERE creative_id = @creative_id AND version_number = @version_number AND parent_id IS NULL
  AND resolved = @resolved AND seq > @after_seq::bigint
  AND (sqlc.narg('live')::boolean IS NULL OR deleted <> sqlc.narg('live')::boolean)
  AND (sqlc.narg('mentioning')::uuid IS NULL OR sqlc.narg('mentioning')::uuid = ANY(mention_user_ids))
ORDER BY seq
LIMIT @row_limit;

-- name: CommentPageReplies :many
-- CommentPageReplies reads a thread's replies; a version filter only
-- narrows what the parent index found (replies share their parent's version).
SELECT * FROM comments_shown
WHERE parent_id = @parent_id::uuid AND creative_id = @creative_id AND seq > @after_seq::bigint
  AND (sqlc.narg('version_number')::integer IS NULL OR version_number = sqlc.narg('version_number')::integer)
  AND (sqlc.narg('mentioning')::uuid IS NULL OR sqlc.narg('mentioning')::uuid = ANY(mention_user_ids))
  AND (sqlc.narg('visibility')::text IS NULL OR visibility = sqlc.narg('visibility')::text)
ORDER BY seq
LIMIT @row_limit;

-- name: CommentOpenInternalCounts :many
-- CommentOpenInternalCounts counts, of the versions given, the open
-- internal top-level comments of each and of its creative: what a
-- guest's openCommentCount and openThreadCount leave out; one row per
-- version.
SELECT v.id AS version_id,
       (SELECT count(*) FROM comments cm
        WHERE cm.version_id = v.id AND cm.parent_id IS NULL AND cm.resolved_at IS NULL AND NOT cm.deleted
          AND cm.visibility = 'internal')::integer AS open_comments,
       (SELECT count(*) FROM comments cm
        WHERE cm.creative_id = v.creative_id AND cm.parent_id IS NULL AND cm.resolved_at IS NULL AND NOT cm.deleted
          AND cm.visibility = 'internal')::integer AS open_threads
FROM creative_versions v
WHERE v.id = ANY(@ids::uuid[]);
