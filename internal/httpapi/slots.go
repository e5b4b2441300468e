package httpapi

import (
	"context"
	"fmt"
	"time"

	"creativeapi/internal/store"
)

// activeSlots lets at most MAX_ACTIVE_REQUESTS requests work at once: the
// others wait at the door, before their session lookup and before their
// body is read.
//
// Every request the API answers from the database waits for a pooled
// connection anyway (DB_MAX_CONNS, 20 by default). Without the door, a
// burst of clients waits inside: each with its body read and decoded, its
// stack grown deep into the handler, its timers set. At 128 clients that
// was 240 goroutines and 4.6 MB of stacks, which the soft memory limit
// (GOMEMLIMIT, cmd/creativeapi) counts, so the collector ran more often
// for every request (bench/compare.md). At the door a request holds only
// its headers. Twice the pool (the default) keeps the pool busy: while
// half the slots hold connections, the other half have read their bodies
// and queue for the next connection, their session lookups shared
// (internal/auth).
//
// The door is the head of the pool's queue, so a request waits there no
// longer than it would for a connection (DB_ACQUIRE_TIMEOUT), and then
// answers 503 as an exhausted pool does. Only secured operations pass it:
// the others (sign-in, health, the docs) do not queue for the pool behind
// a session lookup, and the event stream holds its slot-free connection
// for as long as its client keeps it.
type activeSlots struct {
	slots chan struct{}
	// wait bounds a request's wait for a slot.
	wait time.Duration
	// waited, when set, learns how long each request that found every
	// slot taken waited (for metrics).
	waited func(time.Duration)
}

func newActiveSlots(n int, wait time.Duration, waited func(time.Duration)) *activeSlots {
	return &activeSlots{slots: make(chan struct{}, n), wait: wait, waited: waited}
}

// enter takes a slot, waiting at most the bound or until ctx ends; leave
// gives it back. An error wraps store.ErrUnavailable: the answer is 503.
func (a *activeSlots) enter(ctx context.Context) error {
	select {
	case a.slots <- struct{}{}:
		return nil
	default:
	}
	start := time.Now()
	if a.waited != nil {
		defer func() { a.waited(time.Since(start)) }()
	}
	timer := time.NewTimer(a.wait)
	defer timer.Stop()
	select {
	case a.slots <- struct{}{}:
		return nil
	case <-timer.C:
		return fmt.Errorf("%w: all %d active-request slots (MAX_ACTIVE_REQUESTS) stayed taken for %s", store.ErrUnavailable, cap(a.slots), a.wait)
	case <-ctx.Done():
		return fmt.Errorf("%w: waiting for an active-request slot: %w", store.ErrUnavailable, context.Cause(ctx))
	}
}

// leave gives back the slot enter took.
func (a *activeSlots) leave() {
	<-a.slots
}
