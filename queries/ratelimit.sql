-- name: RateLimitReplicaBeat :many
-- RateLimitReplicaBeat records that replica id is alive, forgets the
-- replicas not seen for stale_seconds, and returns the ids of those alive
-- (this one among them), in id order: every replica numbers them alike.
WITH beat AS (
    INSERT INTO rate_limit_replicas (id, seen_at) VALUES (@id, now())
    ON CONFLICT (id) DO UPDATE SET seen_at = now()
), gone AS (
    DELETE FROM rate_limit_replicas
    WHERE seen_at < now() - make_interval(secs => @stale_seconds::double precision) AND id <> @id
)
SELECT r.id FROM rate_limit_replicas r
WHERE r.seen_at >= now() - make_interval(secs => @stale_seconds::double precision) OR r.id = @id
UNION
SELECT @id::uuid
ORDER BY 1;

-- name: RateLimitReplicaLeave :exec
-- RateLimitReplicaLeave forgets replica id at once (a clean shutdown), so
-- the others take its share at their next beat.
DELETE FROM rate_limit_replicas WHERE id = @id;
