-- name: OrganizationLockForUploads :exec
-- OrganizationLockForUploads serialises the quota check of an
-- organization's new uploads: two at once cannot both fit in what is left.
SELECT 1 FROM organizations WHERE id = @id FOR NO KEY UPDATE;

-- name: UploadStorageUsed :one
-- UploadStorageUsed is the bytes an organization's ready and pending
-- uploads hold or may hold.
SELECT coalesce(sum(size_bytes), 0)::bigint FROM uploads
WHERE organization_id = @organization_id AND status IN ('pending', 'ready');

-- name: UploadInsert :exec
-- UploadInsert records a new upload. Nothing is read back: the caller
-- answers with the values it gave, so the insert can travel with the
-- statements after it.
INSERT INTO uploads (id, organization_id, created_by, file_name, mime_type, size_bytes, sha256,
                     part_size, object_key, store_upload_id, created_at, expires_at)
VALUES (@id, @organization_id, @created_by, @file_name, @mime_type, @size_bytes, @sha256,
        @part_size, @object_key, @store_upload_id, @created_at, @expires_at);

-- name: UploadGet :one
SELECT * FROM uploads WHERE organization_id = @organization_id AND id = @id;

-- name: UploadGetForUpdate :one
-- UploadGetForUpdate holds the upload while a completion records its
-- outcome: a second completion waits and then sees it.
SELECT * FROM uploads WHERE organization_id = @organization_id AND id = @id FOR UPDATE;

-- name: UploadClaimCompletion :one
-- UploadClaimCompletion marks a pending, unexpired upload as being
-- completed, so the expiry job leaves it alone while the store assembles
-- it and the server reads it (outside any transaction). It is no move of
-- status: the upload stays pending until its outcome is recorded.
UPDATE uploads SET completing_since = @now::timestamptz
WHERE organization_id = @organization_id AND id = @id AND status = 'pending' AND expires_at > @now
RETURNING *;

-- name: UploadMarkReady :one
-- UploadMarkReady is the move pending → ready.
UPDATE uploads
SET status = 'ready', asset_id = @asset_id, width = sqlc.narg('width'), height = sqlc.narg('height'),
    duration_ms = sqlc.narg('duration_ms'), finished_at = now()
WHERE id = @id AND status = 'pending'
RETURNING *;

-- name: UploadMarkFailed :one
-- UploadMarkFailed is the move pending → failed (a mismatch, or expiry).
UPDATE uploads SET status = 'failed', failure = @failure, finished_at = now()
WHERE id = @id AND status = 'pending'
RETURNING *;

-- name: UploadExpired :many
-- UploadExpired lists pending uploads past their expiry, oldest first,
-- but those a completion claimed after claimed_before (it may still run).
SELECT * FROM uploads
WHERE status = 'pending' AND expires_at < @now
  AND (completing_since IS NULL OR completing_since < @claimed_before::timestamptz)
ORDER BY expires_at LIMIT @row_limit;

-- name: UploadUnswept :many
-- UploadUnswept lists finished uploads past their expiry (so past every
-- URL of theirs) whose keys the sweep has not emptied yet, oldest first.
SELECT * FROM uploads
WHERE status <> 'pending' AND swept_at IS NULL AND expires_at < @now
ORDER BY expires_at LIMIT @row_limit;

-- name: UploadMarkSwept :exec
-- UploadMarkSwept records that the store holds nothing under a finished
-- upload's keys but the final object of a ready one.
UPDATE uploads SET swept_at = now() WHERE id = @id AND status <> 'pending';

-- name: UploadByAsset :one
-- UploadByAsset finds the ready upload behind an asset id of an
-- organization: the upload's Asset, which every version made from it
-- shows under the same id, or (made before that was so) a version's copy
-- of it with an id of its own. The id may be in many versions' rows.
SELECT u.* FROM uploads u
WHERE u.organization_id = @organization_id AND u.status = 'ready'
  AND (u.asset_id = @asset_id
       OR u.id IN (SELECT a.upload_id FROM assets a WHERE a.id = @asset_id));

-- name: UploadsReady :many
-- UploadsReady are the ready uploads among ids of an organization: the
-- files a new version names by uploadId.
SELECT * FROM uploads
WHERE organization_id = @organization_id AND id = ANY(@ids::uuid[]) AND status = 'ready';
