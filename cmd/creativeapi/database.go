package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"creativeapi/internal/config"
	"creativeapi/internal/pgserver"
	"creativeapi/internal/seed"
	"creativeapi/internal/store"
)

// privateDatabase is the database name inside the private cluster.
const privateDatabase = "creativeapi"

// errNoDatabase refuses to start without DATABASE_URL outside development
// mode: a server that silently ran on a private database would lose its
// data with the machine.
var errNoDatabase = errors.New("DATABASE_URL is not set: point it at your PostgreSQL, or set DEV_MODE=true to run a private development PostgreSQL under DATA_DIR")

// errDevelopmentDatabase refuses, without DEV_MODE, a database that holds
// the demo data: its users' password is published in the README.
var errDevelopmentDatabase = errors.New("this database holds the demo data (users with the published password " + seed.DemoPassword +
	") and is for development only: set DEV_MODE=true to keep developing on it, or start over on a new empty database (DATABASE_URL), run migrate, and create your users with 'users create'")

// refuseDevelopmentDatabase returns errDevelopmentDatabase, outside
// development mode, when the database is marked as a development one
// (seed marks it). A database not yet migrated has no mark to read.
func refuseDevelopmentDatabase(ctx context.Context, cfg config.Config, pool *pgxpool.Pool) error {
	if cfg.DevMode {
		return nil
	}
	var migrated bool
	if err := pool.QueryRow(ctx, "SELECT to_regclass('development_database') IS NOT NULL").Scan(&migrated); err != nil || !migrated {
		return err
	}
	marked, err := store.New(pool).Q.DevelopmentDatabaseMarked(ctx)
	if err != nil {
		return err
	}
	if marked {
		return errDevelopmentDatabase
	}
	return nil
}

// openDatabase connects to DATABASE_URL or, in development mode when it is
// unset, starts the private PostgreSQL under DATA_DIR. close stops
// whatever it started.
func openDatabase(ctx context.Context, cfg config.Config, log *slog.Logger) (pool *pgxpool.Pool, close func(), err error) {
	url := cfg.DatabaseURL
	stopCluster := func() {}
	if url == "" && !cfg.DevMode {
		return nil, nil, errNoDatabase
	}
	if url == "" {
		if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
			return nil, nil, err
		}
		pgLog, err := os.OpenFile(filepath.Join(cfg.DataDir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, nil, fmt.Errorf("open the PostgreSQL log: %w", err)
		}
		srv, err := pgserver.Start(ctx, pgserver.Options{DataDir: filepath.Join(cfg.DataDir, "postgres"), Log: pgLog})
		if errors.Is(err, pgserver.ErrInUse) {
			pgLog.Close()
			return nil, nil, fmt.Errorf("start the private PostgreSQL: %w (another creativeapi serve runs on DATA_DIR=%s: stop it, or use another DATA_DIR)", err, cfg.DataDir)
		}
		if err != nil {
			pgLog.Close()
			return nil, nil, fmt.Errorf("start the private PostgreSQL: %w (its log: %s)", err, pgLog.Name())
		}
		stopCluster = func() { _ = srv.Stop(); pgLog.Close() }
		log.Info("private PostgreSQL started", "data_dir", srv.DataDir, "port", srv.Port, "log", pgLog.Name())
		if err := ensureDatabase(ctx, srv.URL("postgres"), privateDatabase); err != nil {
			stopCluster()
			return nil, nil, err
		}
		url = srv.URL(privateDatabase)
	}
	pool, err = store.Open(ctx, url, store.PoolConfig{
		ConnectTimeout: cfg.DBConnectTimeout, StatementTimeout: cfg.DBStatementTimeout,
		LockTimeout: cfg.DBLockTimeout, MaxConns: cfg.DBMaxConns, AcquireTimeout: cfg.DBAcquireTimeout,
	})
	if err != nil {
		stopCluster()
		return nil, nil, err
	}
	if err := refuseDevelopmentDatabase(ctx, cfg, pool); err != nil {
		pool.Close()
		stopCluster()
		return nil, nil, err
	}
	return pool, func() { pool.Close(); stopCluster() }, nil
}

// openCommandDatabase is openDatabase for the commands other than serve:
// in development mode without DATABASE_URL, while a development server
// runs under DATA_DIR, they use its private PostgreSQL (a second cluster
// on the same directory cannot start, and must not touch its files).
func openCommandDatabase(ctx context.Context, cfg config.Config, log *slog.Logger) (pool *pgxpool.Pool, close func(), err error) {
	if cfg.DatabaseURL == "" && cfg.DevMode {
		s, err := readRunState(cfg.DataDir)
		switch {
		case err == nil && s.Database != "":
			cfg.DatabaseURL = s.Database
			log.Debug("using the private PostgreSQL of the running development server", "pid", s.PID)
		case err != nil && !errors.Is(err, errNoDevServer):
			return nil, nil, err
		}
	}
	return openDatabase(ctx, cfg, log)
}

func ensureDatabase(ctx context.Context, adminURL, name string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
			return fmt.Errorf("create database %s: %w", name, err)
		}
	}
	return nil
}
