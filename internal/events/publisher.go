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

// Fanouts hands published events to each of fs in turn, in the one
// publishing transaction.
func Fanouts(fs ...Fanout) Fanout {
	return func(ctx context.Context, tx pgx.Tx, q *db.Queries, published []db.OutboxPublishRow) error {
		for _, f := range fs {
			if err := f(ctx, tx, q, published); err != nil {
				return err
			}
		}
		return nil
	}
}

// DefaultPollInterval is how often a publisher looks for unpublished
// events unless configured otherwise (EVENTS_POLL_INTERVAL): on average an
// event waits half of it before it is published.
const DefaultPollInterval = 50 * time.Millisecond

// PublisherConfig tunes a Publisher; zero fields take defaults.
type PublisherConfig struct {
	// Batch bounds the events one transaction publishes (default 500).
	Batch int32
	// PollInterval is how often it looks for unpublished events (default
	// DefaultPollInterval). Nothing wakes it sooner: a command that sent a
	// notice would commit one at a time with every other (docs/events.md).
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
		cfg.PollInterval = DefaultPollInterval
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
		// The stream hubs hear of the events at commit (LISTEN
		// outbox_published), not before they can read them. (RETURNING
		// has no order: the last seq is the largest.)
		last := int64(0)
		for _, r := range rows {
			last = max(last, r.Seq)
		}
		if err := q.OutboxPublishedNotify(ctx, last); err != nil {
			return err
		}
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

// Run publishes until ctx ends: every PollInterval it looks for
// unpublished events and publishes batches until none is left.
func (p *Publisher) Run(ctx context.Context) {
	t := time.NewTicker(p.cfg.PollInterval)
	defer t.Stop()
	for {
		if err := p.publishPending(ctx); err != nil && ctx.Err() == nil {
			p.log.WarnContext(ctx, "outbox publish failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// publishPending publishes every event waiting now. The look costs one
// indexed read, outside any transaction, so replicas polling an idle outbox
// neither write nor wait for each other's lock.
func (p *Publisher) publishPending(ctx context.Context) error {
	pending, err := p.st.Q.OutboxUnpublishedExists(ctx)
	if err != nil || !pending {
		return err
	}
	for {
		n, err := p.PublishOnce(ctx)
		if err != nil || n < int(p.cfg.Batch) {
			return err
		}
	}
}
