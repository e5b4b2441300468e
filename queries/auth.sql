-- Users, organizations, memberships and sign-in throttling.

-- name: UserGetForSignIn :one
-- UserGetForSignIn matches the email case-insensitively (users_email_key).
SELECT id, email, name, password_hash
FROM users
WHERE lower(email) = lower(@email);

-- name: UserGetByEmail :one
SELECT id, email, name
FROM users
WHERE lower(email) = lower(@email);

-- name: UserInsert :one
INSERT INTO users (email, name, password_hash)
VALUES (@email, @name, @password_hash)
RETURNING id, email, name;

-- name: UserInsertIfAbsent :one
-- UserInsertIfAbsent returns no row when the email is taken, so re-runs of
-- the seed add nothing.
INSERT INTO users (email, name, password_hash)
VALUES (@email, @name, @password_hash)
ON CONFLICT DO NOTHING
RETURNING id;

-- name: UserList :many
-- UserList gives every user with their memberships as "slug:role" items.
SELECT u.id, u.email, u.name, u.created_at,
       coalesce(string_agg(o.slug || ':' || m.role, ',' ORDER BY o.slug), '')::text AS memberships
FROM users u
LEFT JOIN memberships m ON m.user_id = u.id
LEFT JOIN organizations o ON o.id = m.organization_id
GROUP BY u.id
ORDER BY lower(u.email);

-- name: UserSetPassword :one
UPDATE users SET password_hash = @password_hash
WHERE lower(email) = lower(@email)
RETURNING id;

-- name: SessionRevokeAllForUser :execrows
-- SessionRevokeAllForUser signs a user out everywhere (after a password change).
UPDATE sessions SET revoked_at = now()
WHERE user_id = @user_id AND revoked_at IS NULL;

-- name: OrganizationInsert :one
INSERT INTO organizations (name, slug)
VALUES (@name, @slug)
RETURNING id, name, slug;

-- name: OrganizationInsertIfAbsent :one
-- OrganizationInsertIfAbsent returns no row when the slug is taken.
INSERT INTO organizations (name, slug)
VALUES (@name, @slug)
ON CONFLICT (slug) DO NOTHING
RETURNING id;

-- name: OrganizationGetBySlug :one
SELECT id, name, slug
FROM organizations
WHERE slug = @slug;

-- name: MembershipUpsert :one
-- MembershipUpsert adds a member or changes their role; previous_role is
-- empty when the membership is new.
WITH previous AS (
    SELECT role FROM memberships WHERE organization_id = @organization_id AND user_id = @user_id
)
INSERT INTO memberships (organization_id, user_id, role)
VALUES (@organization_id, @user_id, @role)
ON CONFLICT (organization_id, user_id) DO UPDATE SET role = excluded.role
RETURNING coalesce((SELECT role FROM previous), '')::text AS previous_role;

-- name: MembershipInsertIfAbsent :execrows
INSERT INTO memberships (organization_id, user_id, role)
VALUES (@organization_id, @user_id, @role)
ON CONFLICT (organization_id, user_id) DO NOTHING;

-- name: MembershipDelete :execrows
DELETE FROM memberships WHERE organization_id = @organization_id AND user_id = @user_id;

-- name: MembershipListByUser :many
-- MembershipListByUser is the memberships of a session body, by organization name.
SELECT o.id AS organization_id, o.name AS organization_name, m.role
FROM memberships m
JOIN organizations o ON o.id = m.organization_id
WHERE m.user_id = @user_id
ORDER BY o.name, o.id;

-- name: SignInFailureList :many
-- SignInFailureList reads the failure counters of a sign-in's subjects, with
-- the database's clock so every replica measures windows the same way.
SELECT subject, failures, window_start, now()::timestamptz AS now
FROM sign_in_failures
WHERE subject = ANY(@subjects::text[]);

-- name: SignInFailureRecord :exec
-- SignInFailureRecord counts one failure for each subject atomically: a new
-- subject or an expired window starts a new window at 1.
INSERT INTO sign_in_failures (subject, failures, window_start)
SELECT s, 1, now() FROM unnest(@subjects::text[]) AS s
ON CONFLICT (subject) DO UPDATE
SET failures = CASE
        WHEN sign_in_failures.window_start <= now() - make_interval(secs => @window_seconds::integer) THEN 1
        ELSE sign_in_failures.failures + 1
    END,
    window_start = CASE
        WHEN sign_in_failures.window_start <= now() - make_interval(secs => @window_seconds::integer) THEN now()
        ELSE sign_in_failures.window_start
    END;

-- name: SignInFailureClear :exec
DELETE FROM sign_in_failures WHERE subject = @subject;

-- name: SignInFailureDeleteExpired :execrows
-- SignInFailureDeleteExpired purges counters whose window has ended.
DELETE FROM sign_in_failures
WHERE window_start <= now() - make_interval(secs => @window_seconds::integer);
