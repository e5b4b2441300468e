package pgbench_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"creativeapi/bench/internal/pgbench"
	"creativeapi/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// tracer records the server's round trips as the scripts name them.
type tracer struct {
	on    atomic.Bool
	mu    sync.Mutex
	trips []string
}

func name(sql string) string {
	f := strings.Fields(sql)
	if len(f) >= 3 && f[0] == "--" && f[1] == "name:" {
		return f[2]
	}
	if len(f) > 0 {
		return strings.ToLower(f[0])
	}
	return ""
}

func (t *tracer) add(trip string) {
	if t.on.Load() {
		t.mu.Lock()
		t.trips = append(t.trips, trip)
		t.mu.Unlock()
	}
}

func (t *tracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	t.add(name(d.SQL))
	return ctx
}

func (t *tracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (t *tracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	names := make([]string, len(d.Batch.QueuedQueries))
	for i, q := range d.Batch.QueuedQueries {
		names[i] = name(q.SQL)
	}
	t.add(strings.Join(names, "+"))
	return ctx
}

func (t *tracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (t *tracer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

func (t *tracer) record(f func()) []string {
	t.mu.Lock()
	t.trips = nil
	t.mu.Unlock()
	t.on.Store(true)
	f()
	t.on.Store(false)
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.trips)
}

// TestScriptsSendWhatTheServerSends proves that each pgbench script sends the
// statements, in the round trips, that the server sends for one request of
// its scenario, so pgbench measures the database's limit for the same work.
func TestScriptsSendWhatTheServerSends(t *testing.T) {
	t.Parallel()
	qs, err := pgbench.LoadQueries("../../../queries")
	if err != nil {
		t.Fatal(err)
	}
	scripts, err := pgbench.Scripts(qs)
	if err != nil {
		t.Fatal(err)
	}
	tr := &tracer{}
	env := testenv.New(t, testenv.Options{Tracer: tr})
	ctx := context.Background()
	org := env.DB.Org(t, "Bench Org")
	aID, _ := env.DB.User(t, "Amy Author")
	rID, _ := env.DB.User(t, "Rob Reviewer")
	env.DB.Member(t, org, aID, "author")
	env.DB.Member(t, org, rID, "reviewer")
	var creative uuid.UUID
	if err := env.DB.Pool.QueryRow(ctx, `INSERT INTO creatives (organization_id, number, title, type, aspect_ratio, geo, language, author_id)
		VALUES ($1, 1, 'Script check', 'static', '1:1', 'US', 'en-US', $2) RETURNING id`, org, aID).Scan(&creative); err != nil {
		t.Fatal(err)
	}
	if _, err := env.DB.Pool.Exec(ctx, `
		WITH v AS (INSERT INTO creative_versions (creative_id, number, author_id) VALUES ($1, 1, $2) RETURNING id)
		UPDATE creatives SET current_version_id = v.id FROM v WHERE creatives.id = $1`, creative, aID); err != nil {
		t.Fatal(err)
	}
	authorC, reviewerC := env.SessionFor(t, aID), env.SessionFor(t, rID)
	depositor, _ := env.SignedIn(t, "Dee Depositor")
	deposit := map[string]any{"amount": map[string]any{"amountMinor": "25000000", "currency": "USDT", "scale": 6}}
	key := func(k string) testenv.Header { return testenv.Header{Name: "Idempotency-Key", Value: k} }
	creativeURL := fmt.Sprintf("/api/v1/organizations/%s/creatives/%s", org, creative)

	for _, tt := range []struct {
		scenario string
		status   int
		send     func() *testenv.Response
	}{
		{"deposit", http.StatusCreated, func() *testenv.Response {
			return depositor.Do(http.MethodPost, "/api/v1/me/balance/deposits", deposit, key("first"))
		}},
		{"replay", http.StatusCreated, func() *testenv.Response {
			return depositor.Do(http.MethodPost, "/api/v1/me/balance/deposits", deposit, key("first"))
		}},
		{"action", http.StatusOK, func() *testenv.Response {
			return authorC.Do(http.MethodPost, creativeURL+"/actions", map[string]any{"action": "submit"}, key("submit"))
		}},
		{"get", http.StatusOK, func() *testenv.Response { return reviewerC.Do(http.MethodGet, creativeURL, nil) }},
		{"list", http.StatusOK, func() *testenv.Response {
			return reviewerC.Do(http.MethodGet, fmt.Sprintf("/api/v1/organizations/%s/creatives", org), nil)
		}},
	} {
		var r *testenv.Response
		got := tr.record(func() { r = tt.send() })
		if r.Status != tt.status {
			t.Fatalf("%s: %d %s", tt.scenario, r.Status, r.Body)
		}
		if want := scripts[tt.scenario].RoundTrips; !slices.Equal(got, want) {
			t.Errorf("%s: the server sends\n  %s\nthe pgbench script\n  %s", tt.scenario, strings.Join(got, ", "), strings.Join(want, ", "))
		}
	}
}
