package pgbench_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"creativeapi/bench/internal/pgbench"
	"creativeapi/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

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
	tr := &testenv.RoundTrips{}
	env := testenv.New(t, testenv.Options{Tracer: tr})
	org := env.DB.Org(t, "Bench Org")
	aID, _ := env.DB.User(t, "Amy Author")
	rID, _ := env.DB.User(t, "Rob Reviewer")
	env.DB.Member(t, org, aID, "author")
	env.DB.Member(t, org, rID, "reviewer")
	creative := env.DB.DraftCreative(t, org, aID)
	versioned := env.DB.DraftCreative(t, org, aID)
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
		{"create", http.StatusCreated, func() *testenv.Response {
			return authorC.Do(http.MethodPost, fmt.Sprintf("/api/v1/organizations/%s/creatives", org),
				map[string]any{"title": "Bench create", "type": "static", "aspectRatio": "1:1", "geo": "US", "language": "en-US"}, key("create"))
		}},
		{"version", http.StatusCreated, func() *testenv.Response {
			return authorC.Do(http.MethodPost, fmt.Sprintf("/api/v1/organizations/%s/creatives/%s/versions", org, versioned),
				map[string]any{"assets": []any{map[string]any{"fileName": "bench.png", "mimeType": "image/png", "sizeBytes": 120000,
					"width": 1080, "height": 1080, "url": "https://cdn.acme.test/assets/bench/1.png",
					"sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}}}, key("version"))
		}},
		{"search", http.StatusOK, func() *testenv.Response {
			return reviewerC.Do(http.MethodGet, fmt.Sprintf("/api/v1/organizations/%s/creatives?q=Fixture+creative", org), nil)
		}},
		{"list", http.StatusOK, func() *testenv.Response {
			return reviewerC.Do(http.MethodGet, fmt.Sprintf("/api/v1/organizations/%s/creatives", org), nil)
		}},
	} {
		var r *testenv.Response
		got := tr.Record(func() { r = tt.send() })
		if r.Status != tt.status {
			t.Fatalf("%s: %d %s", tt.scenario, r.Status, r.Body)
		}
		if want := scripts[tt.scenario].RoundTrips; !slices.Equal(got, want) {
			t.Errorf("%s: the server sends\n  %s\nthe pgbench script\n  %s", tt.scenario, strings.Join(got, ", "), strings.Join(want, ", "))
		}
	}
}
