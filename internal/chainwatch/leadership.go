package chainwatch

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"creativeapi/internal/store"
	"creativeapi/internal/trongrid"
)

// This file is the watcher's leadership and back-off: which replica polls,
// and how long it waits between polls. It knows nothing of transfers or
// deposits; it calls Poll.

// Leading reports whether this watcher is the one polling.
func (w *Watcher) Leading() bool { return w.leading.Load() }

// Run tries to become the watcher every poll interval and, once it is,
// polls until ctx ends or its lock connection is lost. It returns when ctx
// ends; it never gives up on errors.
func (w *Watcher) Run(ctx context.Context) {
	for {
		if err := w.lead(ctx); err != nil && ctx.Err() == nil {
			w.log.Warn("lost the watcher lock; trying again", "error", err)
		}
		if !w.Sleep(ctx, w.cfg.PollInterval) {
			return
		}
	}
}

// lead holds the leader lock on a connection of its own, outside the
// request pool (which it would otherwise shrink by one), while it polls.
// It returns nil at once when another replica holds the lock.
func (w *Watcher) lead(ctx context.Context) error {
	lock, err := w.st.TryLock(ctx, store.LockChainWatcher)
	if err != nil || lock == nil {
		return err
	}
	defer w.resign(ctx, lock)
	w.leading.Store(true)
	w.log.Info("leading: this replica polls the chain", "treasury", w.cfg.Treasury, "interval", w.cfg.PollInterval.String())

	failures := 0
	for {
		res, err := w.Poll(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if w.OnPoll != nil {
			w.OnPoll(res, err)
		}
		delay := w.cfg.PollInterval
		if err != nil {
			failures++
			delay = Backoff(err, failures, w.cfg.PollInterval, w.cfg.MaxBackoff, rand.Float64)
			w.log.Warn("poll failed; backing off", "error", err, "failures", failures, "retry_in", delay.String())
		} else {
			failures = 0
			res.log(ctx, w.log)
		}
		if !w.Sleep(ctx, delay) {
			return nil
		}
		// Still the leader only while the lock's connection lives.
		if err := lock.Alive(ctx); err != nil {
			return err
		}
	}
}

// resign gives up the lock.
func (w *Watcher) resign(ctx context.Context, lock *store.Held) {
	w.leading.Store(false)
	lock.Release(ctx)
}

// Backoff is the wait after the failures-th failed poll in a row:
// exponential from the poll interval, with jitter in its upper half,
// capped, and never shorter than the upstream's Retry-After. rnd returns a
// number in [0, 1).
func Backoff(err error, failures int, interval, maxWait time.Duration, rnd func() float64) time.Duration {
	d := interval
	for i := 1; i < failures && d < maxWait; i++ {
		d *= 2
	}
	d = min(d, maxWait)
	d = d/2 + time.Duration(rnd()*float64(d/2))
	var ge *trongrid.Error
	if errors.As(err, &ge) && ge.RetryAfter > d {
		d = ge.RetryAfter
	}
	return max(d, interval)
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
