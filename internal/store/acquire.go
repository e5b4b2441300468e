package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// acquireBound gives every pool acquire its own deadline. pgxpool has no
// acquire timeout, but it runs Acquire under the context an AcquireTracer
// returns, so the tracer hook is where the bound goes. Queries pass through
// to next, the caller's tracer, when there is one.
type acquireBound struct {
	next    pgx.QueryTracer
	timeout time.Duration
}

type acquireCancelKey struct{}

var (
	_ pgxpool.AcquireTracer = acquireBound{}
	_ pgx.QueryTracer       = acquireBound{}
)

// TraceAcquireStart bounds the wait; the deadline applies to Acquire only,
// never to the queries that run on the connection afterwards.
func (a acquireBound) TraceAcquireStart(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireStartData) context.Context {
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	return context.WithValue(ctx, acquireCancelKey{}, cancel)
}

// TraceAcquireEnd releases the deadline's timer.
func (a acquireBound) TraceAcquireEnd(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireEndData) {
	if cancel, ok := ctx.Value(acquireCancelKey{}).(context.CancelFunc); ok {
		cancel()
	}
}

func (a acquireBound) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if a.next == nil {
		return ctx
	}
	return a.next.TraceQueryStart(ctx, conn, data)
}

func (a acquireBound) TraceQueryEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryEndData) {
	if a.next != nil {
		a.next.TraceQueryEnd(ctx, conn, data)
	}
}

// The pipelines of InTx (see tx) are traced as batches: pass them on too.
var _ pgx.BatchTracer = acquireBound{}

func (a acquireBound) TraceBatchStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	if b, ok := a.next.(pgx.BatchTracer); ok {
		return b.TraceBatchStart(ctx, conn, data)
	}
	return ctx
}

func (a acquireBound) TraceBatchQuery(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchQueryData) {
	if b, ok := a.next.(pgx.BatchTracer); ok {
		b.TraceBatchQuery(ctx, conn, data)
	}
}

func (a acquireBound) TraceBatchEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchEndData) {
	if b, ok := a.next.(pgx.BatchTracer); ok {
		b.TraceBatchEnd(ctx, conn, data)
	}
}
