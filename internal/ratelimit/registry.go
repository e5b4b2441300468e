package ratelimit

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/store"
)

// Beat is how often a replica records itself and re-reads who shares the
// budget; a replica unseen for staleAfter no longer has a share.
const (
	Beat       = 3 * time.Second
	staleAfter = 3 * Beat
)

// Registry keeps a limiter's share current: every Beat it records the
// replica in rate_limit_replicas, learns the replicas alive, and gives
// the limiter its share; it also drops the limiter's whole buckets. One
// statement per beat and replica, none per request.
type Registry struct {
	ID      uuid.UUID
	limiter *Limiter
	store   *store.Store
	log     *slog.Logger
}

// NewRegistry makes the registry of limiter under a new replica id.
func NewRegistry(l *Limiter, s *store.Store, log *slog.Logger) *Registry {
	return &Registry{ID: uuid.New(), limiter: l, store: s, log: log}
}

// Beat records the replica and sets the limiter's share from the replicas
// alive. A failed beat leaves the share as it was.
func (r *Registry) Beat(ctx context.Context) error {
	ids, err := r.store.Q.RateLimitReplicaBeat(ctx, db.RateLimitReplicaBeatParams{ID: r.ID, StaleSeconds: staleAfter.Seconds()})
	if err != nil {
		return err
	}
	index := slices.Index(ids, r.ID)
	if index < 0 { // cannot happen: the statement returns this replica
		ids, index = append(ids, r.ID), len(ids)
	}
	n, was := len(ids), 0
	if prev, _ := r.limiter.Replicas(); prev != n {
		was = prev
	}
	r.limiter.SetReplicas(n, index)
	if was != 0 {
		r.log.Info("rate limits: the budget is shared by another number of replicas", "replicas", n, "before", was, "index", index)
	}
	return nil
}

// Run beats until ctx ends, then leaves, so the other replicas take this
// one's share at their next beat.
func (r *Registry) Run(ctx context.Context) {
	t := time.NewTicker(Beat)
	defer t.Stop()
	for {
		if err := r.Beat(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("rate limits: the replicas' beat failed; keeping the last share", "error", err)
		}
		r.limiter.Sweep()
		select {
		case <-ctx.Done():
			leave, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			defer cancel()
			_ = r.store.Q.RateLimitReplicaLeave(leave, r.ID)
			return
		case <-t.C:
		}
	}
}
