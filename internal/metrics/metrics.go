// Package metrics is what the service tells Prometheus: requests by
// operation and status, their latency, the connection pool, idempotent
// commands, deposits, the chain watcher, the events outbox and webhook
// deliveries. They are served on a listener
// of their own (METRICS_ADDR), never on the API's. docs/operations.md
// lists them with the alerts on them (ops/alerts.yml).
//
// Every label takes its values from a fixed set (the spec's operationIds
// and a few fixed names, status codes, outcomes, error kinds), so no
// client input can add a series.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"creativeapi/internal/idempotency"
)

// namespace prefixes every metric of the service.
const namespace = "creativeapi"

// latencyBuckets are the request latency histogram's upper bounds, in
// seconds: a replay answers in about a millisecond, a command in a few,
// and a request is cut off at REQUEST_TIMEOUT (30 s by default).
var latencyBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// Metrics holds the service's collectors in a registry of its own. A nil
// *Metrics measures nothing: every method is then a no-op, so code that
// reports an event need not know whether metrics are on.
type Metrics struct {
	reg *prometheus.Registry

	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight prometheus.Gauge

	// Long-lived streams (text/event-stream) are measured apart: a stream
	// lasts minutes, and in the request series it would read as minutes
	// of latency and a request always in flight.
	streamDuration *prometheus.HistogramVec

	idempotent *prometheus.CounterVec

	depositsCreated  prometheus.Counter
	depositsExpired  prometheus.Counter
	depositsCredited prometheus.Counter
	depositsReverted prometheus.Counter

	chain  *chainMetrics
	events *eventsMetrics
	email  *emailMetrics
}

// New returns the service's metrics with the Go runtime and process
// collectors registered.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		reg: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "http", Name: "requests_total",
			Help: "HTTP requests answered, by operation (the spec's operationId, or docs, preflight, unmatched) and status code.",
		}, []string{"operation", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Subsystem: "http", Name: "request_duration_seconds",
			Help:    "Time from receiving a request's headers to its answer, by operation.",
			Buckets: latencyBuckets,
		}, []string{"operation"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Subsystem: "http", Name: "requests_in_flight",
			Help: "HTTP requests being answered.",
		}),
		streamDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Subsystem: "stream", Name: "duration_seconds",
			Help:    "How long answered streams (text/event-stream) stayed open, by operation; they are not in the http request duration or in-flight series.",
			Buckets: streamBuckets,
		}, []string{"operation"}),
		idempotent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "idempotent_commands_total",
			Help: "Commands sent with an Idempotency-Key, by outcome: executed, replayed (a stored answer), key_reused (422, another request's key), key_in_use (409, its first request still running).",
		}, []string{"outcome"}),
		depositsCreated: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "deposits", Name: "created_total",
			Help: "Deposit requests created (replays not counted).",
		}),
		depositsExpired: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "deposits", Name: "expired_total",
			Help: "Deposit requests that expired without a transfer (marked by the sweeper).",
		}),
		depositsCredited: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "deposits", Name: "credited_total",
			Help: "Deposits credited to their account by the chain watcher.",
		}),
		depositsReverted: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "deposits", Name: "reverted_total",
			Help: "Confirming deposits put back to awaiting_transfer because their transfer failed or vanished.",
		}),
		chain:  newChainMetrics(),
		events: newEventsMetrics(),
		email:  newEmailMetrics(),
	}
	// Every outcome is there from the start, at 0, so a rate over it is
	// defined before the first event.
	for _, o := range []idempotency.Outcome{idempotency.Executed, idempotency.Replayed, idempotency.KeyReused, idempotency.KeyInUse} {
		m.idempotent.WithLabelValues(string(o))
	}
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewBuildInfoCollector(),
		m.requests, m.duration, m.inFlight, m.streamDuration, m.idempotent,
		m.depositsCreated, m.depositsExpired, m.depositsCredited, m.depositsReverted,
		m.chain,
	)
	reg.MustRegister(m.events.collectors()...)
	reg.MustRegister(m.email.collectors()...)
	return m
}

// Handler serves the exposition of every registered collector.
func (m *Metrics) Handler() http.Handler {
	return promhttp.InstrumentMetricHandler(m.reg, promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		// A collector that fails (the database, say) leaves its series out;
		// the others are still served.
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      m.reg,
	}))
}

// Register adds collectors (the pool's, the database's) to the registry.
func (m *Metrics) Register(cs ...prometheus.Collector) {
	if m == nil {
		return
	}
	m.reg.MustRegister(cs...)
}

// RequestStarted counts a request in flight until RequestDone.
func (m *Metrics) RequestStarted() {
	if m != nil {
		m.inFlight.Inc()
	}
}

// RequestDone records a request's answer: operation is its label (see the
// middleware in internal/httpapi), status its status code.
func (m *Metrics) RequestDone(operation string, status int, took time.Duration) {
	if m == nil {
		return
	}
	m.inFlight.Dec()
	m.requests.WithLabelValues(operation, codeLabel(status)).Inc()
	m.duration.WithLabelValues(operation).Observe(took.Seconds())
}

// streamBuckets span a stream's life: a reconnecting client's second to
// an open tab's hours.
var streamBuckets = []float64{1, 10, 60, 300, 900, 1800, 3600, 4 * 3600, 12 * 3600}

// StreamDone records a long-lived stream's end: it counts in
// requests_total like any answer (a refused stream is an error there), and
// only an opened one (200) in the stream duration; never in the request
// duration, and it was never in flight.
func (m *Metrics) StreamDone(operation string, status int, took time.Duration) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(operation, codeLabel(status)).Inc()
	if status == http.StatusOK {
		m.streamDuration.WithLabelValues(operation).Observe(took.Seconds())
	}
}

// WatchStreams exports the open streams of this replica (open, read at
// each scrape) against its limit (STREAM_MAX).
func (m *Metrics) WatchStreams(open func() int, limit int) {
	if m == nil {
		return
	}
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: namespace, Subsystem: "stream", Name: "open",
			Help: "Streams (text/event-stream) this replica serves now.",
		}, func() float64 { return float64(open()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: namespace, Subsystem: "stream", Name: "max",
			Help: "Streams this replica serves at most (STREAM_MAX); more answer 503.",
		}, func() float64 { return float64(limit) }),
	)
}

// codes are the code label values of every valid HTTP status, made once so
// a request allocates none.
var codes = func() []string {
	out := make([]string, 600)
	for i := range out {
		out[i] = strconv.Itoa(i)
	}
	return out
}()

// codeLabel is status as a label; net/http refuses codes outside 100-999,
// and the few above 599 that it passes share one value.
func codeLabel(status int) string {
	if status >= 100 && status < len(codes) {
		return codes[status]
	}
	return "other"
}

// IdempotentOutcome counts what the idempotency runner did with a keyed
// command (idempotency.Runner.OnOutcome).
func (m *Metrics) IdempotentOutcome(o idempotency.Outcome) {
	if m != nil {
		m.idempotent.WithLabelValues(string(o)).Inc()
	}
}

// DepositCreated counts a deposit request created (not a replay).
func (m *Metrics) DepositCreated() {
	if m != nil {
		m.depositsCreated.Inc()
	}
}

// DepositsExpired counts deposit requests the sweeper marked expired.
func (m *Metrics) DepositsExpired(n int64) {
	if m != nil && n > 0 {
		m.depositsExpired.Add(float64(n))
	}
}
