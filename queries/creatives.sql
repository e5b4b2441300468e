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
-- columns for a version without assets. open_comment_count (the version's
-- open top-level comments, from comments_open_version_idx) and
-- open_thread_count (its creative's, of every version, from
-- comments_open_threads_idx) make a page's openCommentCount and
-- openThreadCount cost no query of their own.
SELECT v.id, v.number, v.created_at, v.author_id, u.name AS author_name,
       a.id AS asset_id, a.file_name, a.mime_type, a.size_bytes, a.url,
       a.width, a.height, a.duration_ms, a.sha256, a.upload_id,
       (SELECT count(*) FROM comments cm
        WHERE cm.version_id = v.id AND cm.parent_id IS NULL AND cm.resolved_at IS NULL AND NOT cm.deleted
       )::integer AS open_comment_count,
       (SELECT count(*) FROM comments cm
        WHERE cm.creative_id = v.creative_id AND cm.parent_id IS NULL AND cm.resolved_at IS NULL AND NOT cm.deleted
       )::integer AS open_thread_count
FROM creative_versions v
JOIN users u ON u.id = v.author_id
LEFT JOIN assets a ON a.version_id = v.id
WHERE v.id = ANY(@ids::uuid[])
ORDER BY v.id, a.position;

-- name: CreativeLockForActionGuest :one
-- CreativeLockForActionGuest is CreativeLockForAction for a guest: the
-- creative is visible when the guest's share holds it; the role is
-- 'guest' (the rules take the share's permission).
SELECT sqlc.embed(c), au.name AS author_name, rv.name AS reviewer_name,
       cl.name AS client_name, tk.name AS task_name, 'guest'::text AS role, now()::timestamptz AS now,
       ARRAY(SELECT cm.id FROM comments cm
             WHERE cm.creative_id = c.id AND cm.parent_id IS NULL AND cm.resolved_at IS NULL AND NOT cm.deleted
               AND cm.addressed_in_version IS NULL
             ORDER BY cm.seq LIMIT 100)::uuid[] AS unaddressed_threads,
       cv.author_id AS version_author_id,
       EXISTS (SELECT 1 FROM review_plan_stages ps WHERE ps.creative_id = c.id AND cardinality(ps.guest_emails) > 0) AS plan_names_guests
FROM creatives c
JOIN share_creatives sc ON sc.creative_id = c.id AND sc.share_id = @share_id
JOIN users au ON au.id = c.author_id
LEFT JOIN users rv ON rv.id = c.reviewer_id
LEFT JOIN clients cl ON cl.id = c.client_id
LEFT JOIN tasks tk ON tk.id = c.task_id
LEFT JOIN creative_versions cv ON cv.id = c.current_version_id
WHERE c.id = @id
FOR UPDATE OF c;

-- name: CreativeLockForAction :one
-- CreativeLockForAction locks the creative for a change (a review action,
-- a new version or an edit) and reads,
-- in the same query, what the answer shows of it (the names of its
-- detail), the caller's role in its organization, and the transaction's
-- clock, which becomes updated_at: the creative after the action is known
-- without reading it again. No row means the creative is not visible to
-- the caller. unaddressed_threads are its open threads not marked
-- addressed, oldest first, at most 100, which submit may not go past
-- (review.CheckOpenThreads): read here, from comments_open_threads_idx,
-- they cost submit no round trip of their own. version_author_id (the
-- current version's author, who never decides on it) and
-- plan_names_guests (only an admin changes such a plan) cost none either.
SELECT sqlc.embed(c), au.name AS author_name, rv.name AS reviewer_name,
       cl.name AS client_name, tk.name AS task_name, m.role, now()::timestamptz AS now,
       ARRAY(SELECT cm.id FROM comments cm
             WHERE cm.creative_id = c.id AND cm.parent_id IS NULL AND cm.resolved_at IS NULL AND NOT cm.deleted
               AND cm.addressed_in_version IS NULL
             ORDER BY cm.seq LIMIT 100)::uuid[] AS unaddressed_threads,
       cv.author_id AS version_author_id,
       EXISTS (SELECT 1 FROM review_plan_stages ps WHERE ps.creative_id = c.id AND cardinality(ps.guest_emails) > 0) AS plan_names_guests
FROM creatives c
JOIN memberships m ON m.organization_id = c.organization_id AND m.user_id = @caller_id
JOIN users au ON au.id = c.author_id
LEFT JOIN users rv ON rv.id = c.reviewer_id
LEFT JOIN clients cl ON cl.id = c.client_id
LEFT JOIN tasks tk ON tk.id = c.task_id
LEFT JOIN creative_versions cv ON cv.id = c.current_version_id
WHERE c.id = @id AND c.organization_id = @organization_id
FOR UPDATE OF c;

-- name: CreativeTransition :exec
-- CreativeTransition writes a decided review action (the creative's new
-- state, version, updated_at and approved version, as the caller computed
-- them from the locked row) and its event, in one statement. The event
-- records the version the action produced and who made it, a member
-- (actor_id) or a guest (actor_guest_id), who decides only from a
-- verified session (docs/shares.md): a guest's event is verified.
WITH updated AS (
    UPDATE creatives
    SET review_status = @to_status::text,
        version = @version::integer,
        updated_at = @updated_at::timestamptz,
        approved_version_id = sqlc.narg('approved_version_id')::uuid
    WHERE creatives.id = @id
    RETURNING id, version
)
INSERT INTO creative_events (creative_id, actor_id, actor_guest_id, type, from_status, to_status, comment, version, acknowledged_threads,
                             actor_verified)
SELECT updated.id, sqlc.narg('actor_id')::uuid, sqlc.narg('actor_guest_id')::uuid, @action::text, @from_status::text, @to_status::text,
       sqlc.narg('comment')::text, updated.version, sqlc.narg('acknowledged_threads')::uuid[],
       CASE WHEN sqlc.narg('actor_guest_id')::uuid IS NOT NULL THEN true END
FROM updated;

-- name: OrganizationCreativeNumbersReserve :one
-- OrganizationCreativeNumbersReserve takes the next count creative numbers
-- of an organization and returns the first of them.
UPDATE organizations
SET next_creative_number = next_creative_number + @count::integer
WHERE id = @id
RETURNING (next_creative_number - @count::integer)::integer AS first_number;

-- name: CreativeTitleExists :one
SELECT EXISTS (SELECT 1 FROM creatives WHERE organization_id = @organization_id AND title = @title)::boolean;

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

-- name: CreativeCreateCheck :one
-- CreativeCreateCheck reads what creating a creative depends on, in one
-- query: the caller's role and name in the organization, and the names of
-- the client and task asked for (null when there is no such client or task
-- in this organization). No row means the organization is not visible to
-- the caller.
SELECT m.role, u.name AS caller_name, cl.name AS client_name, tk.name AS task_name
FROM memberships m
JOIN users u ON u.id = m.user_id
LEFT JOIN clients cl ON cl.id = sqlc.narg('client_id')::uuid AND cl.organization_id = m.organization_id
LEFT JOIN tasks tk ON tk.id = sqlc.narg('task_id')::uuid AND tk.organization_id = m.organization_id
WHERE m.organization_id = @organization_id AND m.user_id = @caller_id;

-- name: CreativeCreate :one
-- CreativeCreate numbers and inserts a draft creative at version 1 with its
-- created event, in one statement. Taking the organization's next number
-- locks the organization's row until the transaction ends, so concurrent
-- creates are numbered one after another, without gaps.
WITH numbered AS (
    UPDATE organizations SET next_creative_number = next_creative_number + 1
    WHERE organizations.id = @organization_id::uuid
    RETURNING organizations.id AS organization_id, organizations.next_creative_number - 1 AS number
), created AS (
    INSERT INTO creatives (organization_id, number, title, type, aspect_ratio, geo, language,
                           direction_id, author_id, client_id, task_id)
    SELECT numbered.organization_id, numbered.number, @title::text, @type::text, @aspect_ratio::text, @geo::text, @language::text,
           sqlc.narg('direction_id')::uuid, @author_id::uuid, sqlc.narg('client_id')::uuid, sqlc.narg('task_id')::uuid
    FROM numbered
    RETURNING creatives.id, creatives.number, creatives.review_status, creatives.version, creatives.updated_at
), event AS (
    INSERT INTO creative_events (creative_id, actor_id, type, from_status, to_status, version)
    SELECT created.id, @author_id::uuid, 'created', NULL, created.review_status, created.version
    FROM created
)
SELECT created.id, created.number, created.updated_at FROM created;

-- name: CreativeVersionAdd :exec
-- CreativeVersionAdd writes a decided new version in one statement: the
-- version, numbered after the creative's last one, its assets in the order
-- given (an uploaded file under its upload's asset id, a URL one under a
-- new id), the creative's new current version, state, version and
-- updated_at (as the caller computed them from the locked row), and its
-- version_added event. The caller draws the version's id, so the answer's
-- read of the versions can go in the same round trip.
WITH added AS (
    INSERT INTO creative_versions (id, creative_id, number, author_id)
    SELECT @version_id::uuid, @id::uuid, coalesce(max(v.number), 0) + 1, @actor_id::uuid
    FROM creative_versions v WHERE v.creative_id = @id::uuid
    RETURNING id
), files AS (
    INSERT INTO assets (id, version_id, position, file_name, mime_type, size_bytes, url, width, height, duration_ms, sha256, upload_id)
    SELECT coalesce(a.id, gen_random_uuid()), added.id, a.position, a.file_name, a.mime_type, a.size_bytes, a.url,
           a.width, a.height, a.duration_ms, a.sha256, a.upload_id
    FROM added, jsonb_to_recordset(@assets::jsonb) AS a (
        id uuid, position integer, file_name text, mime_type text, size_bytes bigint, url text,
        width integer, height integer, duration_ms integer, sha256 text, upload_id uuid)
), updated AS (
    UPDATE creatives
    SET current_version_id = @version_id::uuid,
        review_status = @to_status::text,
        version = @version::integer,
        updated_at = @updated_at::timestamptz
    WHERE creatives.id = @id::uuid
    RETURNING id, version
)
INSERT INTO creative_events (creative_id, actor_id, type, from_status, to_status, version)
SELECT updated.id, @actor_id::uuid, 'version_added', @from_status::text, @to_status::text, updated.version
FROM updated;

-- name: CreativeUpdate :exec
-- CreativeUpdate writes a decided edit in one statement: every field of the
-- creative as the caller computed it from the locked row, its version and
-- updated_at, and the updated event listing the changed fields.
WITH updated AS (
    UPDATE creatives
    SET title = @title::text,
        type = @type::text,
        aspect_ratio = @aspect_ratio::text,
        geo = @geo::text,
        language = @language::text,
        client_id = sqlc.narg('client_id')::uuid,
        task_id = sqlc.narg('task_id')::uuid,
        direction_id = sqlc.narg('direction_id')::uuid,
        reviewer_id = sqlc.narg('reviewer_id')::uuid,
        version = @version::integer,
        updated_at = @updated_at::timestamptz
    WHERE creatives.id = @id::uuid
    RETURNING id, version, review_status
)
INSERT INTO creative_events (creative_id, actor_id, type, from_status, to_status, version, changes)
SELECT updated.id, @actor_id::uuid, 'updated', updated.review_status, updated.review_status, updated.version, @changes::jsonb
FROM updated;

-- name: CreativeReferences :one
-- CreativeReferences reads, for an edit, the names of the client and task
-- asked for (null when not of this organization) and the role and name of
-- the reviewer asked for (null when not a member).
SELECT cl.name AS client_name, tk.name AS task_name, rm.role AS reviewer_role, ru.name AS reviewer_name
FROM (SELECT 1) AS one
LEFT JOIN clients cl ON cl.id = sqlc.narg('client_id')::uuid AND cl.organization_id = @organization_id::uuid
LEFT JOIN tasks tk ON tk.id = sqlc.narg('task_id')::uuid AND tk.organization_id = @organization_id::uuid
LEFT JOIN memberships rm ON rm.user_id = sqlc.narg('reviewer_id')::uuid AND rm.organization_id = @organization_id::uuid
LEFT JOIN users ru ON ru.id = rm.user_id;

-- name: CreativeMemberRole :one
-- CreativeMemberRole is the caller's role in the organization of a creative
-- of that organization; no row means the creative is not visible to the
-- caller.
SELECT m.role
FROM creatives c
JOIN memberships m ON m.organization_id = c.organization_id AND m.user_id = @caller_id
WHERE c.id = @id AND c.organization_id = @organization_id;

-- name: CreativeEventPage :many
-- CreativeEventPage reads a page of a creative's history, newest first,
-- below before_id (keyset pagination on (creative_id, id)).
SELECT e.id, e.public_id, e.type, coalesce(e.actor_id, e.actor_guest_id)::uuid AS actor_id,
       coalesce(u.name, g.name)::text AS actor_name, (e.actor_guest_id IS NOT NULL)::boolean AS actor_is_guest,
       e.from_status, e.to_status, e.version, e.comment, e.changes, e.acknowledged_threads, e.stage, e.override, e.created_at,
       e.actor_verified
FROM creative_events e
LEFT JOIN users u ON u.id = e.actor_id
LEFT JOIN guests g ON g.id = e.actor_guest_id
WHERE e.creative_id = @creative_id AND e.id < @before_id
ORDER BY e.id DESC
LIMIT @row_limit;

-- name: CreativePageFiltered :many
-- CreativePageFiltered is CreativePage filtered by states and title, for
-- lists without an author or reviewer (the queries below serve those); a
-- null (or empty) filter lets every creative through. Its plan walks the
-- (organization_id, number) index newest first, which suits filters many
-- creatives pass; the queries below serve the selective ones.
SELECT sqlc.embed(c), au.name AS author_name, rv.name AS reviewer_name,
       cl.name AS client_name, tk.name AS task_name
FROM creatives c
JOIN users au ON au.id = c.author_id
LEFT JOIN users rv ON rv.id = c.reviewer_id
LEFT JOIN clients cl ON cl.id = c.client_id
LEFT JOIN tasks tk ON tk.id = c.task_id
WHERE c.organization_id = @organization_id AND c.number < @before_number
  AND (cardinality(@statuses::text[]) = 0 OR c.review_status = ANY(@statuses::text[]))
  AND (sqlc.narg('title_pattern')::text IS NULL OR c.title ILIKE sqlc.narg('title_pattern')::text)
ORDER BY c.number DESC
LIMIT @row_limit;

-- name: CreativePageByAuthor :many
-- CreativePageByAuthor is CreativePageFiltered for an author's creatives
-- (a list with a reviewer too is CreativePageByReviewer's),
-- through the (organization_id, author_id, number) index.
SELECT sqlc.embed(c), au.name AS author_name, rv.name AS reviewer_name,
       cl.name AS client_name, tk.name AS task_name
FROM creatives c
JOIN users au ON au.id = c.author_id
LEFT JOIN users rv ON rv.id = c.reviewer_id
LEFT JOIN clients cl ON cl.id = c.client_id
LEFT JOIN tasks tk ON tk.id = c.task_id
WHERE c.organization_id = @organization_id AND c.author_id = @author_id AND c.number < @before_number
  AND (cardinality(@statuses::text[]) = 0 OR c.review_status = ANY(@statuses::text[]))
  AND (sqlc.narg('title_pattern')::text IS NULL OR c.title ILIKE sqlc.narg('title_pattern')::text)
ORDER BY c.number DESC
LIMIT @row_limit;

-- name: CreativePageByReviewer :many
-- CreativePageByReviewer is CreativePageFiltered for the creatives assigned
-- to a reviewer, through the (organization_id, reviewer_id, number) index.
SELECT sqlc.embed(c), au.name AS author_name, rv.name AS reviewer_name,
       cl.name AS client_name, tk.name AS task_name
FROM creatives c
JOIN users au ON au.id = c.author_id
LEFT JOIN users rv ON rv.id = c.reviewer_id
LEFT JOIN clients cl ON cl.id = c.client_id
LEFT JOIN tasks tk ON tk.id = c.task_id
WHERE c.organization_id = @organization_id AND c.reviewer_id = @reviewer_id AND c.number < @before_number
  AND (cardinality(@statuses::text[]) = 0 OR c.review_status = ANY(@statuses::text[]))
  AND (sqlc.narg('author_id')::uuid IS NULL OR c.author_id = sqlc.narg('author_id')::uuid)
  AND (sqlc.narg('title_pattern')::text IS NULL OR c.title ILIKE sqlc.narg('title_pattern')::text)
ORDER BY c.number DESC
LIMIT @row_limit;

-- name: CreativePageSearch :many
-- CreativePageSearch is CreativePageFiltered for a title search, in two
-- parts that LIMIT reads in turn. The first walks the number index down
-- from before_number, newest first, over at most search_window numbers
-- (numbers are dense, so that many rows at most), and stops at a page of
-- matches: a search that many titles match is answered there. Its match is
-- written title || '' so that the planner cannot answer it from the
-- trigram index, whose cost grows with every title sharing the text's
-- trigrams. Only when the window holds less than a page does the second
-- part run: it finds the older matches through the trigram index alone
-- (OFFSET 0 keeps the planner from walking the number index instead, and
-- number + 0 from intersecting the trigram matches with a bitmap of every
-- older number) and sorts them.
-- A page costs at most a window's walk plus what the trigram index reads
-- for a text fewer than one title in search_window / row_limit holds.
WITH bounds AS (
    SELECT least(@before_number::integer, o.next_creative_number) - sqlc.arg('search_window')::integer AS window_start
    FROM organizations o WHERE o.id = @organization_id::uuid
)
SELECT sqlc.embed(c), au.name AS author_name, rv.name AS reviewer_name,
       cl.name AS client_name, tk.name AS task_name
FROM (
    (SELECT w.id, w.number FROM creatives w
     WHERE w.organization_id = @organization_id::uuid
       AND w.number < @before_number::integer AND w.number >= (SELECT window_start FROM bounds)
       AND (w.title || '') ILIKE @title_pattern::text
       AND (cardinality(@statuses::text[]) = 0 OR w.review_status = ANY(@statuses::text[]))
       AND (sqlc.narg('author_id')::uuid IS NULL OR w.author_id = sqlc.narg('author_id')::uuid)
       AND (sqlc.narg('reviewer_id')::uuid IS NULL OR w.reviewer_id = sqlc.narg('reviewer_id')::uuid)
     ORDER BY w.number DESC
     LIMIT @row_limit::integer)
    UNION ALL
    (SELECT m.id, m.number FROM (
        SELECT o.id, o.number FROM creatives o
        WHERE o.organization_id = @organization_id::uuid
          AND o.number + 0 < (SELECT window_start FROM bounds)
          AND o.title ILIKE @title_pattern::text
          AND (cardinality(@statuses::text[]) = 0 OR o.review_status = ANY(@statuses::text[]))
          AND (sqlc.narg('author_id')::uuid IS NULL OR o.author_id = sqlc.narg('author_id')::uuid)
          AND (sqlc.narg('reviewer_id')::uuid IS NULL OR o.reviewer_id = sqlc.narg('reviewer_id')::uuid)
        OFFSET 0) AS m
     ORDER BY m.number DESC
     LIMIT @row_limit::integer)
    LIMIT @row_limit::integer
) AS page
JOIN creatives c ON c.id = page.id
JOIN users au ON au.id = c.author_id
LEFT JOIN users rv ON rv.id = c.reviewer_id
LEFT JOIN clients cl ON cl.id = c.client_id
LEFT JOIN tasks tk ON tk.id = c.task_id
ORDER BY c.number DESC;

-- name: CreativePageOverdue :many
-- CreativePageOverdue is CreativePageFiltered for creatives in review
-- whose review plan's active stage is past its due date, with the other
-- filters (null or empty: any). It starts from the active stages due by
-- now (review_stage_rounds_active_due_idx, a partial index of active
-- stages with a due date), so a page costs what the overdue stages of
-- every workspace cost, not what the creatives do; only the current
-- round's stage of a creative in review counts.
SELECT sqlc.embed(c), au.name AS author_name, rv.name AS reviewer_name,
       cl.name AS client_name, tk.name AS task_name
FROM review_stage_rounds r
JOIN creatives c ON c.id = r.creative_id AND c.review_round = r.round
JOIN users au ON au.id = c.author_id
LEFT JOIN users rv ON rv.id = c.reviewer_id
LEFT JOIN clients cl ON cl.id = c.client_id
LEFT JOIN tasks tk ON tk.id = c.task_id
WHERE r.status = 'active' AND r.due_at IS NOT NULL AND r.due_at <= now()
  AND c.organization_id = @organization_id AND c.number < @before_number AND c.review_status = 'in_review'
  AND (cardinality(@statuses::text[]) = 0 OR c.review_status = ANY(@statuses::text[]))
  AND (sqlc.narg('author_id')::uuid IS NULL OR c.author_id = sqlc.narg('author_id')::uuid)
  AND (sqlc.narg('reviewer_id')::uuid IS NULL OR c.reviewer_id = sqlc.narg('reviewer_id')::uuid)
  AND (sqlc.narg('title_pattern')::text IS NULL OR c.title ILIKE sqlc.narg('title_pattern')::text)
ORDER BY c.number DESC
LIMIT @row_limit;
