package events

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	"creativeapi/gen/db"
	"creativeapi/internal/store"
)

// Fanout hands newly published events on in the publishing transaction
// (webhooks create their deliveries and jobs there, so an event is handed
// on exactly once).
type Fanout func(ctx context.Context, tx pgx.Tx, q *db.Queries, published []db.OutboxPublishRow) error

// PublisherConfig tunes a Publisher; zero fields take defaults.
type PublisherConfig struct {
	// Batch bounds the events one transaction publishes (default 500).
	Batch int32
	// PollInterval is how often it looks without being woken (default 1 s):
	// a lost notice delays events by at most this.
	PollInterval time.Duration
	// OnPublished, when set, is told which events each run published (a
	// metrics hook).
	OnPublished func(published []db.OutboxPublishRow)
}

// Publisher gives committed events their seq, in commit order, and fans
// them out. Every replica runs one; they take turns on an advisory lock.
type Publisher struct {
	st     *store.Store
	cfg    PublisherConfig
	fanout Fanout
	log    *slog.Logger
}

// NewPublisher makes a publisher; fanout may be nil.
func NewPublisher(st *store.Store, cfg PublisherConfig, fanout Fanout, log *slog.Logger) *Publisher {
	if cfg.Batch <= 0 {
		cfg.Batch = 500
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	return &Publisher{st: st, cfg: cfg, fanout: fanout, log: log}
}

// PublishOnce publishes one batch and says how many events it held.
func (p *Publisher) PublishOnce(ctx context.Context) (int, error) {
	var published []db.OutboxPublishRow
	err := p.st.InPgxTx(ctx, func(tx pgx.Tx, q store.Tx) error {
		if err := q.OutboxPublishLock(ctx); err != nil {
			return err
		}
		rows, err := q.OutboxPublish(ctx, p.cfg.Batch)
		if err != nil || len(rows) == 0 {
			return err
		}
		published = rows
		if p.fanout != nil {
			if err := p.fanout(ctx, tx, q.Queries, rows); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if len(published) > 0 && p.cfg.OnPublished != nil {
		p.cfg.OnPublished(published)
	}
	return len(published), nil
}

// Run publishes until ctx ends: whenever wake says events were written,
// and every PollInterval.
func (p *Publisher) Run(ctx context.Context, wake <-chan struct{}) {
	t := time.NewTicker(p.cfg.PollInterval)
	defer t.Stop()
	for {
		for {
			n, err := p.PublishOnce(ctx)
			if err != nil {
				if ctx.Err() == nil {
					p.log.WarnContext(ctx, "outbox publish failed", "error", err)
				}
				break
			}
			if n < int(p.cfg.Batch) {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-t.C:
		}
	}
}
