-- Live streams (docs/events.md, "The live stream"): what each replica's
-- stream hub reads. Events are read by seq, the published order.

-- name: OutboxPublishedNotify :exec
-- OutboxPublishedNotify tells every replica's stream hub, at the commit of
-- the publishing transaction, that events up to seq are published.
SELECT pg_notify('outbox_published', (@seq::bigint)::text);

-- name: OutboxSeqLast :one
-- OutboxSeqLast is the last published seq (0 when none): where a hub
-- starts reading.
SELECT coalesce(max(seq), 0)::bigint AS seq FROM outbox_events;

-- name: OutboxStreamAfter :many
-- OutboxStreamAfter reads published events after a seq, in order: the
-- hub's one read for every stream of its replica.
SELECT * FROM outbox_events
WHERE seq > @after::bigint
ORDER BY seq
LIMIT @batch_size;

-- name: OutboxStreamForUser :many
-- OutboxStreamForUser reads one caller's published events in (after,
-- until], in order: what a resumed stream missed. The caller sees their own
-- deposit events and their organizations' creative events; not the
-- shares' (events.MembersStream).
SELECT * FROM outbox_events
WHERE seq > @after::bigint AND seq <= @until::bigint
  AND (user_id = @user_id::uuid OR (organization_id = ANY (@organization_ids::uuid[]) AND type NOT LIKE 'share.%'))
ORDER BY seq
LIMIT @batch_size;

-- name: StreamAccessGet :many
-- StreamAccessGet rechecks the streams of a replica in one statement: of
-- the given sessions, those still live (not revoked, not expired), each
-- with its user's organizations. A stream whose session is missing ends;
-- one whose organizations changed ends too, and its reconnect resumes with
-- the new ones. (Reading does not extend the session's idle life.)
SELECT s.id, s.user_id,
       array(SELECT m.organization_id FROM memberships m WHERE m.user_id = s.user_id ORDER BY m.organization_id)::uuid[] AS organization_ids
FROM sessions s
WHERE s.id = ANY (@session_ids::uuid[])
  AND s.revoked_at IS NULL
  AND s.idle_expires_at > now()
  AND s.absolute_expires_at > now();

-- name: MembershipOrganizationIDs :many
-- MembershipOrganizationIDs lists the organizations a user belongs to, the
-- creative events a stream of theirs carries.
SELECT organization_id FROM memberships WHERE user_id = @user_id ORDER BY organization_id;

-- name: SessionRevokedNotify :exec
-- SessionRevokedNotify tells every replica's stream hub that a session
-- ended, so its streams end at once instead of at the next check.
SELECT pg_notify('sessions_revoked', '');

-- name: GuestStreamAccessGet :many
-- GuestStreamAccessGet rechecks the guest streams of a replica in one
-- statement: of the given guest sessions, those still live (their own
-- expiry not passed, their share neither revoked nor expired). A guest's
-- share never changes its creatives, so there is nothing else to recheck.
SELECT gs.id
FROM guest_sessions gs
JOIN guests g ON g.id = gs.guest_id
JOIN shares s ON s.id = g.share_id
WHERE gs.id = ANY (@session_ids::uuid[])
  AND gs.expires_at > now()
  AND s.revoked_at IS NULL AND s.expires_at > now();

-- name: ShareCreativeIDs :many
-- ShareCreativeIDs lists the creatives of a share: what its guests'
-- streams carry.
SELECT creative_id FROM share_creatives WHERE share_id = @share_id ORDER BY position;
