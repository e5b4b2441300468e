package testenv

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
)

// RoundTrips is a pgx tracer that records the round trips a pool makes while
// Record runs: one entry per statement (pgx sends BEGIN and COMMIT as
// statements too), and one per pipeline, named after its statements joined
// with "+" (begin+CreativeLockForAction).
type RoundTrips struct {
	on    atomic.Bool
	mu    sync.Mutex
	trips []string
}

// Record runs f and returns the round trips made meanwhile.
func (r *RoundTrips) Record(f func()) []string {
	r.mu.Lock()
	r.trips = nil
	r.mu.Unlock()
	r.on.Store(true)
	f()
	r.on.Store(false)
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.trips)
}

func (r *RoundTrips) add(trip string) {
	if r.on.Load() {
		r.mu.Lock()
		r.trips = append(r.trips, trip)
		r.mu.Unlock()
	}
}

// TraceQueryStart records one statement.
func (r *RoundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	r.add(StatementName(d.SQL))
	return ctx
}

// TraceQueryEnd records nothing.
func (r *RoundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceBatchStart records a pipeline as one round trip.
func (r *RoundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	names := make([]string, len(d.Batch.QueuedQueries))
	for i, q := range d.Batch.QueuedQueries {
		names[i] = StatementName(q.SQL)
	}
	r.add(strings.Join(names, "+"))
	return ctx
}

// TraceBatchQuery records nothing: the pipeline was recorded at its start.
func (r *RoundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

// TraceBatchEnd records nothing.
func (r *RoundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// StatementName is the sqlc name of a statement ("-- name: CreativeGet :one"),
// else its first word in lower case (begin, commit).
func StatementName(sql string) string {
	f := strings.Fields(sql)
	if len(f) >= 3 && f[0] == "--" && f[1] == "name:" {
		return f[2]
	}
	if len(f) > 0 {
		return strings.ToLower(f[0])
	}
	return ""
}
