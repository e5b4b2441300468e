-- A file of one part is PUT whole to its object (a presigned PutObject
-- URL) rather than through a multipart upload, so creating it makes no
-- call to the store (docs/uploads.md, "Cost"). Such an upload has no
-- store upload id.
ALTER TABLE uploads ALTER COLUMN store_upload_id DROP NOT NULL;
