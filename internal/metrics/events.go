package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"creativeapi/gen/db"
	"creativeapi/internal/webhooks"
)

// webhookOutcomes are the outcome label's values: what an attempt led to
// (webhooks.Outcome*).
var webhookOutcomes = []string{webhooks.OutcomeSucceeded, webhooks.OutcomeRetrying, webhooks.OutcomeFailed, webhooks.OutcomeGone}

// webhookBuckets are the attempt duration's upper bounds, in seconds: a
// receiver answers in milliseconds to seconds; WEBHOOK_TIMEOUT (15 s by
// default) cuts it off.
var webhookBuckets = []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30}

// publishLagBuckets are the outbox's publish lag upper bounds, in seconds:
// the publishers look every EVENTS_POLL_INTERVAL (50 ms by default), so a
// healthy lag stays under it plus the publishing transaction.
var publishLagBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// eventsMetrics is what this replica's publisher and webhook workers
// report; what waits (the backlog) is read from the database instead, so
// every replica reports it (databaseCollector).
type eventsMetrics struct {
	published       prometheus.Counter
	publishLag      prometheus.Histogram
	attempts        *prometheus.CounterVec
	attemptDuration prometheus.Histogram
}

func newEventsMetrics() *eventsMetrics {
	e := &eventsMetrics{
		published: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "outbox", Name: "events_published_total",
			Help: "Events this replica's publisher published (numbered and handed to webhooks).",
		}),
		publishLag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Subsystem: "outbox", Name: "publish_lag_seconds",
			Help:    "Time from an event's transaction to its publication (the database's clock at both ends).",
			Buckets: publishLagBuckets,
		}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "webhook", Name: "attempts_total",
			Help: "Webhook attempts made and logged by this replica, by outcome: succeeded (2xx), retrying (another attempt is scheduled), failed (the last attempt failed), gone (410: the endpoint was disabled).",
		}, []string{"outcome"}),
		attemptDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Subsystem: "webhook", Name: "attempt_duration_seconds",
			Help:    "Time from sending a webhook attempt to its answer or failure.",
			Buckets: webhookBuckets,
		}),
	}
	for _, o := range webhookOutcomes {
		e.attempts.WithLabelValues(o)
	}
	return e
}

func (e *eventsMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{e.published, e.publishLag, e.attempts, e.attemptDuration}
}

// EventsPublished records a publisher run (events.PublisherConfig.OnPublished).
func (m *Metrics) EventsPublished(published []db.OutboxPublishRow) {
	if m == nil {
		return
	}
	m.events.published.Add(float64(len(published)))
	for _, e := range published {
		m.events.publishLag.Observe(max(e.PublishedAt.Sub(e.CreatedAt), 0).Seconds())
	}
}

// WebhookAttempt records a logged webhook attempt (webhooks.Config.OnAttempt).
func (m *Metrics) WebhookAttempt(outcome string, took time.Duration) {
	if m == nil {
		return
	}
	m.events.attempts.WithLabelValues(outcome).Inc()
	m.events.attemptDuration.Observe(took.Seconds())
}
