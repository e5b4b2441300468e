-- name: MembershipRoleGet :one
-- MembershipRoleGet is the caller's role in an organization; no row means
-- the organization is not visible to the caller.
SELECT role FROM memberships WHERE organization_id = @organization_id AND user_id = @user_id;

-- name: MemberPage :many
-- MemberPage reads a page of an organization's members by name, after the
-- member after_id (keyset pagination on (name, id); null for the first
-- page), optionally only those with one of roles.
SELECT u.id, u.name, m.role
FROM memberships m
JOIN users u ON u.id = m.user_id
WHERE m.organization_id = @organization_id
  AND (cardinality(@roles::text[]) = 0 OR m.role = ANY(@roles::text[]))
  AND (sqlc.narg('after_id')::uuid IS NULL
       OR (u.name, u.id) > (SELECT a.name, a.id FROM users a WHERE a.id = sqlc.narg('after_id')::uuid))
ORDER BY u.name, u.id
LIMIT @row_limit;
