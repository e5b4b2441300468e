-- Storage cannot be held hostage (docs/uploads.md, "Pending uploads"): a
-- pending upload now expires an hour (UPLOAD_URL_TTL) after its last
-- received part, at most UPLOAD_TTL after its creation, and may be
-- deleted. A deleted upload is failed and gone from the API (deleted_at);
-- its row stays until the sweep has emptied its keys.
ALTER TABLE uploads ADD COLUMN deleted_at timestamptz;

-- Uploads pending when this runs get the new rule's expiry: an hour from
-- now at most (every URL they were given expires within the hour, so none
-- outlives its upload). Without it an upload created just before would
-- still hold its reservation for a day.
UPDATE uploads SET expires_at = least(expires_at, now() + interval '1 hour') WHERE status = 'pending';
