-- An uploaded file has one id everywhere (docs/uploads.md, "One file, one
-- id"): every version made from an upload shows its file under the
-- upload's asset id, so an asset id names a file, and a row of assets is
-- the file in one version: (id, version_id). Existing rows made from an
-- upload take the upload's asset id, and comment anchors that named the
-- row's old id follow it. A version that listed one upload twice keeps its
-- later copies' own ids (a new version may no longer do so).
CREATE TEMPORARY TABLE renamed_assets ON COMMIT DROP AS
SELECT a.id AS old_id, u.asset_id AS new_id, a.version_id
FROM assets a
JOIN uploads u ON u.id = a.upload_id
WHERE a.id <> u.asset_id
  AND a.position = (SELECT min(b.position) FROM assets b WHERE b.version_id = a.version_id AND b.upload_id = a.upload_id);

UPDATE comments c
SET anchor = jsonb_set(c.anchor, '{assetId}', to_jsonb(r.new_id::text))
FROM renamed_assets r
WHERE c.anchor IS NOT NULL AND c.anchor ->> 'assetId' = r.old_id::text AND c.version_id = r.version_id;

ALTER TABLE assets DROP CONSTRAINT assets_pkey;

UPDATE assets a SET id = r.new_id
FROM renamed_assets r
WHERE a.id = r.old_id AND a.version_id = r.version_id;

ALTER TABLE assets ADD PRIMARY KEY (id, version_id);
