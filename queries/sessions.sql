-- name: SessionGetBatch :many
-- SessionGetBatch finds the live sessions of a batch of lookups, the
-- session lookups of requests that queued for the same pooled connection
-- (internal/auth shares it between them): one row per lookup whose token is
-- a live session (not revoked, neither idle nor absolute expiry passed),
-- with ord, the lookup's position in the arrays, from 1 (token_hashes
-- and idempotency_keys are of one length). With a non-empty
-- idempotency key a lookup also reads, in the same statement, the live
-- answer stored under that key for the session's user (the stored_ columns
-- are null when there is none; no key is empty), so a replayed command
-- costs one round trip in all. Both reads are LATERAL subqueries that LIMIT
-- keeps from being flattened: the generic plan reads each lookup's session
-- and key by their unique indexes, whatever the batch's size (a join would
-- be planned for a guess of it, and a plain join on the keys once let the
-- plan made while the table was small scan the primary key by key alone).
SELECT l.ord::integer AS ord, s.id, s.user_id, s.csrf_token, s.last_seen_at, s.email, s.name, s.operator,
       k.fingerprint AS stored_fingerprint, k.status_code AS stored_status_code,
       k.response_body AS stored_response_body, k.response_location AS stored_response_location
FROM unnest(@token_hashes::bytea[]) WITH ORDINALITY AS l (token_hash, ord)
CROSS JOIN LATERAL (
    SELECT s.id, s.user_id, s.csrf_token, s.last_seen_at, u.email, u.name, u.operator
    FROM sessions s
    JOIN users u ON u.id = s.user_id
    WHERE s.token_hash = l.token_hash
      AND s.revoked_at IS NULL
      AND s.idle_expires_at > now()
      AND s.absolute_expires_at > now()
    LIMIT 1
) s
LEFT JOIN LATERAL (
    SELECT fingerprint, status_code, response_body, response_location
    FROM idempotency_keys
    WHERE user_id = s.user_id AND key = (@idempotency_keys::text[])[l.ord] AND expires_at > now()
    LIMIT 1
) k ON true;

-- name: SessionTouch :exec
-- SessionTouch extends the idle expiry, never past the absolute one.
UPDATE sessions
SET last_seen_at = now(),
    idle_expires_at = least(now() + make_interval(secs => @idle_seconds::integer), absolute_expires_at)
WHERE id = @id AND revoked_at IS NULL;

-- name: SessionCreate :one
INSERT INTO sessions (user_id, token_hash, csrf_token, idle_expires_at, absolute_expires_at)
VALUES (@user_id, @token_hash, @csrf_token,
        now() + make_interval(secs => @idle_seconds::integer),
        now() + make_interval(secs => @absolute_seconds::integer))
RETURNING id;

-- name: SessionRevoke :execrows
UPDATE sessions SET revoked_at = now() WHERE id = @id AND revoked_at IS NULL;

-- name: SessionDeleteExpired :execrows
-- SessionDeleteExpired purges sessions a day after they stopped working.
DELETE FROM sessions
WHERE least(idle_expires_at, absolute_expires_at, coalesce(revoked_at, 'infinity')) < now() - interval '1 day';
