package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	"creativeapi/internal/auth"
	"creativeapi/internal/testenv"
)

// benchDepositors are signed-in users of one benchmark: first executions
// rotate over them, so no user's open deposits pile up into the cost.
type benchDepositors struct {
	env     *testenv.Env
	url     string
	http    *http.Client
	cookies []string
	csrf    []string
}

func newBenchDepositors(b *testing.B, n int) *benchDepositors {
	b.Helper()
	env := testenv.New(b, testenv.Options{Env: map[string]string{"DEPOSIT_MAX_OPEN_PER_USER": "1000000", "LOG_LEVEL": "error"}})
	d := &benchDepositors{env: env, url: env.Server.URL, http: env.Server.Client()}
	name := auth.SessionConfig{CookieSecure: env.Config.CookieSecure}.CookieName()
	for range n {
		user, _ := env.DB.User(b, "Bench Depositor")
		token, csrf := auth.NewToken(), auth.NewToken()
		if _, err := env.DB.Pool.Exec(context.Background(), `INSERT INTO sessions (user_id, token_hash, csrf_token, idle_expires_at, absolute_expires_at)
			VALUES ($1, $2, $3, now() + interval '1 hour', now() + interval '1 day')`, user, auth.HashToken(token), csrf); err != nil {
			b.Fatal(err)
		}
		d.cookies = append(d.cookies, name+"="+token)
		d.csrf = append(d.csrf, csrf)
	}
	return d
}

// create sends one deposit create as user i under key and checks its
// answer. It reports a failure with Error and false, not Fatal: the
// benchmarks call it from RunParallel's goroutines, where Fatal must not be.
func (d *benchDepositors) create(b *testing.B, i int, key string, body []byte, replayed bool) bool {
	req, err := http.NewRequest(http.MethodPost, d.url+"/api/v1/me/balance/deposits", bytes.NewReader(body))
	if err != nil {
		b.Error(err)
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Cookie", d.cookies[i])
	req.Header.Set("X-CSRF-Token", d.csrf[i])
	req.Header.Set("Idempotency-Key", key)
	res, err := d.http.Do(req)
	if err != nil {
		b.Error(err)
		return false
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated || (res.Header.Get("Idempotent-Replayed") == "true") != replayed {
		b.Errorf("status %d, replayed %q", res.StatusCode, res.Header.Get("Idempotent-Replayed"))
		return false
	}
	return true
}

func benchDepositBody(minor int64) []byte {
	return []byte(`{"amount":{"amountMinor":"` + strconv.FormatInt(minor, 10) + `","currency":"USDT","scale":6}}`)
}

// benchClients is how many requests the deposit benchmarks keep in flight
// per GOMAXPROCS: their ns/op is the inverse of throughput under load, where
// a first execution's writes and commit weigh, not of one request's latency.
const benchClients = 4

// BenchmarkDepositCreateFirst is a deposit create with a fresh
// Idempotency-Key through the real HTTP server: its first execution.
// Compare with BenchmarkDepositCreateReplay (the database is a throwaway
// one with fsync off; `make bench` measures with a durable one). Its
// allocations are the server's and the client's: BenchmarkDepositCreateClient
// is the client's share.
func BenchmarkDepositCreateFirst(b *testing.B) {
	d := newBenchDepositors(b, 200)
	var n atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	defer testenv.ReportCPU(b)()
	b.SetParallelism(benchClients)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := int(n.Add(1))
			if !d.create(b, i%len(d.cookies), fmt.Sprintf("first-%d", i), benchDepositBody(10_000_000+10_000*int64(i%990_000)), false) {
				return
			}
		}
	})
}

// BenchmarkDepositCreateReplay resends one deposit create with the same
// Idempotency-Key and body: every request replays the stored answer.
func BenchmarkDepositCreateReplay(b *testing.B) {
	d := newBenchDepositors(b, 1)
	body := benchDepositBody(25_000_000)
	if !d.create(b, 0, "replayed", body, false) {
		b.FailNow()
	}
	b.ReportAllocs()
	b.ResetTimer()
	defer testenv.ReportCPU(b)()
	b.SetParallelism(benchClients)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if !d.create(b, 0, "replayed", body, true) {
				return
			}
		}
	})
}

// BenchmarkDepositCreateClient sends what BenchmarkDepositCreateFirst sends,
// with the same client, to a handler that only answers as the server does
// (201, a Location, a deposit's body): the client's own share of the
// allocations and time, which the first execution's figures include.
func BenchmarkDepositCreateClient(b *testing.B) {
	d := newBenchDepositors(b, 200)
	answer := []byte(`{"address":"TBXSw8fM4jpQkGc6zZjsVABFpVN7UvXPdV","confirmations":0,"confirmationsRequired":19,` +
		`"createdAt":"2026-11-22T10:00:00.123456Z","creditedAmount":{"amountMinor":"0","currency":"USDT","scale":6},` +
		`"expiresAt":"2026-11-22T10:30:00.123456Z","id":"0193f6a0-0000-7000-8000-000000000000","network":"TRC20",` +
		`"networkLabel":"TRON (TRC20)","requestedAmount":{"amountMinor":"25001234","currency":"USDT","scale":6},` +
		`"review":null,"status":"awaiting_transfer","transactionId":null}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Location", "/api/v1/me/balance/deposits/0193f6a0-0000-7000-8000-000000000000")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(answer)
	}))
	defer srv.Close()
	d.url, d.http = srv.URL, srv.Client()
	var n atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	defer testenv.ReportCPU(b)()
	b.SetParallelism(benchClients)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := int(n.Add(1))
			if !d.create(b, i%len(d.cookies), fmt.Sprintf("first-%d", i), benchDepositBody(10_000_000+10_000*int64(i%990_000)), false) {
				return
			}
		}
	})
}
