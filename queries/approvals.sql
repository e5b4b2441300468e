-- name: ApprovalCreativeGet :one
-- ApprovalCreativeGet reads what an approval record states of a creative
-- the caller may see (no row: not visible); version_id is null when the
-- creative was never approved.
SELECT c.id, c.organization_id, c.number, c.title,
       v.id AS version_id, v.number AS version_number
FROM creatives c
JOIN memberships m ON m.organization_id = c.organization_id AND m.user_id = @caller_id
LEFT JOIN creative_versions v ON v.id = c.approved_version_id
WHERE c.id = @id AND c.organization_id = @organization_id;

-- name: ApprovalAssets :many
SELECT id, file_name, mime_type, size_bytes, sha256
FROM assets
WHERE version_id = @version_id
ORDER BY position;

-- name: ApprovalDecisions :many
-- ApprovalDecisions are the decisions of the round that approved the
-- creative: the review actions that decide (approve, request_changes)
-- after the last submit before its last approval, up to that approval.
-- With a review plan every person's decision is one; the approval is the
-- approve that moved the creative to approved.
WITH approved AS (
    SELECT max(id) AS id FROM creative_events
    WHERE creative_id = @creative_id AND type = 'approve' AND to_status = 'approved'
), round AS (
    SELECT coalesce(max(e.id), 0) AS after
    FROM creative_events e, approved
    WHERE e.creative_id = @creative_id AND e.type = 'submit' AND e.id < approved.id
)
SELECT coalesce(e.actor_id, e.actor_guest_id)::uuid AS actor_id, coalesce(u.name, g.name)::text AS actor_name,
       (e.actor_guest_id IS NOT NULL)::boolean AS actor_is_guest, e.type, e.created_at
FROM creative_events e
LEFT JOIN users u ON u.id = e.actor_id
LEFT JOIN guests g ON g.id = e.actor_guest_id
CROSS JOIN approved
CROSS JOIN round
WHERE e.creative_id = @creative_id AND e.type IN ('approve', 'request_changes')
  AND e.id > round.after AND e.id <= approved.id
ORDER BY e.id;

-- name: CreativeThreadCounts :one
-- CreativeThreadCounts counts a creative's threads (its top-level comments
-- of every version, deleted ones aside) resolved and open as they stood at
-- as_of: the one count of a creative's threads (docs/review.md).
SELECT count(*) FILTER (WHERE resolved_at IS NOT NULL AND resolved_at <= @as_of)::integer AS resolved,
       count(*) FILTER (WHERE resolved_at IS NULL OR resolved_at > @as_of)::integer AS open
FROM comments
WHERE creative_id = @creative_id AND parent_id IS NULL AND NOT deleted AND created_at <= @as_of;
