-- name: CreativeGet :one
-- CreativeGet reads one creative of an organization with the names its
-- detail shows.
SELECT sqlc.embed(c), au.name AS author_name, rv.name AS reviewer_name,
       cl.name AS client_name, tk.name AS task_name
FROM creatives c
JOIN users au ON au.id = c.author_id
LEFT JOIN users rv ON rv.id = c.reviewer_id
LEFT JOIN clients cl ON cl.id = c.client_id
LEFT JOIN tasks tk ON tk.id = c.task_id
WHERE c.organization_id = @organization_id AND c.id = @id;

-- name: CreativePage :many
-- CreativePage reads a page of an organization's creatives, newest first,
-- below before_number (keyset pagination on the (organization_id, number)
-- index; the first page passes the largest integer).
SELECT sqlc.embed(c), au.name AS author_name, rv.name AS reviewer_name,
       cl.name AS client_name, tk.name AS task_name
FROM creatives c
JOIN users au ON au.id = c.author_id
LEFT JOIN users rv ON rv.id = c.reviewer_id
LEFT JOIN clients cl ON cl.id = c.client_id
LEFT JOIN tasks tk ON tk.id = c.task_id
WHERE c.organization_id = @organization_id AND c.number < @before_number
ORDER BY c.number DESC
LIMIT @row_limit;

-- name: CreativePageByStatus :many
-- CreativePageByStatus is CreativePage filtered by review status. It is a
-- query of its own so that its plan always uses the (organization_id,
-- review_status, number) index.
SELECT sqlc.embed(c), au.name AS author_name, rv.name AS reviewer_name,
       cl.name AS client_name, tk.name AS task_name
FROM creatives c
JOIN users au ON au.id = c.author_id
LEFT JOIN users rv ON rv.id = c.reviewer_id
LEFT JOIN clients cl ON cl.id = c.client_id
LEFT JOIN tasks tk ON tk.id = c.task_id
WHERE c.organization_id = @organization_id AND c.review_status = @review_status
  AND c.number < @before_number
ORDER BY c.number DESC
LIMIT @row_limit;

-- name: CreativeVersionsWithAssets :many
-- CreativeVersionsWithAssets reads the given versions with their author and
-- assets in one round trip: one row per asset, or one row with null asset
-- columns for a version without assets.
SELECT v.id, v.number, v.created_at, v.author_id, u.name AS author_name,
       a.id AS asset_id, a.file_name, a.mime_type, a.size_bytes, a.url,
       a.width, a.height, a.duration_ms, a.sha256
FROM creative_versions v
JOIN users u ON u.id = v.author_id
LEFT JOIN assets a ON a.version_id = v.id
WHERE v.id = ANY(@ids::uuid[])
ORDER BY v.id, a.position;

-- name: CreativeLockForAction :one
-- CreativeLockForAction locks the creative for a review action and reads,
-- in the same query, what the answer shows of it (the names of its
-- detail), the caller's role in its organization, and the transaction's
-- clock, which becomes updated_at: the creative after the action is known
-- without reading it again. No row means the creative is not visible to
-- the caller.
SELECT sqlc.embed(c), au.name AS author_name, rv.name AS reviewer_name,
       cl.name AS client_name, tk.name AS task_name, m.role, now()::timestamptz AS now
FROM creatives c
JOIN memberships m ON m.organization_id = c.organization_id AND m.user_id = @caller_id
JOIN users au ON au.id = c.author_id
LEFT JOIN users rv ON rv.id = c.reviewer_id
LEFT JOIN clients cl ON cl.id = c.client_id
LEFT JOIN tasks tk ON tk.id = c.task_id
WHERE c.id = @id AND c.organization_id = @organization_id
FOR UPDATE OF c;

-- name: CreativeTransition :exec
-- CreativeTransition writes a decided review action (the creative's new
-- state, version, updated_at and approved version, as the caller computed
-- them from the locked row) and its event, in one statement. The event
-- records the version the action produced.
WITH updated AS (
    UPDATE creatives
    SET review_status = @to_status::text,
        version = @version::integer,
        updated_at = @updated_at::timestamptz,
        approved_version_id = sqlc.narg('approved_version_id')::uuid
    WHERE creatives.id = @id
    RETURNING id, version
)
INSERT INTO creative_events (creative_id, actor_id, action, from_status, to_status, comment, version)
SELECT updated.id, @actor_id::uuid, @action::text, @from_status::text, @to_status::text,
       sqlc.narg('comment')::text, updated.version
FROM updated;

-- name: OrganizationCreativeNumbersReserve :one
-- OrganizationCreativeNumbersReserve takes the next count creative numbers
-- of an organization and returns the first of them.
UPDATE organizations
SET next_creative_number = next_creative_number + @count::integer
WHERE id = @id
RETURNING (next_creative_number - @count::integer)::integer AS first_number;

-- name: CreativeExistsInOrganization :one
SELECT EXISTS (SELECT 1 FROM creatives WHERE organization_id = @organization_id)::boolean;

-- name: ClientUpsert :one
INSERT INTO clients (organization_id, name) VALUES (@organization_id, @name)
ON CONFLICT (organization_id, name) DO UPDATE SET name = excluded.name
RETURNING id;

-- name: TaskUpsert :one
INSERT INTO tasks (organization_id, name) VALUES (@organization_id, @name)
ON CONFLICT (organization_id, name) DO UPDATE SET name = excluded.name
RETURNING id;

-- name: CreativeInsert :one
INSERT INTO creatives (organization_id, number, title, type, aspect_ratio, geo, language,
                       direction_id, author_id, reviewer_id, client_id, task_id, review_status, version)
VALUES (@organization_id, @number, @title, @type, @aspect_ratio, @geo, @language,
        sqlc.narg('direction_id'), @author_id, sqlc.narg('reviewer_id'), sqlc.narg('client_id'),
        sqlc.narg('task_id'), @review_status, @version)
RETURNING id;

-- name: CreativeVersionInsert :one
INSERT INTO creative_versions (creative_id, number, author_id)
VALUES (@creative_id, @number, @author_id)
RETURNING id;

-- name: AssetInsert :exec
INSERT INTO assets (version_id, position, file_name, mime_type, size_bytes, url, width, height, duration_ms, sha256)
VALUES (@version_id, @position, @file_name, @mime_type, @size_bytes, @url,
        sqlc.narg('width'), sqlc.narg('height'), sqlc.narg('duration_ms'), @sha256);

-- name: CreativeSetVersions :exec
UPDATE creatives
SET current_version_id = sqlc.narg('current_version_id'), approved_version_id = sqlc.narg('approved_version_id')
WHERE id = @id;

-- name: CreativeEventInsert :exec
INSERT INTO creative_events (creative_id, actor_id, action, from_status, to_status, comment, version)
VALUES (@creative_id, @actor_id, @action, @from_status, @to_status, sqlc.narg('comment'), @version);

-- name: CreativeCountByTask :one
SELECT count(*) FROM creatives WHERE task_id = @task_id;

-- name: CreativeInsertDraftBatch :execrows
-- CreativeInsertDraftBatch inserts draft creatives numbered first_number
-- to last_number, each with one version holding one image, in one statement.
-- The ids are drawn first so the creative can point at its version: the
-- foreign keys are checked at the end of the statement.
WITH ids AS MATERIALIZED (
    SELECT g.n, gen_random_uuid() AS creative_id, gen_random_uuid() AS version_id
    FROM generate_series(@first_number::integer, @last_number::integer) AS g (n)
), new_creatives AS (
    INSERT INTO creatives (id, organization_id, number, title, type, aspect_ratio, geo, language,
                           author_id, task_id, current_version_id)
    SELECT creative_id, @organization_id::uuid, n, 'Benchmark creative ' || n, 'static', '1:1', 'US', 'en-US',
           @author_id::uuid, @task_id::uuid, version_id
    FROM ids
), new_versions AS (
    INSERT INTO creative_versions (id, creative_id, number, author_id)
    SELECT version_id, creative_id, 1, @author_id::uuid FROM ids
)
INSERT INTO assets (version_id, position, file_name, mime_type, size_bytes, url, width, height, sha256)
SELECT version_id, 1, 'benchmark-' || n || '.png', 'image/png', 100000 + n % 900000,
       'https://cdn.acme.test/assets/benchmark/' || n || '.png', 1080, 1080,
       encode(sha256(convert_to('benchmark-' || n, 'UTF8')), 'hex')
FROM ids;
