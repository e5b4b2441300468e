package metrics

import "github.com/prometheus/client_golang/prometheus"

// emailKinds are the kind label's values: the notification kinds and the
// daily digest.
var emailKinds = []string{"mention", "review_requested", "decision", "deposit", "digest"}

// emailMetrics is what this replica's email workers and publisher report.
type emailMetrics struct {
	queued *prometheus.CounterVec
	sent   *prometheus.CounterVec
	failed *prometheus.CounterVec
}

func newEmailMetrics() *emailMetrics {
	e := &emailMetrics{
		queued: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "email", Name: "queued_total",
			Help: "Notifications queued for email by this replica's publisher, by kind.",
		}, []string{"kind"}),
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "email", Name: "sent_total",
			Help: "Emails the SMTP server accepted from this replica, by kind.",
		}, []string{"kind"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "email", Name: "failed_total",
			Help: "Email attempts that failed, by kind and whether the refusal was permanent (5xx: not retried) or the attempt is retried.",
		}, []string{"kind", "permanent"}),
	}
	for _, k := range emailKinds {
		e.queued.WithLabelValues(k)
		e.sent.WithLabelValues(k)
		e.failed.WithLabelValues(k, "true")
		e.failed.WithLabelValues(k, "false")
	}
	return e
}

func (e *emailMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{e.queued, e.sent, e.failed}
}

// EmailQueued records a notification queued (email.Config.OnQueued).
func (m *Metrics) EmailQueued(kind string) {
	if m != nil {
		m.email.queued.WithLabelValues(kind).Inc()
	}
}

// EmailSent records an email sent (email.Config.OnSent).
func (m *Metrics) EmailSent(kind string) {
	if m != nil {
		m.email.sent.WithLabelValues(kind).Inc()
	}
}

// EmailFailed records a failed attempt (email.Config.OnFailed).
func (m *Metrics) EmailFailed(kind string, permanent bool) {
	if m != nil {
		p := "false"
		if permanent {
			p = "true"
		}
		m.email.failed.WithLabelValues(kind, p).Inc()
	}
}
