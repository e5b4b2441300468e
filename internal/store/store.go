// Package store owns the database boundary: the connection pool, the one
// transaction helper, migrations, and the translation of database errors
// into the errors the rest of the service understands.
package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"creativeapi/gen/db"
)

// Errors the store translates database failures into.
var (
	// ErrNotFound: the row does not exist (pgx.ErrNoRows).
	ErrNotFound = errors.New("not found")
	// ErrConflict: a unique constraint refused the write.
	ErrConflict = errors.New("conflict")
	// ErrUnavailable: the database cannot be reached or did not answer in time.
	ErrUnavailable = errors.New("database unavailable")
)

// PoolConfig bounds the pool's waits so an outage becomes a quick 503, not a hang.
type PoolConfig struct {
	ConnectTimeout   time.Duration
	StatementTimeout time.Duration
	MaxConns         int32
	LockTimeout      time.Duration
	// Tracer, when set, sees every query (tests count round trips with it).
	Tracer pgx.QueryTracer
}

// Open connects a pool to url and checks that the database answers.
func Open(ctx context.Context, url string, pc PoolConfig) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database URL: %w", err)
	}
	if pc.ConnectTimeout > 0 {
		cfg.ConnConfig.ConnectTimeout = pc.ConnectTimeout
	}
	if pc.StatementTimeout > 0 {
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = fmt.Sprint(pc.StatementTimeout.Milliseconds())
		// A transaction left idle (a stuck client of ours) must not hold locks forever.
		cfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"] = fmt.Sprint((2 * pc.StatementTimeout).Milliseconds())
	}
	if pc.LockTimeout > 0 {
		cfg.ConnConfig.RuntimeParams["lock_timeout"] = fmt.Sprint(pc.LockTimeout.Milliseconds())
	}
	if pc.MaxConns > 0 {
		cfg.MaxConns = pc.MaxConns
	}
	cfg.ConnConfig.Tracer = pc.Tracer
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	pingCtx, cancel := context.WithTimeout(ctx, cfg.ConnConfig.ConnectTimeout+time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to the database: %w", err)
	}
	return pool, nil
}

// Store runs queries on the pool.
type Store struct {
	Pool *pgxpool.Pool
	// Q runs single statements outside a transaction.
	Q *db.Queries
}

// New wraps a pool.
func New(pool *pgxpool.Pool) *Store {
	return &Store{Pool: pool, Q: db.New(pool)}
}

// InTx runs fn in one transaction: committed when fn returns nil, rolled back
// otherwise. The rollback ignores the request's cancellation so a cancelled
// request never leaves a connection mid-transaction. Errors come back
// translated.
func (s *Store) InTx(ctx context.Context, fn func(q *db.Queries) error) error {
	tx, err := s.Pool.Begin(ctx)
	if err != nil {
		return Translate(err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := fn(s.Q.WithTx(tx)); err != nil {
		return Translate(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return Translate(fmt.Errorf("commit: %w", err))
	}
	return nil
}

// Translate maps database errors to ErrNotFound, ErrConflict and
// ErrUnavailable (keeping the original in the chain for logs); other errors
// pass through.
func Translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrConflict) || errors.Is(err, ErrUnavailable) {
		return err
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	// Connection failures come first: a refused connection is a ConnectError
	// wrapping the server's PgError.
	var netErr net.Error
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) || errors.As(err, &netErr) || pgconn.Timeout(err) ||
		errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == pgerrcode.UniqueViolation:
			return fmt.Errorf("%w: %w", ErrConflict, err)
		case pgErr.Code == pgerrcode.QueryCanceled, pgErr.Code == pgerrcode.LockNotAvailable,
			pgerrcode.IsOperatorIntervention(pgErr.Code), pgerrcode.IsConnectionException(pgErr.Code),
			pgerrcode.IsInsufficientResources(pgErr.Code):
			return fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
	}
	return err
}
