-- name: DevelopmentDatabaseMark :exec
-- Marks the database as a development one (idempotent: seed re-runs).
INSERT INTO development_database (only_row) VALUES (true)
ON CONFLICT (only_row) DO NOTHING;

-- name: DevelopmentDatabaseMarked :one
-- Reports whether the database holds the demo data.
SELECT EXISTS (SELECT 1 FROM development_database) AS marked;
