-- name: AccessTokenGet :one
-- AccessTokenGet finds the live token of a hash with its user and, for a
-- non-empty idempotency key, the live answer stored under it for that
-- user, in one statement (as SessionGetBatch does for a session).
SELECT t.id, t.user_id, t.scopes, t.last_used_at, u.email, u.name, u.operator,
       k.fingerprint AS stored_fingerprint, k.status_code AS stored_status_code,
       k.response_body AS stored_response_body, k.response_location AS stored_response_location
FROM access_tokens t
JOIN users u ON u.id = t.user_id
LEFT JOIN LATERAL (
    SELECT fingerprint, status_code, response_body, response_location
    FROM idempotency_keys
    WHERE user_id = t.user_id AND key = @idempotency_key::text AND expires_at > now()
    LIMIT 1
) k ON true
WHERE t.token_hash = @token_hash
  AND t.revoked_at IS NULL
  AND t.expires_at > now();

-- name: AccessTokenTouch :exec
-- AccessTokenTouch records a use; callers write it at most once a minute
-- per token (the WHERE keeps two replicas from both writing it).
UPDATE access_tokens SET last_used_at = now()
WHERE id = @id AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute');

-- name: AccessTokenCreate :one
INSERT INTO access_tokens (user_id, name, scopes, token_hash, expires_at)
VALUES (@user_id, @name, @scopes::text[], @token_hash, @expires_at)
RETURNING id, name, scopes, created_at, expires_at, last_used_at;

-- name: AccessTokenList :many
-- AccessTokenList is a user's tokens that still work, newest first.
SELECT id, name, scopes, created_at, expires_at, last_used_at
FROM access_tokens
WHERE user_id = @user_id AND revoked_at IS NULL AND expires_at > now()
ORDER BY created_at DESC, id DESC;

-- name: AccessTokenRevoke :execrows
UPDATE access_tokens SET revoked_at = now()
WHERE id = @id AND user_id = @user_id AND revoked_at IS NULL;
