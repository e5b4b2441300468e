package upload

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"creativeapi/internal/objectstore"
	"creativeapi/internal/store"
)

// ExpireInterval is how often the expiry job runs.
const ExpireInterval = 10 * time.Minute

// expireBatch is how many uploads one Expire call ends.
const expireBatch = 100

type expireArgs struct{}

func (expireArgs) Kind() string { return "uploads_expire" }

type expireWorker struct {
	river.WorkerDefaults[expireArgs]
	st      *store.Store
	objects *objectstore.Store
	lim     Limits
	log     *slog.Logger
}

func (w *expireWorker) Timeout(*river.Job[expireArgs]) time.Duration { return 5 * time.Minute }

// Work aborts every pending upload past its expiry, then sweeps the keys
// of finished ones past theirs (Sweep), a batch at a time.
func (w *expireWorker) Work(ctx context.Context, _ *river.Job[expireArgs]) error {
	for _, step := range []struct {
		what string
		run  func(now time.Time) (int, error)
	}{
		{"expired uploads aborted", func(now time.Time) (int, error) { return Expire(ctx, w.st, w.objects, w.lim, now, expireBatch) }},
		{"finished uploads swept", func(now time.Time) (int, error) { return Sweep(ctx, w.st, w.objects, now, expireBatch) }},
	} {
		total := 0
		for {
			n, err := step.run(time.Now())
			total += n
			if err != nil {
				return err
			}
			if n < expireBatch {
				break
			}
		}
		if total > 0 {
			w.log.InfoContext(ctx, step.what, "uploads", total)
		}
	}
	return nil
}

// Jobs registers the expiry worker and returns its periodic job, for the
// replica's River client (webhooks.Config.MoreJobs).
func Jobs(st *store.Store, objects *objectstore.Store, lim Limits, log *slog.Logger) func(*river.Workers) ([]*river.PeriodicJob, error) {
	return func(workers *river.Workers) ([]*river.PeriodicJob, error) {
		if err := river.AddWorkerSafely(workers, &expireWorker{st: st, objects: objects, lim: lim, log: log}); err != nil {
			return nil, err
		}
		return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(ExpireInterval),
			func() (river.JobArgs, *river.InsertOpts) { return expireArgs{}, nil }, &river.PeriodicJobOpts{RunOnStart: true})}, nil
	}
}
