-- name: IdempotencyKeyGet :one
-- IdempotencyKeyGet reads a live stored outcome; replays need nothing else.
SELECT fingerprint, status_code, response_body, response_location
FROM idempotency_keys
WHERE user_id = @user_id AND key = @key AND expires_at > now();

-- name: IdempotencyKeyClaim :execrows
-- IdempotencyKeyClaim takes the key for this transaction: a new key is
-- inserted, an expired one is taken over, a live one is left alone (0 rows).
-- A key held by an uncommitted transaction makes this wait (lock_timeout).
INSERT INTO idempotency_keys (user_id, key, fingerprint, expires_at)
VALUES (@user_id, @key, @fingerprint, now() + make_interval(secs => @ttl_seconds::integer))
ON CONFLICT (user_id, key) DO UPDATE
SET fingerprint = excluded.fingerprint,
    status_code = NULL,
    response_body = NULL,
    response_location = NULL,
    created_at = now(),
    expires_at = excluded.expires_at
WHERE idempotency_keys.expires_at <= now();

-- name: IdempotencyKeySetResponse :exec
UPDATE idempotency_keys
SET status_code = @status_code, response_body = @response_body, response_location = @response_location
WHERE user_id = @user_id AND key = @key;

-- name: IdempotencyKeyDeleteExpired :execrows
DELETE FROM idempotency_keys WHERE expires_at <= now();
