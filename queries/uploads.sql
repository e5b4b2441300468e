-- name: OrganizationLockForUploads :exec
-- OrganizationLockForUploads serialises the checks of an organization's
-- new uploads (its quota, each uploader's pending limits): two at once
-- cannot both fit in what is left.
SELECT 1 FROM organizations WHERE id = @id FOR NO KEY UPDATE;

-- name: UploadReservations :one
-- UploadReservations is what an organization's uploads hold at now: the
-- bytes of its ready uploads and of its pending ones not yet expired (a
-- pending upload's reservation ends at its expires_at), and how many of
-- those pending ones, and how many bytes, are created_by's.
SELECT coalesce(sum(size_bytes), 0)::bigint AS organization_bytes,
       count(*) FILTER (WHERE status = 'pending' AND created_by = @created_by)::integer AS uploader_pending,
       coalesce(sum(size_bytes) FILTER (WHERE status = 'pending' AND created_by = @created_by), 0)::bigint AS uploader_pending_bytes
FROM uploads
WHERE organization_id = @organization_id AND status IN ('pending', 'ready')
  AND (status = 'ready' OR expires_at > @now);

-- name: UploadInsert :exec
-- UploadInsert records a new upload. Nothing is read back: the caller
-- answers with the values it gave, so the insert can travel with the
-- statements after it.
INSERT INTO uploads (id, organization_id, created_by, file_name, mime_type, size_bytes, sha256,
                     part_size, object_key, store_upload_id, created_at, expires_at)
VALUES (@id, @organization_id, @created_by, @file_name, @mime_type, @size_bytes, @sha256,
        @part_size, @object_key, @store_upload_id, @created_at, @expires_at);

-- name: UploadGet :one
-- UploadGet reads an upload that was not deleted.
SELECT * FROM uploads WHERE organization_id = @organization_id AND id = @id AND deleted_at IS NULL;

-- name: UploadGetForUpdate :one
-- UploadGetForUpdate holds the upload while a completion records its
-- outcome, or a delete decides: a second one waits and then sees it.
SELECT * FROM uploads WHERE organization_id = @organization_id AND id = @id AND deleted_at IS NULL FOR UPDATE;

-- name: UploadExtend :exec
-- UploadExtend moves a pending upload's expiry later (its last received
-- part is later than the server knew); it never moves it earlier. It is
-- no move of status.
UPDATE uploads SET expires_at = @expires_at::timestamptz
WHERE id = @id AND status = 'pending' AND expires_at < @expires_at::timestamptz;

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

-- name: UploadMarkDeleted :one
-- UploadMarkDeleted is the move pending → failed of a delete: the upload
-- is gone from the API (deleted_at), and its reservation with it.
UPDATE uploads SET status = 'failed', failure = @failure, finished_at = now(), deleted_at = now()
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
