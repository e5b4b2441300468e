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

-- name: AccessTokenOwnerLock :exec
-- AccessTokenOwnerLock makes one user's token creations take turns, to
-- the end of their transaction (store.LockAccessTokenOwner, with the
-- hash of the user's id), so the count AccessTokenCreate reads in the next
-- statement, on a snapshot taken after the lock, sees every token made
-- before it: the limit holds under concurrent creates, on any replica.
-- An advisory lock, not the users row: sign-ins and foreign key checks
-- never wait on it.
SELECT pg_advisory_xact_lock(2058001, hashtext(CAST(sqlc.arg(user_id)::uuid AS text)));

-- name: AccessTokenCreate :one
-- AccessTokenCreate makes a token while the user holds fewer than
-- max_active that still work (not revoked, not expired); no row when
-- they hold that many. Run after AccessTokenOwnerLock.
INSERT INTO access_tokens (user_id, name, scopes, token_hash, expires_at)
SELECT @user_id::uuid, @name::text, @scopes::text[], @token_hash::bytea, @expires_at::timestamptz
WHERE (SELECT count(*) FROM access_tokens
       WHERE user_id = @user_id::uuid AND revoked_at IS NULL AND expires_at > now()) < @max_active::integer
RETURNING id, name, scopes, created_at, expires_at, last_used_at;

-- name: AccessTokenPage :many
-- AccessTokenPage pages a user's tokens that still work, newest first,
-- after the cursor's (created_at, id).
SELECT id, name, scopes, created_at, expires_at, last_used_at
FROM access_tokens
WHERE user_id = @user_id AND revoked_at IS NULL AND expires_at > now()
  AND (created_at, id) < (coalesce(sqlc.narg('cursor_created_at')::timestamptz, 'infinity'),
                          coalesce(sqlc.narg('cursor_id')::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
ORDER BY created_at DESC, id DESC
LIMIT @row_limit;

-- name: AccessTokenRevoke :execrows
UPDATE access_tokens SET revoked_at = now()
WHERE id = @id AND user_id = @user_id AND revoked_at IS NULL;
