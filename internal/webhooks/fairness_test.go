package webhooks_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"creativeapi/gen/db"
	"creativeapi/internal/events"
	"creativeapi/internal/store"
	"creativeapi/internal/webhooks"
)

// TestDelivery_AtMostFourInFlightPerEndpointOnEveryReplica: one tenant's
// slow receiver gets at most 4 attempts in flight across two replicas,
// and a fast receiver's deliveries are not held behind it, though the
// slow endpoint has more deliveries due than the replicas have workers
// (docs/events.md). Both receivers are real HTTP servers.
func TestDelivery_AtMostFourInFlightPerEndpointOnEveryReplica(t *testing.T) {
	t.Parallel()
	cfg := webhooks.Config{AllowPrivate: true, Timeout: 30 * time.Second, Workers: 5, BusyWait: 20 * time.Millisecond}
	b := setup(t, cfg)
	pool, err := store.Open(context.Background(), b.d.URL, store.PoolConfig{
		ConnectTimeout: 5 * time.Second, StatementTimeout: 30 * time.Second, LockTimeout: 5 * time.Second, MaxConns: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	startService(t, store.New(pool), cfg) // a second replica: 10 workers in all

	slowEP := b.endpoint(t, "http://placeholder", events.CreativeApproved)
	fastEP := b.endpoint(t, "http://placeholder", events.CreativeSubmitted)
	release := make(chan struct{})
	var releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	var inFlight, most atomic.Int64
	slow := newReceiver(t, secretOf(t, b, slowEP), func(_ int, w http.ResponseWriter, req *http.Request) {
		now := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := most.Load()
			if now <= m || most.CompareAndSwap(m, now) {
				break
			}
		}
		select {
		case <-release:
			w.WriteHeader(http.StatusNoContent)
		case <-req.Context().Done():
		}
	})
	fast := newReceiver(t, secretOf(t, b, fastEP), func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	b.setURL(t, slowEP, slow.srv.URL)
	b.setURL(t, fastEP, fast.srv.URL)

	const slowN, fastN = 12, 8 // more slow deliveries than the 10 workers
	b.emitMany(t, events.CreativeApproved, slowN)
	slow.wait(t, webhooks.DefaultMaxInFlightPerEndpoint)
	b.emitMany(t, events.CreativeSubmitted, fastN)
	b.deliveries(t, fastEP.ID, fastN, "succeeded", succeeded)
	checkOncePerEvent(t, fast.requests(), fastN)
	// By then the slow endpoint's waiting deliveries had been tried again
	// and again (BusyWait): still 4 requests, all unanswered.
	if got := len(slow.requests()); got != webhooks.DefaultMaxInFlightPerEndpoint {
		t.Errorf("the slow endpoint got %d requests while 4 hung, want 4", got)
	}
	var held int
	if err := b.d.Pool.QueryRow(context.Background(),
		"SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1 AND in_flight_until > now()", slowEP.ID).Scan(&held); err != nil || held != 4 {
		t.Errorf("%d slow deliveries in flight (%v), want 4", held, err)
	}

	releaseOnce.Do(func() { close(release) })
	b.deliveries(t, slowEP.ID, slowN, "succeeded", succeeded)
	checkOncePerEvent(t, slow.requests(), slowN)
	if m := most.Load(); m > int64(webhooks.DefaultMaxInFlightPerEndpoint) {
		t.Errorf("the slow endpoint had %d requests in flight at once, want at most 4", m)
	}
	var leases int
	if err := b.d.Pool.QueryRow(context.Background(),
		"SELECT count(*) FROM webhook_deliveries WHERE in_flight_until IS NOT NULL").Scan(&leases); err != nil || leases != 0 {
		t.Errorf("%d leases left after every attempt was recorded (%v), want 0", leases, err)
	}
}

// TestDelivery_AFailedAttemptLogsNoURLOrItsToken: a receiver's URL may
// carry a token of its own in the query; a failed attempt's error (in the
// attempts, and in River's log of the failed job) leaves the URL out.
func TestDelivery_AFailedAttemptLogsNoURLOrItsToken(t *testing.T) {
	t.Parallel()
	b := setup(t, webhooks.Config{AllowPrivate: true, Schedule: []time.Duration{time.Hour}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens: connection refused
	ep := b.endpoint(t, "http://"+addr+"/hook?token=receiver-secret-1", events.CreativeApproved)
	b.emitMany(t, events.CreativeApproved, 1)
	ds := b.deliveries(t, ep.ID, 1, "attempted", func(d db.WebhookDeliveryListRow) bool { return d.Attempts >= 1 })
	attempts := b.attempts(t, ds[0].ID)
	if len(attempts) == 0 || attempts[0].Error == nil || !strings.Contains(*attempts[0].Error, "connection refused") ||
		strings.Contains(*attempts[0].Error, "receiver-secret-1") || strings.Contains(*attempts[0].Error, "/hook") {
		t.Errorf("the attempt's error: %+v; want connection refused without the URL", attempts)
	}
}
