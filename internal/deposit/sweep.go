package deposit

import (
	"context"
	"log/slog"
	"time"

	"creativeapi/gen/db"
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
// SKIP LOCKED, so replicas running it at once share the work.
func SweepJob(st *store.Store, log *slog.Logger) sweeper.Job {
	return sweeper.Job{Name: "deposits", Run: func(ctx context.Context) error { return Sweep(ctx, st, log) }}
}

// Sweep runs the deposit housekeeping once. Each batch of expiries commits
// with its deposit.expired events.
func Sweep(ctx context.Context, st *store.Store, log *slog.Logger) error {
	expired, err := inBatches(ctx, func(ctx context.Context, batch int32) (int64, error) {
		var n int64
		err := st.InTx(ctx, func(q *db.Queries) error {
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
		return err
	}
	released, err := inBatches(ctx, st.Q.DepositReleaseReservations)
	if err != nil {
		return err
	}
	if expired > 0 || released > 0 {
		log.InfoContext(ctx, "deposits swept", "expired", expired, "released", released)
	}
	return nil
}

func inBatches(ctx context.Context, step func(context.Context, int32) (int64, error)) (int64, error) {
	var total int64
	for range maxSweepBatches {
		n, err := step(ctx, sweepBatch)
		if err != nil {
			return total, store.Translate(err)
		}
		total += n
		if n < sweepBatch {
			break
		}
	}
	return total, nil
}
