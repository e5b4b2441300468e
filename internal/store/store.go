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
	// AcquireTimeout bounds the wait for a free pooled connection (pgxpool
	// waits as long as the context allows): an exhausted pool answers 503
	// after it instead of queueing requests without end. Zero: no bound.
	AcquireTimeout time.Duration
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
	// Statements run in pgx's default mode, cache_statement: a connection
	// prepares each once and keeps it in its statement cache. pgx also gives
	// every connection a description cache, which only the cache_describe
	// mode uses, with its table sized up front for 512 statements: live heap
	// the garbage collector's memory limit counts, for nothing.
	if cfg.ConnConfig.DefaultQueryExecMode == pgx.QueryExecModeCacheStatement {
		cfg.ConnConfig.DescriptionCacheCapacity = 0
	}
	for name, value := range pc.SessionSettings() {
		cfg.ConnConfig.RuntimeParams[name] = value
	}
	if pc.MaxConns > 0 {
		cfg.MaxConns = pc.MaxConns
	}
	cfg.ConnConfig.Tracer = pc.Tracer
	cfg.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
		registerUUID(conn.TypeMap())
		return nil
	}
	if pc.AcquireTimeout > 0 {
		cfg.ConnConfig.Tracer = acquireBound{next: pc.Tracer, timeout: pc.AcquireTimeout}
	}
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

// SessionSettings are the PostgreSQL settings every pooled connection
// starts with (the benchmark gives pgbench the same).
//
// plan_cache_mode: pgx prepares each statement once per connection, and a
// generic plan then skips the planner on every execution. Left to choose,
// PostgreSQL re-plans the creative reads each time (their LIMIT and ANY
// parameters make a custom plan look cheaper), which cost 0.3 to 1.3 ms of
// database CPU per statement; the queries are written so their generic
// plans use the indexes.
//
// max_parallel_workers_per_gather, jit: a generic plan cannot see that a
// page is 21 rows (it assumes a tenth of the table), and at a million
// creatives it started two parallel workers for every page: 2 ms of CPU
// for a 0.2 ms read. Statements of an API are short: no parallel workers,
// no JIT compilation.
func (pc PoolConfig) SessionSettings() map[string]string {
	settings := map[string]string{
		"plan_cache_mode":                 "force_generic_plan",
		"max_parallel_workers_per_gather": "0",
		"jit":                             "off",
	}
	if pc.StatementTimeout > 0 {
		settings["statement_timeout"] = fmt.Sprint(pc.StatementTimeout.Milliseconds())
		// A transaction left idle (a stuck client of ours) must not hold locks forever.
		settings["idle_in_transaction_session_timeout"] = fmt.Sprint((2 * pc.StatementTimeout).Milliseconds())
	}
	if pc.LockTimeout > 0 {
		settings["lock_timeout"] = fmt.Sprint(pc.LockTimeout.Milliseconds())
	}
	return settings
}

// Store runs queries on the pool.
type Store struct {
	Pool *pgxpool.Pool
	// Q runs single statements outside a transaction; its errors come back
	// translated.
	Q *db.Queries
}

// New wraps a pool.
func New(pool *pgxpool.Pool) *Store {
	return &Store{Pool: pool, Q: db.New(translating{pool})}
}

// InTx runs fn in one transaction: committed when fn returns nil, rolled back
// otherwise. The rollback ignores the request's cancellation so a cancelled
// request never leaves a connection mid-transaction. Errors come back
// translated. BEGIN travels with fn's first statement, and statements sent
// through Tx.Next with the statement after them (or COMMIT), so a
// transaction costs no round trip of its own.
func (s *Store) InTx(ctx context.Context, fn func(q Tx) error) error {
	conn, err := s.Pool.Acquire(ctx)
	if err != nil {
		return translateCall(err)
	}
	defer conn.Release()
	t := newTx(conn.Conn())
	if err := fn(Tx{db.New(translating{t}), t}); err != nil {
		t.rollback(context.WithoutCancel(ctx))
		return Translate(err)
	}
	if err := t.commit(ctx); err != nil {
		t.rollback(context.WithoutCancel(ctx))
		return translateCall(fmt.Errorf("commit: %w", err))
	}
	return nil
}

// OnConn runs fn with queries on one pooled connection, held until fn
// returns, outside any transaction: fn starts once the connection is
// there. Errors come back translated.
func (s *Store) OnConn(ctx context.Context, fn func(q *db.Queries) error) error {
	conn, err := s.Pool.Acquire(ctx)
	if err != nil {
		return translateCall(err)
	}
	defer conn.Release()
	return Translate(fn(db.New(translating{conn})))
}

// InPgxTx is InTx for libraries that take a pgx.Tx (River inserts its jobs
// in the caller's transaction): fn gets both the transaction and the
// queries on it. Committed when fn returns nil, rolled back otherwise, and
// errors come back translated, as with InTx.
func (s *Store) InPgxTx(ctx context.Context, fn func(tx pgx.Tx, q Tx) error) error {
	tx, err := s.Pool.Begin(ctx)
	if err != nil {
		return translateCall(err)
	}
	if err := fn(tx, Tx{Queries: db.New(translating{tx})}); err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return Translate(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return translateCall(fmt.Errorf("commit: %w", err))
	}
	return nil
}

// Translate maps PostgreSQL's errors to ErrNotFound, ErrConflict and
// ErrUnavailable (keeping the original in the chain for logs); other errors
// pass through. Only an error of PostgreSQL or of pgx's connection to it is
// the database's: a network failure or a deadline of another service (the
// object store, whose calls run inside transactions too) is not, and stays
// that service's error. Where the error surely came from a call to the
// database (a statement, an acquire, a commit), translateCall says so.
func Translate(err error) error { return translate(err, false) }

// translateCall is Translate for the error of a call made to the database:
// a network error or a deadline there is the database not answering.
func translateCall(err error) error { return translate(err, true) }

func translate(err error, ofDatabase bool) error {
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
	if errors.As(err, &connErr) || pgconn.Timeout(err) ||
		(ofDatabase || ofPgconn(err)) && (errors.As(err, &netErr) || errors.Is(err, context.DeadlineExceeded)) {
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

// ofPgconn reports whether err passed through pgconn, PostgreSQL's wire
// protocol: its errors of a connection (a read or write that failed, a
// connection busy or closed) all say whether a retry is safe, which no
// other library's here do. A library that runs statements on a pgx.Tx of
// ours (River, in InPgxTx) returns them as they are.
func ofPgconn(err error) bool {
	var own interface{ SafeToRetry() bool }
	return errors.As(err, &own)
}
