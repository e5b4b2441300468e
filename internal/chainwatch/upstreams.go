package chainwatch

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"creativeapi/internal/trongrid"
)

// Upstream is one chain API the watcher may read, with its name for logs
// and metrics (its URL).
type Upstream struct {
	Name  string
	Chain Chain
}

// Upstreams reads the chain from several APIs, tried in order: a call
// that fails with the API's error (rate limit, 5xx, timeout, network,
// garbage, refusal) is asked of the next one, and the failed upstream
// backs off (Backoff: exponential from interval, capped, never shorter than
// its Retry-After) before it is asked first again. When every upstream is
// backing off, the one free soonest is asked. A page of transfers after
// the first is asked of the upstream that gave its fingerprint, since a
// fingerprint means nothing to another API. It is a Chain.
type Upstreams struct {
	list              []Upstream
	interval, maxWait time.Duration
	now               func() time.Time

	mu    sync.Mutex
	state []upstreamState
	// pager is the upstream that served the last page of transfers.
	pager int
}

type upstreamState struct {
	failures int
	until    time.Time
}

// NewUpstreams returns the failover over list (at least one), backing off
// from interval up to maxWait.
func NewUpstreams(list []Upstream, interval, maxWait time.Duration) *Upstreams {
	if maxWait <= 0 {
		maxWait = DefaultMaxBackoff
	}
	return &Upstreams{list: list, interval: interval, maxWait: maxWait, now: time.Now, state: make([]upstreamState, len(list))}
}

// order is the upstreams to try: those not backing off, in order, then
// those backing off, the one free soonest first.
func (u *Upstreams) order() []int {
	u.mu.Lock()
	defer u.mu.Unlock()
	now := u.now()
	var ready, waiting []int
	for i, s := range u.state {
		if now.Before(s.until) {
			waiting = append(waiting, i)
		} else {
			ready = append(ready, i)
		}
	}
	slices.SortStableFunc(waiting, func(a, b int) int { return u.state[a].until.Compare(u.state[b].until) })
	return append(ready, waiting...)
}

func (u *Upstreams) done(i int, err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	s := &u.state[i]
	if err == nil {
		*s = upstreamState{}
		return
	}
	s.failures++
	s.until = u.now().Add(Backoff(err, s.failures, u.interval, u.maxWait, rand.Float64))
}

// failsOver reports whether err is the upstream's failure (another
// upstream may answer), rather than the caller's (a cancelled context).
func failsOver(err error) bool {
	var ge *trongrid.Error
	return errors.As(err, &ge)
}

// call asks the upstreams in order until one answers, and returns the
// last error when none does.
func call[T any](ctx context.Context, u *Upstreams, only int, fn func(Chain) (T, error)) (T, int, error) {
	var zero T
	var lastErr error
	order := u.order()
	if only >= 0 {
		order = []int{only}
	}
	for _, i := range order {
		v, err := fn(u.list[i].Chain)
		if err == nil {
			u.done(i, nil)
			return v, i, nil
		}
		if !failsOver(err) || ctx.Err() != nil {
			return zero, i, err
		}
		u.done(i, err)
		lastErr = err
	}
	return zero, -1, lastErr
}

// Transfers implements Chain.
func (u *Upstreams) Transfers(ctx context.Context, q trongrid.TransfersQuery) (trongrid.Page, error) {
	only := -1
	if q.Fingerprint != "" {
		u.mu.Lock()
		only = u.pager
		u.mu.Unlock()
	}
	p, i, err := call(ctx, u, only, func(c Chain) (trongrid.Page, error) { return c.Transfers(ctx, q) })
	if err == nil {
		u.mu.Lock()
		u.pager = i
		u.mu.Unlock()
	}
	return p, err
}

// NowBlock implements Chain.
func (u *Upstreams) NowBlock(ctx context.Context, solid bool) (int64, error) {
	n, _, err := call(ctx, u, -1, func(c Chain) (int64, error) { return c.NowBlock(ctx, solid) })
	return n, err
}

// TransactionInfo implements Chain.
func (u *Upstreams) TransactionInfo(ctx context.Context, txID string) (trongrid.Receipt, error) {
	r, _, err := call(ctx, u, -1, func(c Chain) (trongrid.Receipt, error) { return c.TransactionInfo(ctx, txID) })
	return r, err
}

var _ Chain = (*Upstreams)(nil)
