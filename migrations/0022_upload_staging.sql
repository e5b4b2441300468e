-- What an upload's presigned URLs write goes to a staging key; completing
-- copies it to the final key before checking it, so nothing a URL writes
-- afterwards reaches what /content serves (docs/uploads.md). The sweep
-- deletes whatever a finished upload's keys still hold once none of its
-- URLs works any more, and records it in swept_at.
ALTER TABLE uploads ADD COLUMN swept_at timestamptz;

-- The sweep reads finished uploads not yet swept, by expiry.
CREATE INDEX uploads_unswept_idx ON uploads (expires_at) WHERE status <> 'pending' AND swept_at IS NULL;

-- A pending upload from before wrote its final key directly: it fails, and
-- the sweep deletes what its keys hold once its URLs expire.
UPDATE uploads
SET status = 'failed', finished_at = now(),
    failure = 'The server changed how uploads are stored before this one was completed; start a new upload.'
WHERE status = 'pending';
