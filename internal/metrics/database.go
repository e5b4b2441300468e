package metrics

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"creativeapi/gen/db"
	"creativeapi/internal/deposit"
	"creativeapi/internal/store"
)

// databaseReadTimeout bounds a scrape's reads; Prometheus's own scrape
// timeout is 10 s by default.
const databaseReadTimeout = 2 * time.Second

// databaseCollector reports what the database knows, read when scraped:
// the open deposits, the events backlog and, with a watcher, where it
// stands. Every replica
// reports the same values, whichever one polls, so the watcher's lag is
// still reported when its leader is gone. Each read is an indexed lookup
// whose cost does not grow with the tables.
type databaseCollector struct {
	st    *store.Store
	log   *slog.Logger
	chain *db.ChainPositionStatusParams

	open, review, lag, head, solid *prometheus.Desc

	unpublished, oldestUnpublished, pending, overdue *prometheus.Desc
}

// DatabaseCollector reports the open deposits by status and, when
// treasury is set (the chain watcher runs), the watcher's lag, its last
// head and solidified blocks and the transfers waiting for an operator.
func DatabaseCollector(st *store.Store, log *slog.Logger, treasury, contract string) prometheus.Collector {
	c := &databaseCollector{
		st: st, log: log.With("component", "metrics"),
		open: prometheus.NewDesc(prometheus.BuildFQName(namespace, "deposits", "open"),
			"Open deposit requests by status: awaiting_transfer (not expired) and confirming.", []string{"status"}, nil),
		review: prometheus.NewDesc(prometheus.BuildFQName(namespace, "chain", "transfers_needing_review"),
			"Late and unmatched transfers waiting for an operator (creativeapi transfers list).", nil, nil),
		lag: prometheus.NewDesc(prometheus.BuildFQName(namespace, "chain", "watcher_lag_seconds"),
			"How far the watcher's position trails the database's clock: every transfer with an older block time is processed. About the poll interval while it keeps up.", nil, nil),
		head: prometheus.NewDesc(prometheus.BuildFQName(namespace, "chain", "head_block"),
			"The chain's head block number at the watcher's last recorded poll.", nil, nil),
		solid: prometheus.NewDesc(prometheus.BuildFQName(namespace, "chain", "solid_block"),
			"The chain's solidified block number at the watcher's last recorded poll.", nil, nil),
		unpublished: prometheus.NewDesc(prometheus.BuildFQName(namespace, "outbox", "unpublished_events"),
			"Events committed but not yet published (the publishers' backlog).", nil, nil),
		oldestUnpublished: prometheus.NewDesc(prometheus.BuildFQName(namespace, "outbox", "oldest_unpublished_age_seconds"),
			"Age of the oldest event not yet published; 0 when none waits.", nil, nil),
		pending: prometheus.NewDesc(prometheus.BuildFQName(namespace, "webhook", "deliveries_pending"),
			"Webhook deliveries not finished: due now or waiting for their next retry.", nil, nil),
		overdue: prometheus.NewDesc(prometheus.BuildFQName(namespace, "webhook", "most_overdue_delivery_seconds"),
			"How long the most overdue pending delivery has been due; about 0 while the workers keep up.", nil, nil),
	}
	if treasury != "" {
		c.chain = &db.ChainPositionStatusParams{Network: deposit.Network, Address: treasury, Token: contract}
	}
	return c
}

// Describe implements prometheus.Collector.
func (c *databaseCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.open, c.review, c.lag, c.head, c.solid, c.unpublished, c.oldestUnpublished, c.pending, c.overdue} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. A failed read leaves its series
// out of this scrape (and is logged); the rest are still served.
func (c *databaseCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), databaseReadTimeout)
	defer cancel()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	failed := func(what string, err error) {
		c.log.Warn("a database read failed; its series are left out of this scrape", "read", what, "error", err)
	}
	if open, err := c.st.Q.DepositOpenCounts(ctx); err != nil {
		failed("open deposits", err)
	} else {
		gauge(c.open, float64(open.AwaitingTransfer), string(deposit.StatusAwaitingTransfer))
		gauge(c.open, float64(open.Confirming), string(deposit.StatusConfirming))
	}
	if b, err := c.st.Q.EventsBacklog(ctx); err != nil {
		failed("events backlog", err)
	} else {
		gauge(c.unpublished, float64(b.Unpublished))
		gauge(c.oldestUnpublished, b.OldestUnpublishedSeconds)
		gauge(c.pending, float64(b.PendingDeliveries))
		gauge(c.overdue, b.MostOverdueSeconds)
	}
	if c.chain == nil {
		return
	}
	if n, err := c.st.Q.ChainTransferReviewCount(ctx); err != nil {
		failed("transfers needing review", err)
	} else {
		gauge(c.review, float64(n))
	}
	pos, err := c.st.Q.ChainPositionStatus(ctx, *c.chain)
	switch {
	case errors.Is(err, store.ErrNotFound):
		// The watcher has not recorded a poll yet.
	case err != nil:
		failed("watcher position", err)
	default:
		gauge(c.lag, pos.LagSeconds)
		gauge(c.head, float64(pos.HeadBlock))
		gauge(c.solid, float64(pos.SolidBlock))
	}
}
