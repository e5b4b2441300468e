-- Shares: links that let guests outside the organization review chosen
-- creatives (docs/shares.md).

-- name: ShareOrganizationLock :one
-- ShareOrganizationLock serialises the creation of an organization's
-- shares, so two at once cannot both pass the live-share limit. NO KEY
-- UPDATE does not block the foreign-key checks of other writes.
SELECT id FROM organizations WHERE id = @id FOR NO KEY UPDATE;

-- name: ShareLiveCount :one
-- ShareLiveCount counts an organization's shares neither revoked nor
-- expired.
SELECT count(*) FROM shares
WHERE organization_id = @organization_id AND revoked_at IS NULL AND expires_at > now();

-- name: ShareCreativesOfOrganization :many
-- ShareCreativesOfOrganization reads, of the ids given, the creatives of
-- the organization (an id of another organization is not among them).
SELECT id, author_id, review_status FROM creatives
WHERE organization_id = @organization_id AND id = ANY(@ids::uuid[]);

-- name: ShareCreate :one
INSERT INTO shares (organization_id, token_hash, permission, expires_at, password_hash, created_by)
VALUES (@organization_id, @token_hash, @permission, @expires_at, sqlc.narg('password_hash'), @created_by)
RETURNING *;

-- name: ShareCreativesAdd :exec
INSERT INTO share_creatives (share_id, creative_id, position)
SELECT @share_id, c.id, c.ord::integer
FROM unnest(@creative_ids::uuid[]) WITH ORDINALITY AS c(id, ord);

-- name: ShareInvitationsAdd :exec
-- ShareInvitationsAdd records a new share's invitations, each with the
-- hash of its own token and its link's tokens sealed for it (none when
-- email is off: empty arrays).
INSERT INTO share_invitations (share_id, email, name, position, token_sealed, token_hash)
SELECT @share_id, i.email, nullif((@names::text[])[i.ord], ''), i.ord::integer, (@tokens_sealed::bytea[])[i.ord],
       (@token_hashes::bytea[])[i.ord]
FROM unnest(@emails::text[]) WITH ORDINALITY AS i(email, ord)
ON CONFLICT (share_id, email) DO NOTHING;

-- name: ShareInvitationGetByTokenHash :one
-- ShareInvitationGetByTokenHash reads the invitation of a share whose own
-- token has this hash.
SELECT email, token_hash FROM share_invitations WHERE share_id = @share_id AND token_hash = @token_hash;

-- name: ShareMemberEmails :many
-- ShareMemberEmails returns, of the normalised emails given, those of
-- members of the organization: members sign in, they are no guests.
SELECT u.email FROM users u JOIN memberships m ON m.user_id = u.id
WHERE m.organization_id = @organization_id AND u.email = ANY(@emails::text[]);

-- name: ShareOpenerAdd :exec
-- ShareOpenerAdd remembers a client address that opened a share.
INSERT INTO share_openers (share_id, address) VALUES (@share_id, @address)
ON CONFLICT DO NOTHING;

-- name: ShareOpenerExists :one
SELECT EXISTS (SELECT 1 FROM share_openers WHERE share_id = @share_id AND address = @address);

-- name: ShareGet :one
-- ShareGet reads one share of an organization with its creator's name and
-- its creatives in the order they were given.
SELECT sqlc.embed(s), u.name AS created_by_name,
       coalesce((SELECT array_agg(sc.creative_id ORDER BY sc.position) FROM share_creatives sc WHERE sc.share_id = s.id),
                '{}')::uuid[] AS creative_ids
FROM shares s JOIN users u ON u.id = s.created_by
WHERE s.id = @id AND s.organization_id = @organization_id;

-- name: SharePage :many
-- SharePage pages an organization's shares newest first; with a creator,
-- only theirs.
SELECT sqlc.embed(s), u.name AS created_by_name,
       coalesce((SELECT array_agg(sc.creative_id ORDER BY sc.position) FROM share_creatives sc WHERE sc.share_id = s.id),
                '{}')::uuid[] AS creative_ids
FROM shares s JOIN users u ON u.id = s.created_by
WHERE s.organization_id = @organization_id
  AND (sqlc.narg('created_by')::uuid IS NULL OR s.created_by = sqlc.narg('created_by'))
  AND (s.created_at, s.id) < (coalesce(sqlc.narg('cursor_created_at')::timestamptz, 'infinity'),
                              coalesce(sqlc.narg('cursor_id')::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
ORDER BY s.created_at DESC, s.id DESC
LIMIT @row_limit;

-- name: ShareInvitationsOf :many
-- ShareInvitationsOf reads the invitations of the shares given, each
-- share's in the order they were given.
SELECT * FROM share_invitations WHERE share_id = ANY(@share_ids::uuid[]) ORDER BY share_id, position;

-- name: ShareRevoke :many
-- ShareRevoke revokes a share at once and returns when; a share revoked
-- already is left as it is (no row).
UPDATE shares SET revoked_at = now()
WHERE id = @id AND organization_id = @organization_id AND revoked_at IS NULL
RETURNING revoked_at::timestamptz AS revoked_at;

-- name: ShareGetByTokenHash :one
-- ShareGetByTokenHash reads the live share of a token (neither revoked
-- nor expired) with its organization: an unknown, a revoked and an
-- expired token are the same missing row, read the same way.
SELECT sqlc.embed(s), o.name AS organization_name
FROM shares s JOIN organizations o ON o.id = s.organization_id
WHERE s.token_hash = @token_hash AND s.revoked_at IS NULL AND s.expires_at > now();

-- name: GuestUpsert :one
-- GuestUpsert is the guest of an email on a share, made on their first
-- visit; a later visit keeps the id, and takes the name given only when
-- its session proved the inbox (an unverified one renames nobody).
INSERT INTO guests (share_id, email, name) VALUES (@share_id, @email, @name)
ON CONFLICT (share_id, email) DO UPDATE
SET name = CASE WHEN @verified::boolean THEN excluded.name ELSE guests.name END
RETURNING *;

-- name: ShareInvitationSeen :exec
UPDATE share_invitations SET last_seen_at = now() WHERE share_id = @share_id AND email = @email;

-- name: GuestSessionCreate :one
INSERT INTO guest_sessions (guest_id, token_hash, csrf_token, expires_at, verified, name)
VALUES (@guest_id, @token_hash, @csrf_token, @expires_at, @verified, @name)
RETURNING id;

-- name: GuestSessionCodeLock :one
-- GuestSessionCodeLock takes a live guest session for its code, with its
-- guest and share, and the database's clock.
SELECT gs.id, gs.guest_id, gs.name, gs.expires_at, gs.code_hash, gs.code_expires_at, gs.code_failures,
       g.email, s.id AS share_id, s.organization_id, s.permission, s.expires_at AS share_expires_at,
       o.name AS organization_name, now()::timestamptz AS now
FROM guest_sessions gs
JOIN guests g ON g.id = gs.guest_id
JOIN shares s ON s.id = g.share_id
JOIN organizations o ON o.id = s.organization_id
WHERE gs.id = @id AND gs.expires_at > now() AND s.revoked_at IS NULL AND s.expires_at > now()
FOR UPDATE OF gs;

-- name: GuestSessionCodeSet :exec
-- GuestSessionCodeSet gives a session a new code, replacing any other.
UPDATE guest_sessions SET code_hash = @code_hash, code_expires_at = @code_expires_at, code_failures = 0
WHERE id = @id;

-- name: GuestSessionCodeFailed :exec
-- GuestSessionCodeFailed counts a wrong code; the last allowed one ends
-- the code.
UPDATE guest_sessions
SET code_failures = code_failures + 1,
    code_hash = CASE WHEN code_failures + 1 >= @max_failures::integer THEN NULL ELSE code_hash END,
    code_expires_at = CASE WHEN code_failures + 1 >= @max_failures::integer THEN NULL ELSE code_expires_at END
WHERE id = @id;

-- name: GuestSessionCodeClear :exec
UPDATE guest_sessions SET code_hash = NULL, code_expires_at = NULL, code_failures = 0 WHERE id = @id;

-- name: GuestSessionDelete :exec
DELETE FROM guest_sessions WHERE id = @id;

-- name: GuestSessionGet :one
-- GuestSessionGet finds the live guest session of a token: its own
-- expiry not passed and its share neither revoked nor expired. invited
-- and account_id are what who decides reads (review.guestDecider): the
-- share invited the guest's email, and the user whose email it is.
SELECT gs.id, gs.csrf_token, g.id AS guest_id, g.email, gs.name, gs.verified, s.id AS share_id, s.organization_id, s.permission,
       EXISTS (SELECT 1 FROM share_invitations si WHERE si.share_id = s.id AND si.email = g.email) AS invited,
       account.id AS account_id
FROM guest_sessions gs
JOIN guests g ON g.id = gs.guest_id
JOIN shares s ON s.id = g.share_id
LEFT JOIN users account ON account.email = g.email
WHERE gs.token_hash = @token_hash AND gs.expires_at > now()
  AND s.revoked_at IS NULL AND s.expires_at > now();

-- name: GuestSessionDeleteEnded :execrows
-- GuestSessionDeleteEnded purges guest sessions a day after they stopped
-- working: their own expiry, or their share's revocation or expiry.
DELETE FROM guest_sessions gs
USING guests g, shares s
WHERE g.id = gs.guest_id AND s.id = g.share_id
  AND least(gs.expires_at, s.expires_at, coalesce(s.revoked_at, 'infinity')) < now() - interval '1 day';

-- name: ShareCreativeGet :one
-- ShareCreativeGet reads one creative of a share with the names its
-- detail shows; a creative the share does not hold is no row, as one
-- that does not exist.
SELECT sqlc.embed(c), au.name AS author_name, rv.name AS reviewer_name,
       cl.name AS client_name, tk.name AS task_name
FROM share_creatives sc
JOIN creatives c ON c.id = sc.creative_id
JOIN users au ON au.id = c.author_id
LEFT JOIN users rv ON rv.id = c.reviewer_id
LEFT JOIN clients cl ON cl.id = c.client_id
LEFT JOIN tasks tk ON tk.id = c.task_id
WHERE sc.share_id = @share_id AND c.id = @id;

-- name: ShareCreativePage :many
-- ShareCreativePage pages a share's creatives in the order the share
-- lists them, after the position given: a share holds at most 50, which
-- the primary key's index finds and the sort orders.
SELECT sqlc.embed(c), au.name AS author_name, rv.name AS reviewer_name,
       cl.name AS client_name, tk.name AS task_name, sc.position
FROM share_creatives sc
JOIN creatives c ON c.id = sc.creative_id
JOIN users au ON au.id = c.author_id
LEFT JOIN users rv ON rv.id = c.reviewer_id
LEFT JOIN clients cl ON cl.id = c.client_id
LEFT JOIN tasks tk ON tk.id = c.task_id
WHERE sc.share_id = @share_id AND sc.position > @after_position
ORDER BY sc.position
LIMIT @row_limit;

-- name: ShareHoldsCreative :one
SELECT EXISTS (SELECT 1 FROM share_creatives WHERE share_id = @share_id AND creative_id = @creative_id);

-- name: ShareHoldsAsset :one
-- ShareHoldsAsset reports whether an asset is a file of a version of a
-- creative the share holds.
SELECT EXISTS (
    SELECT 1 FROM share_creatives sc
    JOIN creative_versions v ON v.creative_id = sc.creative_id
    JOIN assets a ON a.version_id = v.id
    WHERE sc.share_id = @share_id AND a.id = @asset_id
);
