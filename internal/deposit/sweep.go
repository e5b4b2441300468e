package deposit

import (
	"context"
	"log/slog"
	"time"

	"creativeapi/internal/store"
	"creativeapi/internal/sweeper"
)

// sweepBatch bounds the rows one sweep statement locks, so a backlog never
// becomes one long transaction; maxSweepBatches bounds one run.
const (
	sweepBatch      = 1000
	maxSweepBatches = 100
)

// SweepJob is the deposit housekeeping of the sweeper: it marks deposits
// past their lifetime expired and releases the amounts of those past their
// monitoring window. Each step is a set-based UPDATE of rows it locks with
// SKIP LOCKED, so replicas running it at once share the work. onExpired,
// when set, is told how many deposits each run marked expired (metrics).
func SweepJob(st *store.Store, log *slog.Logger, onExpired func(n int64)) sweeper.Job {
	return sweeper.Job{Name: "deposits", Run: func(ctx context.Context) error {
		expired, err := sweep(ctx, st, log)
		if onExpired != nil {
			onExpired(expired)
		}
		return err
	}}
}

// Sweep runs the deposit housekeeping once. Each batch of expiries commits
// with its deposit.expired events.
func Sweep(ctx context.Context, st *store.Store, log *slog.Logger) error {
	_, err := sweep(ctx, st, log)
	return err
}

// sweep runs the deposit housekeeping once and returns how many deposits
// it marked expired, also when a later step failed (those are committed).
func sweep(ctx context.Context, st *store.Store, log *slog.Logger) (expired int64, err error) {
	expired, err = inBatches(ctx, func(ctx context.Context, batch int32) (int64, error) {
		var n int64
		err := st.InTx(ctx, func(q store.Tx) error {
			deps, err := q.DepositExpire(ctx, batch)
			n = int64(len(deps))
			if err != nil {
				return err
			}
			return WriteEvents(ctx, q, deps, time.Now())
		})
		return n, err
	})
	if err != nil {
		return expired, err
	}
	released, err := inBatches(ctx, st.Q.DepositReleaseReservations)
	if err != nil {
		return expired, err
	}
	if expired > 0 || released > 0 {
		log.InfoContext(ctx, "deposits swept", "expired", expired, "released", released)
	}
	return expired, nil
}

func inBatches(ctx context.Context, step func(context.Context, int32) (int64, error)) (int64, error) {
	var total int64
	for range maxSweepBatches {
		n, err := step(ctx, sweepBatch)
		if err != nil {
			return total, err
		}
		total += n
		if n < sweepBatch {
			break
		}
	}
	return total, nil
}
