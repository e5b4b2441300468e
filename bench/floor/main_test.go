package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"creativeapi/bench/internal/pgbench"
	"creativeapi/internal/testenv"
	"creativeapi/internal/tron"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestFloorSendsWhatTheScriptsSend proves the yardstick does the server's
// database work: each request sends the statements, in the round trips, of
// its scenario's pgbench script (which its own test proves equal to the
// server's).
func TestFloorSendsWhatTheScriptsSend(t *testing.T) {
	t.Parallel()
	qs, err := pgbench.LoadQueries("../../queries")
	if err != nil {
		t.Fatal(err)
	}
	scripts, err := pgbench.Scripts(qs)
	if err != nil {
		t.Fatal(err)
	}
	db := testenv.NewDB(t)
	tr := &testenv.RoundTrips{}
	srv := serveFloor(t, db.URL, qs, tr)

	org := db.Org(t, "Bench Org")
	aID, _ := db.User(t, "Amy Author")
	rID, _ := db.User(t, "Rob Reviewer")
	dID, _ := db.User(t, "Dee Depositor")
	db.Member(t, org, aID, "author")
	db.Member(t, org, rID, "reviewer")
	creative := db.DraftCreative(t, org, aID)
	type caller struct{ token, csrf string }
	session := func(id [16]byte) caller {
		token, csrf := db.Session(t, id)
		return caller{token, csrf}
	}
	author, reviewer, depositor := session(aID), session(rID), session(dID)
	send := func(method, path string, c caller, key, body string) (int, string) {
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Cookie", "session="+c.token)
		if method == http.MethodPost {
			req.Header.Set("X-CSRF-Token", c.csrf)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", key)
		}
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(raw)
	}
	deposit := `{"amount":{"amountMinor":"25000000","currency":"USDT","scale":6}}`
	creativeURL := fmt.Sprintf("/api/v1/organizations/%s/creatives/%s", org, creative)
	for _, tt := range []struct {
		scenario string
		status   int
		send     func() (int, string)
	}{
		{"deposit", http.StatusCreated, func() (int, string) { return send("POST", "/api/v1/me/balance/deposits", depositor, "first", deposit) }},
		{"replay", http.StatusCreated, func() (int, string) { return send("POST", "/api/v1/me/balance/deposits", depositor, "first", deposit) }},
		{"action", http.StatusOK, func() (int, string) {
			return send("POST", creativeURL+"/actions", author, "submit", `{"action":"submit"}`)
		}},
		{"get", http.StatusOK, func() (int, string) { return send("GET", creativeURL, reviewer, "", "") }},
		{"list", http.StatusOK, func() (int, string) {
			return send("GET", fmt.Sprintf("/api/v1/organizations/%s/creatives", org), reviewer, "", "")
		}},
	} {
		var status int
		var body string
		got := tr.Record(func() { status, body = tt.send() })
		if status != tt.status {
			t.Fatalf("%s: %d %s", tt.scenario, status, body)
		}
		if want := scripts[tt.scenario].RoundTrips; !slices.Equal(got, want) {
			t.Errorf("%s: the floor sends\n  %s\nthe pgbench script\n  %s", tt.scenario, strings.Join(got, ", "), strings.Join(want, ", "))
		}
	}
}

// serveFloor starts the floor on a pool of url (whose queries tracer
// sees, when not nil) and a test HTTP server in front of it.
func serveFloor(tb testing.TB, url string, qs pgbench.Queries, tracer pgx.QueryTracer) *httptest.Server {
	tb.Helper()
	pool, err := openPool(context.Background(), url, defaultPoolSize, tracer)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	f, err := newFloor(pool, qs, tron.DevTreasuryAddress)
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(f.routes())
	tb.Cleanup(srv.Close)
	return srv
}
