package httpapi_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"creativeapi/internal/metrics"
	"creativeapi/internal/testenv"
)

// exposition is one scrape of m: its text and its parsed families.
type exposition struct {
	text     string
	families map[string]*dto.MetricFamily
}

func scrape(t *testing.T, m *metrics.Metrics) exposition {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", rec.Code, rec.Body)
	}
	text := rec.Body.String()
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parse the exposition: %v", err)
	}
	return exposition{text: text, families: families}
}

// series counts the exposition's samples: one per line that is not a comment.
func (x exposition) series() int {
	n := 0
	for line := range strings.SplitSeq(x.text, "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			n++
		}
	}
	return n
}

// value is the sample of name whose labels include want (0 when none).
func (x exposition) value(name string, want map[string]string) float64 {
	f := x.families[name]
	if f == nil {
		return 0
	}
next:
	for _, m := range f.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return 0
}

// labelValues are the values name's series take for label.
func (x exposition) labelValues(name, label string) map[string]bool {
	out := map[string]bool{}
	if f := x.families[name]; f != nil {
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if l.GetName() == label {
					out[l.GetValue()] = true
				}
			}
		}
	}
	return out
}

// operationLabels is every value the operation label may take: the spec's
// operationIds and the fixed names.
func operationLabels(t *testing.T) map[string]bool {
	t.Helper()
	allowed := map[string]bool{"docs": true, "preflight": true, "unmatched": true}
	for _, c := range specCalls(t) {
		allowed[c.operationID] = true
	}
	return allowed
}

func TestMetrics_EveryOperationIsLabelledWithItsOperationID(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	env := testenv.New(t, testenv.Options{Metrics: m})
	c := env.Client(t)
	want := map[[2]string]float64{}
	for _, call := range specCalls(t) {
		r := c.Do(call.method, call.path, call.body)
		want[[2]string{call.operationID, fmt.Sprint(r.Status)}]++
	}
	// Outside the spec: the documentation, a preflight, paths that match nothing.
	for _, path := range []string{"/openapi.yaml", "/docs", "/docs/changelog"} {
		r := c.Do(http.MethodGet, path, nil)
		want[[2]string{"docs", fmt.Sprint(r.Status)}]++
	}
	preflight, _ := http.NewRequest(http.MethodOptions, env.Server.URL+"/api/v1/me", nil)
	preflight.Header.Set("Origin", "https://app.example.com")
	preflight.Header.Set("Access-Control-Request-Method", "GET")
	res, err := http.DefaultClient.Do(preflight)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	want[[2]string{"preflight", fmt.Sprint(res.StatusCode)}]++
	for _, path := range []string{"/api/v1/nothing-here", "/nothing-here", "/api/v1/me/balance/deposits/a/b"} {
		r := c.Do(http.MethodGet, path, nil)
		want[[2]string{"unmatched", fmt.Sprint(r.Status)}]++
	}
	r := c.Do(http.MethodDelete, "/api/v1/me", nil)
	want[[2]string{"unmatched", fmt.Sprint(r.Status)}]++

	x := scrape(t, m)
	for k, n := range want {
		if got := x.value("creativeapi_http_requests_total", map[string]string{"operation": k[0], "code": k[1]}); got != n {
			t.Errorf("requests_total{operation=%q, code=%q} = %v, want %v", k[0], k[1], got, n)
		}
	}
	perOperation := map[string]float64{}
	for k, n := range want {
		perOperation[k[0]] += n
	}
	for op, n := range perOperation {
		if op == "streamMyEvents" || op == "streamGuestEvents" {
			n = 0 // a stream is measured apart (TestMetrics_StreamsAreMeasuredApartFromRequests)
		}
		if got := x.value("creativeapi_http_request_duration_seconds", map[string]string{"operation": op}); got != n {
			t.Errorf("request_duration_seconds{operation=%q} counted %v requests, want %v", op, got, n)
		}
	}
	if got := x.labelValues("creativeapi_http_requests_total", "operation"); len(got) != len(perOperation) {
		t.Errorf("operation labels %v, want exactly %v", got, perOperation)
	}
	if got := x.value("creativeapi_http_requests_in_flight", nil); got != 0 {
		t.Errorf("requests_in_flight = %v after every answer, want 0", got)
	}
}

func TestMetrics_RandomPathsAddNoSeries(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	env := testenv.New(t, testenv.Options{Metrics: m})
	rnd := rand.New(rand.NewPCG(19, 1000))
	methods := []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodHead, http.MethodOptions, "PROPFIND", "BREW"}
	send := func(n int) {
		for range n {
			path := randomPath(rnd)
			req, err := http.NewRequest(methods[rnd.IntN(len(methods))], env.Server.URL+path, strings.NewReader(`{"x":1}`))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			req.Header.Set("Origin", "https://"+randomSegment(rnd)+".example")
			req.Header.Set("User-Agent", randomSegment(rnd))
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v", req.Method, path, err)
			}
			res.Body.Close()
		}
	}
	// Every answer a random path can get (404, 405) once, then 1000 more.
	send(100)
	before := scrape(t, m)
	send(1000)
	after := scrape(t, m)
	if before.series() != after.series() {
		t.Errorf("the exposition grew from %d to %d series under 1000 random paths", before.series(), after.series())
	}
	allowed := operationLabels(t)
	for op := range after.labelValues("creativeapi_http_requests_total", "operation") {
		if !allowed[op] {
			t.Errorf("operation label %q is neither an operationId of the spec nor a fixed name", op)
		}
	}
	if got := after.value("creativeapi_http_requests_total", map[string]string{"operation": "unmatched", "code": "404"}); got < 900 {
		t.Errorf("unmatched 404s = %v, want most of the 1100 random paths", got)
	}
}

// randomPath is 1 to 5 random segments, under /api/v1/ half the time, with
// a random query string now and then.
func randomPath(rnd *rand.Rand) string {
	var b strings.Builder
	if rnd.IntN(2) == 0 {
		b.WriteString("/api/v1")
	}
	for range 1 + rnd.IntN(5) {
		b.WriteString("/" + url.PathEscape(randomSegment(rnd)))
	}
	if rnd.IntN(4) == 0 {
		b.WriteString("?" + url.QueryEscape(randomSegment(rnd)) + "=" + url.QueryEscape(randomSegment(rnd)))
	}
	return b.String()
}

func randomSegment(rnd *rand.Rand) string {
	const chars = "abcdefghijklmnopqrstuvwxyz0123456789-_.~é{}:"
	var b strings.Builder
	for range 1 + rnd.IntN(12) {
		r := []rune(chars)
		b.WriteRune(r[rnd.IntN(len(r))])
	}
	return b.String()
}

func TestMetrics_IdempotentOutcomesAndDepositsCreated(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	env := testenv.New(t, testenv.Options{Metrics: m, LockTimeout: 300 * time.Millisecond})
	c, _ := env.SignedIn(t, "Otto Outcome")
	const path = "/api/v1/me/balance/deposits"
	key := func(k string) testenv.Header { return testenv.Header{Name: "Idempotency-Key", Value: k} }

	steps := []struct {
		rule string
		body map[string]any
		key  string
		want int
	}{
		{"a first keyed command executes and creates a deposit", depositBody("10000000"), "k-1", http.StatusCreated},
		{"its repeat is replayed and creates nothing", depositBody("10000000"), "k-1", http.StatusCreated},
		{"the key with another body is reused", depositBody("20000000"), "k-1", http.StatusUnprocessableEntity},
		{"a command without a key has no outcome but creates", depositBody("30000000"), "", http.StatusCreated},
	}
	for _, s := range steps {
		var headers []testenv.Header
		if s.key != "" {
			headers = append(headers, key(s.key))
		}
		if r := c.Do(http.MethodPost, path, s.body, headers...); r.Status != s.want {
			t.Fatalf("%s: %d %s", s.rule, r.Status, r.Body)
		}
	}

	// A repeat while the first request runs waits for it and gets 409.
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	env.Idempotency.SetAfterCommand(func(context.Context) error {
		once.Do(func() { close(entered); <-release })
		return nil
	})
	first := make(chan *testenv.Response, 1)
	go func() { first <- c.Do(http.MethodPost, path, depositBody("40000000"), key("k-2")) }()
	<-entered
	if r := c.Do(http.MethodPost, path, depositBody("40000000"), key("k-2")); r.Status != http.StatusConflict {
		t.Errorf("a repeat while the first runs: %d %s, want 409", r.Status, r.Body)
	}
	close(release)
	if r := <-first; r.Status != http.StatusCreated {
		t.Errorf("the first request: %d %s", r.Status, r.Body)
	}

	x := scrape(t, m)
	for outcome, n := range map[string]float64{"executed": 2, "replayed": 1, "key_reused": 1, "key_in_use": 1} {
		if got := x.value("creativeapi_idempotent_commands_total", map[string]string{"outcome": outcome}); got != n {
			t.Errorf("idempotent_commands_total{outcome=%q} = %v, want %v", outcome, got, n)
		}
	}
	if got := x.value("creativeapi_deposits_created_total", nil); got != 3 {
		t.Errorf("deposits_created_total = %v, want 3 (replays and refusals not counted)", got)
	}
}

// TestMetrics_StreamsAreMeasuredApartFromRequests: an open stream is in
// the open-streams gauge (against STREAM_MAX), not in flight; once closed
// its time is in the stream duration, never in the request duration, where
// minutes of an open stream would page as latency.
func TestMetrics_StreamsAreMeasuredApartFromRequests(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	env := testenv.New(t, testenv.Options{Metrics: m, Env: map[string]string{"STREAM_MAX": "7", "STREAM_MAX_PER_USER": "3"}})
	c, _ := env.SignedIn(t, "Mona Metrics")
	op := map[string]string{"operation": "streamMyEvents"}

	s := c.Stream(streamPath)
	if _, ok := s.Next(); !ok {
		t.Fatal("the stream ended at once")
	}
	x := scrape(t, m)
	if open, limit, inFlight := x.value("creativeapi_stream_open", nil), x.value("creativeapi_stream_max", nil),
		x.value("creativeapi_http_requests_in_flight", nil); open != 1 || limit != 7 || inFlight != 0 {
		t.Errorf("with a stream open: stream_open %v, stream_max %v, requests_in_flight %v; want 1, 7, 0", open, limit, inFlight)
	}
	s.Close()
	deadline := time.Now().Add(10 * time.Second)
	for scrape(t, m).value("creativeapi_stream_duration_seconds", op) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the closed stream is not in creativeapi_stream_duration_seconds:\n%s", scrape(t, m).text)
		}
		time.Sleep(10 * time.Millisecond)
	}
	x = scrape(t, m)
	if got := x.value("creativeapi_http_request_duration_seconds", op); got != 0 {
		t.Errorf("request_duration_seconds counted %v streams, want none", got)
	}
	if got := x.value("creativeapi_http_requests_total", map[string]string{"operation": "streamMyEvents", "code": "200"}); got != 1 {
		t.Errorf("requests_total{streamMyEvents, 200} = %v, want 1", got)
	}
	if got := x.value("creativeapi_stream_open", nil); got != 0 {
		t.Errorf("stream_open = %v after the close, want 0", got)
	}
}
