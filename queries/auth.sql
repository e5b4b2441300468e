-- Users, organizations, memberships and sign-in throttling.

-- name: UserGetForSignIn :one
-- UserGetForSignIn finds a user by email; callers pass it through
-- auth.NormalizeEmail, the only form stored (users_email_normalised).
SELECT id, email, name, password_hash, operator
FROM users
WHERE email = @email;

-- name: UserGetByEmail :one
-- UserGetByEmail takes a normalised email, as UserGetForSignIn.
SELECT id, email, name
FROM users
WHERE email = @email;

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
ORDER BY u.email;

-- name: UserSetPassword :one
UPDATE users SET password_hash = @password_hash
WHERE email = @email
RETURNING id;

-- name: UserSetOperator :one
-- UserSetOperator makes the user a platform operator, or not.
UPDATE users SET operator = @operator
WHERE email = @email
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

-- name: SignInFailureLock :many
-- SignInFailureLock takes a sign-in's counters for its transaction,
-- creating missing ones at zero, and reads them with the database's clock
-- (so every replica measures windows the same way). Concurrent sign-ins of
-- one subject queue here, each seeing the attempts counted before it.
-- Subjects are locked in the order given; callers give them sorted, so two
-- sign-ins never wait for each other in a cycle.
INSERT INTO sign_in_failures (subject, failures, window_start)
SELECT s, 0, now() FROM unnest(@subjects::text[]) AS s
ON CONFLICT (subject) DO UPDATE SET failures = sign_in_failures.failures
RETURNING subject, failures, window_start, now()::timestamptz AS now;

-- name: SignInFailureRecord :exec
-- SignInFailureRecord counts one attempt for each subject: a new subject or
-- an expired window starts a new window at 1.
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

-- name: SignInFailureDiscount :exec
-- SignInFailureDiscount takes back one counted attempt that succeeded.
UPDATE sign_in_failures SET failures = failures - 1
WHERE subject = @subject AND failures > 0;

-- name: SignInFailureDeleteExpired :execrows
-- SignInFailureDeleteExpired purges counters whose window has ended.
DELETE FROM sign_in_failures
WHERE window_start <= now() - make_interval(secs => @window_seconds::integer);
