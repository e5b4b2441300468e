-- name: MembershipRoleGet :one
-- MembershipRoleGet is the caller's role in an organization; no row means
-- the organization is not visible to the caller.
SELECT role FROM memberships WHERE organization_id = @organization_id AND user_id = @user_id;
