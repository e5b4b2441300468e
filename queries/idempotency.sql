-- name: IdempotencyKeyGet :one
-- IdempotencyKeyGet reads a live stored outcome; replays need nothing else.
SELECT fingerprint, status_code, response_body, response_location
FROM idempotency_keys
WHERE user_id = @user_id AND key = @key AND expires_at > now();

-- name: IdempotencyKeyInsert :exec
-- IdempotencyKeyInsert claims a key under which no live answer was found
-- before the transaction. It travels with BEGIN and the command's first
-- statement, so the claim costs no round trip of its own. A key that
-- exists by now (committed since that read, or expired and not yet purged)
-- fails it with a unique violation, and the command runs again after
-- IdempotencyKeyClaimOrGet; a key an uncommitted transaction holds makes
-- it wait (lock_timeout).
INSERT INTO idempotency_keys (user_id, key, fingerprint, expires_at)
VALUES (@user_id, @key, @fingerprint, now() + make_interval(secs => @ttl_seconds::integer));

-- name: IdempotencyKeyClaimOrGet :one
-- IdempotencyKeyClaimOrGet is a command's first statement: it inserts the
-- key for this transaction (claimed), or, when the key exists (a request
-- with it committed since the read before the transaction), returns its
-- row as the statement's snapshot shows it, with no write (DO NOTHING takes
-- no row lock). A key inserted by
-- an uncommitted transaction makes this wait (lock_timeout); once that one
-- commits, its row is newer than the snapshot and the columns come back
-- null (read it with IdempotencyKeyGet). An expired row is taken over with
-- IdempotencyKeyClaim.
WITH claim AS (
    INSERT INTO idempotency_keys (user_id, key, fingerprint, expires_at)
    VALUES (@user_id, @key, @fingerprint, now() + make_interval(secs => @ttl_seconds::integer))
    ON CONFLICT (user_id, key) DO NOTHING
    RETURNING true AS claimed
)
SELECT coalesce((SELECT claimed FROM claim), false)::boolean AS claimed,
       k.fingerprint, k.status_code, k.response_body, k.response_location,
       coalesce(k.expires_at <= now(), false)::boolean AS expired
FROM (SELECT) AS one
LEFT JOIN idempotency_keys k ON k.user_id = @user_id AND k.key = @key;

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
