package metrics_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"creativeapi/gen/db"
	"creativeapi/internal/chainwatch"
	"creativeapi/internal/idempotency"
	"creativeapi/internal/metrics"
	"creativeapi/internal/store"
	"creativeapi/internal/trongrid"
	"creativeapi/internal/webhooks"
)

// exposition is m's /metrics text.
func exposition(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics: %d", rec.Code)
	}
	return rec.Body.String()
}

// has reports whether the exposition has the sample line (name{labels} value).
func has(text, sample string) bool {
	for line := range strings.SplitSeq(text, "\n") {
		if line == sample {
			return true
		}
	}
	return false
}

func TestObservePoll(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rule string
		err  error
		want []string
	}{
		{"a poll without error is a success", nil,
			[]string{`creativeapi_chain_polls_total{result="success"} 1`, `creativeapi_chain_polls_total{result="failure"} 0`}},
		{"a chain API error counts under its kind", &trongrid.Error{Kind: trongrid.RateLimited, Op: "now block"},
			[]string{`creativeapi_chain_polls_total{result="failure"} 1`, `creativeapi_chain_poll_errors_total{kind="rate_limited"} 1`}},
		{"a wrapped chain API error too", fmt.Errorf("poll: %w", &trongrid.Error{Kind: trongrid.Timeout}),
			[]string{`creativeapi_chain_poll_errors_total{kind="timeout"} 1`}},
		{"an unreachable database counts as database", fmt.Errorf("%w: refused", store.ErrUnavailable),
			[]string{`creativeapi_chain_poll_errors_total{kind="database"} 1`}},
		{"anything else counts as other", errors.New("more than 100 pages"),
			[]string{`creativeapi_chain_poll_errors_total{kind="other"} 1`}},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			t.Parallel()
			m := metrics.New()
			m.WatchChain(func() bool { return true })
			m.ObservePoll(chainwatch.Result{}, tt.err)
			text := exposition(t, m)
			for _, want := range tt.want {
				if !has(text, want) {
					t.Errorf("no %s in\n%s", want, grep(text, "creativeapi_chain_poll"))
				}
			}
			if got := strings.Contains(text, "creativeapi_chain_last_successful_poll_timestamp_seconds "); got != (tt.err == nil) {
				t.Errorf("last successful poll present: %v, want %v (only after a success)", got, tt.err == nil)
			}
		})
	}
}

func TestObservePoll_CountsWhatAFailedPollRecorded(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	m.WatchChain(func() bool { return false })
	m.ObservePoll(chainwatch.Result{Confirming: 2, Late: 1, Unmatched: 3, Failed: 1, Malformed: 2, Credited: 2, Reverted: 1},
		&trongrid.Error{Kind: trongrid.Unavailable})
	text := exposition(t, m)
	for _, want := range []string{
		`creativeapi_chain_transfers_total{status="confirming"} 2`, `creativeapi_chain_transfers_total{status="late"} 1`,
		`creativeapi_chain_transfers_total{status="unmatched"} 3`, `creativeapi_chain_transfers_total{status="failed"} 1`,
		`creativeapi_chain_malformed_items_total 2`, `creativeapi_deposits_credited_total 2`, `creativeapi_deposits_reverted_total 1`,
		`creativeapi_chain_watcher_leading 0`,
	} {
		if !has(text, want) {
			t.Errorf("no %s", want)
		}
	}
}

func TestAReplicaWithoutAWatcherExportsNoChainSeries(t *testing.T) {
	t.Parallel()
	text := exposition(t, metrics.New())
	if strings.Contains(text, "creativeapi_chain_") {
		t.Errorf("chain series without a watcher:\n%s", grep(text, "creativeapi_chain_"))
	}
	// The rest is there from the start, at zero.
	for _, want := range []string{
		`creativeapi_idempotent_commands_total{outcome="key_in_use"} 0`, `creativeapi_deposits_created_total 0`,
		`creativeapi_http_requests_in_flight 0`,
	} {
		if !has(text, want) {
			t.Errorf("no %s", want)
		}
	}
}

func TestNilMetricsMeasureNothing(t *testing.T) {
	t.Parallel()
	var m *metrics.Metrics
	// None of these may panic: code reports events whether or not metrics are on.
	m.RequestStarted()
	m.RequestDone("getMe", 200, 0)
	m.IdempotentOutcome(idempotency.Replayed)
	m.DepositCreated()
	m.DepositsExpired(3)
	m.ObservePoll(chainwatch.Result{Credited: 1}, nil)
	m.WatchChain(func() bool { return true })
	m.Register()
	m.EventsPublished([]db.OutboxPublishRow{{}})
	m.WebhookAttempt(webhooks.OutcomeSucceeded, time.Second)
}

func TestRequestDone_StatusCodesOutsideTheTableShareOneLabel(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	for _, status := range []int{200, 404, 599, 600, 999} {
		m.RequestStarted()
		m.RequestDone("getMe", status, 0)
	}
	text := exposition(t, m)
	for _, want := range []string{
		`creativeapi_http_requests_total{code="200",operation="getMe"} 1`, `creativeapi_http_requests_total{code="599",operation="getMe"} 1`,
		`creativeapi_http_requests_total{code="other",operation="getMe"} 2`, `creativeapi_http_request_duration_seconds_count{operation="getMe"} 5`,
	} {
		if !has(text, want) {
			t.Errorf("no %s in\n%s", want, grep(text, "creativeapi_http_requests_total"))
		}
	}
}

func grep(text, prefix string) string {
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(line, prefix) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

func TestWebhookAttemptsAndPublishLagAreCounted(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	if text := exposition(t, m); !has(text, `creativeapi_webhook_attempts_total{outcome="gone"} 0`) {
		t.Errorf("the outcomes are not there from the start:\n%s", grep(text, "creativeapi_webhook_"))
	}
	now := time.Now()
	m.EventsPublished([]db.OutboxPublishRow{{CreatedAt: now.Add(-300 * time.Millisecond), PublishedAt: now}, {CreatedAt: now, PublishedAt: now}})
	m.WebhookAttempt(webhooks.OutcomeRetrying, 2*time.Second)
	m.WebhookAttempt(webhooks.OutcomeSucceeded, 20*time.Millisecond)
	text := exposition(t, m)
	for _, want := range []string{
		`creativeapi_outbox_events_published_total 2`,
		`creativeapi_outbox_publish_lag_seconds_bucket{le="0.25"} 1`,
		`creativeapi_outbox_publish_lag_seconds_bucket{le="0.5"} 2`,
		`creativeapi_webhook_attempts_total{outcome="retrying"} 1`,
		`creativeapi_webhook_attempts_total{outcome="succeeded"} 1`,
		`creativeapi_webhook_attempt_duration_seconds_bucket{le="0.025"} 1`,
		`creativeapi_webhook_attempt_duration_seconds_count 2`,
	} {
		if !has(text, want) {
			t.Errorf("no %s in\n%s", want, grep(text, "creativeapi_"))
		}
	}
}
