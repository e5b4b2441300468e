-- name: SessionGetByTokenHash :one
-- SessionGetByTokenHash finds a live session: not revoked, neither idle nor
-- absolute expiry passed. With a non-empty idempotency_key it also reads,
-- in the same statement, the live answer stored under that key for the
-- session's user (the stored_ columns are null when there is none; no key
-- is empty), so a replayed command costs one round trip in all. The key is
-- read in a LATERAL subquery that LIMIT keeps from being flattened: a
-- plain join let the generic plan, made while the table was small, scan
-- the primary key by key alone.
SELECT s.id, s.user_id, s.csrf_token, s.last_seen_at, u.email, u.name, u.operator,
       k.fingerprint AS stored_fingerprint, k.status_code AS stored_status_code,
       k.response_body AS stored_response_body, k.response_location AS stored_response_location
FROM sessions s
JOIN users u ON u.id = s.user_id
LEFT JOIN LATERAL (
    SELECT fingerprint, status_code, response_body, response_location
    FROM idempotency_keys
    WHERE user_id = s.user_id AND key = @idempotency_key::text AND expires_at > now()
    LIMIT 1
) k ON true
WHERE s.token_hash = @token_hash
  AND s.revoked_at IS NULL
  AND s.idle_expires_at > now()
  AND s.absolute_expires_at > now();

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
