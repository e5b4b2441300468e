-- Uploaded files (docs/uploads.md). An upload is a file a browser sends
-- straight to the object store in parts; the API records what was
-- announced, checks what arrived, and serves it back. object_key is where
-- the file lives in the bucket; store_upload_id is the store's multipart
-- upload, until it is completed or aborted. asset_id is the Asset the
-- upload became once ready; width, height and duration_ms are what the
-- file's own bytes said.
CREATE TABLE uploads (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    created_by      uuid NOT NULL REFERENCES users (id),
    status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'ready', 'failed')),
    file_name       text NOT NULL,
    mime_type       text NOT NULL,
    size_bytes      bigint NOT NULL CHECK (size_bytes > 0),
    sha256          text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    part_size       bigint NOT NULL CHECK (part_size > 0),
    object_key      text NOT NULL UNIQUE,
    store_upload_id text NOT NULL,
    asset_id        uuid UNIQUE,
    width           integer,
    height          integer,
    duration_ms     integer,
    failure         text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    expires_at      timestamptz NOT NULL,
    finished_at     timestamptz,
    CONSTRAINT uploads_ready_has_asset CHECK ((status = 'ready') = (asset_id IS NOT NULL)),
    CONSTRAINT uploads_finished CHECK ((status = 'pending') = (finished_at IS NULL))
);

-- The quota sums an organization's ready and pending uploads.
CREATE INDEX uploads_organization_idx ON uploads (organization_id) WHERE status IN ('pending', 'ready');
-- The expiry job reads pending uploads by expiry.
CREATE INDEX uploads_pending_expires_idx ON uploads (expires_at) WHERE status = 'pending';

-- An asset of a version made from an upload names it; its bytes are the
-- upload's object.
ALTER TABLE assets ADD COLUMN upload_id uuid REFERENCES uploads (id);
