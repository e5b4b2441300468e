package metrics

import (
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/prometheus/client_golang/prometheus"

	"creativeapi/internal/chainwatch"
	"creativeapi/internal/deposit"
	"creativeapi/internal/store"
	"creativeapi/internal/trongrid"
)

// pollErrorKinds are the kind label's values: the chain API's failure
// kinds, a database failure, and anything else.
var pollErrorKinds = []string{
	string(trongrid.RateLimited), string(trongrid.Unavailable), string(trongrid.Timeout),
	string(trongrid.Network), string(trongrid.Malformed), string(trongrid.Refused),
	"database", "other",
}

// chainMetrics is what this replica's chain watcher reports. Where the
// watcher stands (its lag) is read from the database instead, so every
// replica reports it, whichever one polls (see databaseCollector).
type chainMetrics struct {
	polls      *prometheus.CounterVec
	pollErrors *prometheus.CounterVec
	transfers  *prometheus.CounterVec
	malformed  prometheus.Counter

	leadingDesc, lastSuccessDesc *prometheus.Desc

	mu          sync.Mutex
	leading     func() bool
	lastSuccess time.Time
}

func newChainMetrics() *chainMetrics {
	c := &chainMetrics{
		polls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "chain", Name: "polls_total",
			Help: "Polls of the chain by this replica's watcher, by result (success or failure).",
		}, []string{"result"}),
		pollErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "chain", Name: "poll_errors_total",
			Help: "Failed polls by the kind of their error: the chain API's (rate_limited, unavailable, timeout, network, malformed, refused), database, or other.",
		}, []string{"kind"}),
		transfers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "chain", Name: "transfers_total",
			Help: "Transfers to the treasury recorded, by what they were recorded as: confirming (matched an open deposit), late, unmatched, failed.",
		}, []string{"status"}),
		malformed: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "chain", Name: "malformed_items_total",
			Help: "Items of the chain API's transfer lists left out because they could not be read (each is logged).",
		}),
		leadingDesc: prometheus.NewDesc(prometheus.BuildFQName(namespace, "chain", "watcher_leading"),
			"1 while this replica's chain watcher is the one polling (one replica at a time), else 0.", nil, nil),
		lastSuccessDesc: prometheus.NewDesc(prometheus.BuildFQName(namespace, "chain", "last_successful_poll_timestamp_seconds"),
			"When this replica's watcher last finished a poll without error (Unix time); absent until it has.", nil, nil),
	}
	for _, r := range []string{"success", "failure"} {
		c.polls.WithLabelValues(r)
	}
	for _, k := range pollErrorKinds {
		c.pollErrors.WithLabelValues(k)
	}
	for _, s := range deposit.Recorded {
		c.transfers.WithLabelValues(string(s))
	}
	return c
}

// Describe implements prometheus.Collector.
func (c *chainMetrics) Describe(ch chan<- *prometheus.Desc) {
	c.polls.Describe(ch)
	c.pollErrors.Describe(ch)
	c.transfers.Describe(ch)
	c.malformed.Describe(ch)
	ch <- c.leadingDesc
	ch <- c.lastSuccessDesc
}

// Collect implements prometheus.Collector. A replica without a watcher
// (no TREASURY_ADDRESS) reports no chain series at all.
func (c *chainMetrics) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	leading, last := c.leading, c.lastSuccess
	c.mu.Unlock()
	if leading == nil {
		return
	}
	c.polls.Collect(ch)
	c.pollErrors.Collect(ch)
	c.transfers.Collect(ch)
	c.malformed.Collect(ch)
	v := 0.0
	if leading() {
		v = 1
	}
	ch <- prometheus.MustNewConstMetric(c.leadingDesc, prometheus.GaugeValue, v)
	if !last.IsZero() {
		ch <- prometheus.MustNewConstMetric(c.lastSuccessDesc, prometheus.GaugeValue, float64(last.UnixNano())/1e9)
	}
}

// WatchChain turns the chain series on for this replica's watcher;
// leading is its chainwatch.Watcher.Leading.
func (m *Metrics) WatchChain(leading func() bool) {
	if m == nil {
		return
	}
	m.chain.mu.Lock()
	m.chain.leading = leading
	m.chain.mu.Unlock()
}

// ObservePoll records one poll of the watcher (chainwatch.Watcher.OnPoll).
// A failed poll's counts are recorded too: what it recorded before failing
// is committed.
func (m *Metrics) ObservePoll(res chainwatch.Result, err error) {
	if m == nil {
		return
	}
	c := m.chain
	if err != nil {
		c.polls.WithLabelValues("failure").Inc()
		c.pollErrors.WithLabelValues(errorKind(err)).Inc()
	} else {
		c.polls.WithLabelValues("success").Inc()
		c.mu.Lock()
		c.lastSuccess = time.Now()
		c.mu.Unlock()
	}
	for status, n := range res.Recorded() {
		if n > 0 {
			c.transfers.WithLabelValues(string(status)).Add(float64(n))
		}
	}
	if res.Malformed > 0 {
		c.malformed.Add(float64(res.Malformed))
	}
	if res.Credited > 0 {
		m.depositsCredited.Add(float64(res.Credited))
	}
	if res.Reverted > 0 {
		m.depositsReverted.Add(float64(res.Reverted))
	}
}

// errorKind is the kind label of a failed poll.
func errorKind(err error) string {
	var ge *trongrid.Error
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &ge):
		return string(ge.Kind)
	case errors.Is(err, store.ErrUnavailable), errors.As(err, &pgErr):
		return "database"
	default:
		return "other"
	}
}
