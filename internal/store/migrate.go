package store

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"creativeapi/migrations"
)

// migrationLock serialises concurrent `migrate` runs (several replicas
// starting at once) on one advisory lock.
const migrationLock = 7_305_551_001

// Migrate applies, in name order, every embedded migration not yet recorded
// in schema_migrations, each in its own transaction.
func Migrate(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) (applied int, err error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return 0, Translate(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrationLock); err != nil {
		return 0, Translate(err)
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrationLock) }()
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return 0, Translate(err)
	}
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		return 0, err
	}
	sort.Strings(names)
	for _, name := range names {
		version := strings.TrimSuffix(name, ".sql")
		var done bool
		if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = $1)", version).Scan(&done); err != nil {
			return applied, Translate(err)
		}
		if done {
			continue
		}
		body, err := fs.ReadFile(migrations.FS, name)
		if err != nil {
			return applied, err
		}
		tx, err := conn.Begin(ctx)
		if err != nil {
			return applied, Translate(err)
		}
		if _, err := tx.Exec(ctx, string(body)); err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
			return applied, fmt.Errorf("migration %s: %w", name, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version) VALUES ($1)", version); err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
			return applied, Translate(err)
		}
		if err := tx.Commit(ctx); err != nil {
			return applied, Translate(err)
		}
		applied++
		log.Info("migration applied", "version", version)
	}
	return applied, nil
}
