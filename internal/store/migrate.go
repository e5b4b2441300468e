package store

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"creativeapi/migrations"
)

// RiverSchema is the schema of River's job tables (docs/events.md). They
// are River's: its own migrations create them, after ours, so schema.sql
// (the public schema) stays ours alone.
const RiverSchema = "river"

// Migrate applies, in name order, every embedded migration not yet recorded
// in schema_migrations, each in its own transaction, then River's
// migrations into RiverSchema.
func Migrate(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) (applied int, err error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return 0, translateCall(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", LockMigrations); err != nil {
		return 0, translateCall(err)
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", LockMigrations) }()
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return 0, translateCall(err)
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
			return applied, translateCall(err)
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
			return applied, translateCall(err)
		}
		if _, err := tx.Exec(ctx, string(body)); err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
			return applied, fmt.Errorf("migration %s: %w", name, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version) VALUES ($1)", version); err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
			return applied, translateCall(err)
		}
		if err := tx.Commit(ctx); err != nil {
			return applied, translateCall(err)
		}
		applied++
		log.Info("migration applied", "version", version)
	}
	if err := migrateRiver(ctx, pool, log); err != nil {
		return applied, err
	}
	return applied, nil
}

// migrateRiver brings River's tables up to the version of the River module
// we build with; River takes its own lock, and a second run does nothing.
func migrateRiver(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) error {
	if _, err := pool.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+RiverSchema); err != nil {
		return translateCall(err)
	}
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Schema: RiverSchema, Logger: log})
	if err != nil {
		return err
	}
	res, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	for _, v := range res.Versions {
		log.Info("river migration applied", "version", v.Version)
	}
	return nil
}
