// Package sweeper runs the server's periodic housekeeping (purging expired
// idempotency keys and sessions, expiring deposits). Every job is written to
// be safe when several replicas run it at once.
package sweeper

import (
	"context"
	"log/slog"
	"time"
)

// Job is one housekeeping task.
type Job struct {
	Name string
	Run  func(ctx context.Context) error
}

// Run runs every job now and then every interval until ctx ends.
func Run(ctx context.Context, interval time.Duration, log *slog.Logger, jobs ...Job) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		for _, j := range jobs {
			if err := j.Run(ctx); err != nil && ctx.Err() == nil {
				log.Warn("sweep failed", "job", j.Name, "error", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
