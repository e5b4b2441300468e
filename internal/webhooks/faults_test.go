package webhooks_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/events"
	"creativeapi/internal/store"
	"creativeapi/internal/webhooks"
)

// The fault tests of docs/events.md's promises: at least once, exactly one
// webhook-id per event and endpoint, retried and disabled as documented,
// and a slow endpoint never holding up another.

// emitMany writes n events of type ty (data {"n": i}) in one transaction
// and publishes them.
func (b *bundle) emitMany(t *testing.T, ty events.Type, n int) {
	t.Helper()
	ctx := context.Background()
	evs := make([]events.Event, n)
	for i := range evs {
		evs[i] = events.Event{Type: ty, OrganizationID: b.org, Timestamp: time.Now(), Data: map[string]int{"n": i}}
	}
	if err := b.d.Store.InTx(ctx, func(q store.Tx) error { return events.Write(ctx, q.Queries, evs...) }); err != nil {
		t.Fatal(err)
	}
	for {
		published, err := b.pub.PublishOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if published == 0 {
			return
		}
	}
}

// deliveries waits until endpoint has n deliveries that all satisfy done,
// or fails after a generous bound.
func (b *bundle) deliveries(t *testing.T, endpoint uuid.UUID, n int, what string, done func(db.WebhookDeliveryListRow) bool) []db.WebhookDeliveryListRow {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ds, err := b.d.Store.Q.WebhookDeliveryList(context.Background(), db.WebhookDeliveryListParams{EndpointID: endpoint, RowLimit: 10_000})
		if err != nil {
			t.Fatal(err)
		}
		ok := len(ds) == n
		for _, d := range ds {
			ok = ok && done(d)
		}
		if ok {
			return ds
		}
		if time.Now().After(deadline) {
			t.Fatalf("endpoint %s: %d deliveries, not all %s after 30s; want %d", endpoint, len(ds), what, n)
		}
		<-time.After(10 * time.Millisecond)
	}
}

func succeeded(d db.WebhookDeliveryListRow) bool { return d.Status == "succeeded" }

// checkOncePerEvent checks what a receiver got for events 0..n-1: every
// request verifies, every event arrived under exactly one webhook-id, and
// an id that came more than once always carried the same event.
func checkOncePerEvent(t *testing.T, got []received, n int) {
	t.Helper()
	idOf := map[int]string{}
	eventOf := map[string]int{}
	for i, r := range got {
		if r.verified != nil {
			t.Errorf("request %d does not verify: %v", i+1, r.verified)
		}
		var p struct {
			Data struct{ N int } `json:"data"`
		}
		if err := json.Unmarshal([]byte(r.body), &p); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		if id, ok := idOf[p.Data.N]; ok && id != r.id {
			t.Errorf("event %d arrived under two webhook-ids, %s and %s", p.Data.N, id, r.id)
		}
		if e, ok := eventOf[r.id]; ok && e != p.Data.N {
			t.Errorf("webhook-id %s carried events %d and %d", r.id, e, p.Data.N)
		}
		idOf[p.Data.N], eventOf[r.id] = r.id, p.Data.N
	}
	if len(idOf) != n {
		t.Errorf("%d distinct events arrived; want %d", len(idOf), n)
	}
}

func TestDelivery_AReceiverDownForAWhileGetsEveryEventOnceUp(t *testing.T) {
	t.Parallel()
	// Two quick retries, then enough slower ones that none runs out while
	// the receiver comes up.
	schedule := []time.Duration{time.Millisecond, time.Millisecond}
	for range 20 {
		schedule = append(schedule, 200*time.Millisecond)
	}
	b := setup(t, webhooks.Config{AllowPrivate: true, Schedule: schedule})
	// The receiver's address, with nothing listening on it yet.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ep := b.endpoint(t, "http://"+addr, events.CreativeApproved)
	const n = 20
	b.emitMany(t, events.CreativeApproved, n)
	// Down: every delivery fails twice, connection refused.
	b.deliveries(t, ep.ID, n, "failed twice", func(d db.WebhookDeliveryListRow) bool { return d.Attempts >= 2 })

	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the receiver cannot come back on %s: %v", addr, err)
	}
	rcv := newReceiverOn(t, secretOf(t, b, ep), func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }, ln)
	ds := b.deliveries(t, ep.ID, n, "succeeded", succeeded)
	checkOncePerEvent(t, rcv.requests(), n)
	for _, d := range ds {
		if d.Attempts < 3 {
			t.Errorf("delivery %s succeeded at attempt %d; want after at least two refused", d.ID, d.Attempts)
		}
	}
	attempts := b.attempts(t, ds[0].ID)
	if attempts[0].Error == nil || !strings.Contains(*attempts[0].Error, "connection refused") || attempts[0].ResponseStatus != nil {
		t.Errorf("first attempt while down: %+v; want a logged connection refused", attempts[0])
	}
}

func secretOf(t *testing.T, b *bundle, ep db.WebhookEndpoint) string {
	t.Helper()
	got, err := b.d.Store.Q.WebhookEndpointGet(context.Background(), db.WebhookEndpointGetParams{ID: ep.ID, OwnerID: b.org})
	if err != nil {
		t.Fatal(err)
	}
	return got.Secret
}

func (b *bundle) attempts(t *testing.T, delivery uuid.UUID) []db.WebhookDeliveryAttempt {
	t.Helper()
	as, err := b.d.Store.Q.WebhookAttemptsForDeliveries(context.Background(), []uuid.UUID{delivery})
	if err != nil {
		t.Fatal(err)
	}
	return as
}

func TestDelivery_RetryAfterPostponesTheNextAttempt(t *testing.T) {
	t.Parallel()
	b := setup(t, webhooks.Config{AllowPrivate: true}) // the schedule alone would retry after 1 ms
	ep := b.endpoint(t, "http://placeholder", events.CreativeApproved)
	rcv := newReceiver(t, secretOf(t, b, ep), func(n int, w http.ResponseWriter, req *http.Request) {
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	b.setURL(t, ep, rcv.srv.URL)
	b.emit(t, events.CreativeApproved)
	d := b.deliveries(t, ep.ID, 1, "succeeded", succeeded)[0]
	as := b.attempts(t, d.ID)
	if len(as) != 2 {
		t.Fatalf("%d attempts; want 2", len(as))
	}
	answered := as[0].StartedAt.Add(time.Duration(as[0].DurationMs) * time.Millisecond)
	if gap := as[1].StartedAt.Sub(answered); gap < time.Second-5*time.Millisecond {
		t.Errorf("second attempt %s after the 429's Retry-After: 1; want at least 1s", gap)
	}
	checkOncePerEvent(t, rcv.requests(), 1)
}

func (b *bundle) setURL(t *testing.T, ep db.WebhookEndpoint, url string) {
	t.Helper()
	if _, err := b.d.Pool.Exec(context.Background(), "UPDATE webhook_endpoints SET url = $1 WHERE id = $2", url, ep.ID); err != nil {
		t.Fatal(err)
	}
}

func TestDelivery_FailsAfterTheLastScheduledAttempt(t *testing.T) {
	t.Parallel()
	b := setup(t, webhooks.Config{AllowPrivate: true}) // 3 retries
	ep := b.endpoint(t, "http://placeholder", events.CreativeApproved)
	rcv := newReceiver(t, secretOf(t, b, ep), func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	b.setURL(t, ep, rcv.srv.URL)
	b.emit(t, events.CreativeApproved)
	d := b.deliveries(t, ep.ID, 1, "failed", func(d db.WebhookDeliveryListRow) bool { return d.Status == "failed" })[0]
	if d.Attempts != 4 || d.FinishedAt == nil || d.NextAttemptAt != nil {
		t.Errorf("delivery %+v; want failed after 4 attempts, nothing more due", d)
	}
	got := rcv.requests()
	if len(got) != 4 {
		t.Errorf("the receiver got %d requests; want 4", len(got))
	}
	checkOncePerEvent(t, got, 1)
}

func TestDelivery_AnAttemptLongerThanTheTimeoutFailsAndIsRetried(t *testing.T) {
	t.Parallel()
	b := setup(t, webhooks.Config{AllowPrivate: true, Timeout: 300 * time.Millisecond, Schedule: []time.Duration{time.Millisecond}})
	ep := b.endpoint(t, "http://placeholder", events.CreativeApproved)
	rcv := newReceiver(t, secretOf(t, b, ep), func(_ int, _ http.ResponseWriter, req *http.Request) {
		<-req.Context().Done() // slower than the timeout: never answers before the sender gives up
	})
	b.setURL(t, ep, rcv.srv.URL)
	b.emit(t, events.CreativeApproved)
	d := b.deliveries(t, ep.ID, 1, "failed", func(d db.WebhookDeliveryListRow) bool { return d.Status == "failed" })[0]
	as := b.attempts(t, d.ID)
	if len(as) != 2 {
		t.Fatalf("%d attempts; want 2 (the schedule's)", len(as))
	}
	for _, a := range as {
		if a.ResponseStatus != nil || a.Error == nil || !timedOut(*a.Error) || a.DurationMs < 300 {
			t.Errorf("attempt %d: status %v, error %q, %d ms; want no answer, a timeout, at least 300 ms", a.Attempt, a.ResponseStatus, deref(a.Error), a.DurationMs)
		}
	}
}

// timedOut: the ways net/http says a request ran out of time.
func timedOut(msg string) bool {
	msg = strings.ToLower(msg)
	return strings.Contains(msg, "timeout") || strings.Contains(msg, "deadline exceeded")
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func TestDelivery_ASlowEndpointDoesNotHoldUpAnother(t *testing.T) {
	t.Parallel()
	b := setup(t, webhooks.Config{AllowPrivate: true, Timeout: 30 * time.Second, Workers: 8})
	slowEP := b.endpoint(t, "http://placeholder", events.CreativeApproved)
	fastEP := b.endpoint(t, "http://placeholder", events.CreativeSubmitted)
	release := make(chan struct{})
	slow := newReceiver(t, secretOf(t, b, slowEP), func(_ int, w http.ResponseWriter, req *http.Request) {
		select {
		case <-release:
			w.WriteHeader(http.StatusNoContent)
		case <-req.Context().Done():
		}
	})
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	fast := newReceiver(t, secretOf(t, b, fastEP), func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	b.setURL(t, slowEP, slow.srv.URL)
	b.setURL(t, fastEP, fast.srv.URL)

	const n = 5
	b.emitMany(t, events.CreativeApproved, n)
	slow.wait(t, webhooks.DefaultMaxInFlightPerEndpoint) // 4 attempts hang on the slow endpoint, the 5th waits its turn
	b.emitMany(t, events.CreativeSubmitted, n)
	b.deliveries(t, fastEP.ID, n, "succeeded", succeeded)
	checkOncePerEvent(t, fast.requests(), n)
	// All that while the slow endpoint had not answered once.
	b.deliveries(t, slowEP.ID, n, "unanswered", func(d db.WebhookDeliveryListRow) bool { return d.Status == "pending" && d.Attempts == 0 })

	close(release)
	b.deliveries(t, slowEP.ID, n, "succeeded", succeeded)
	checkOncePerEvent(t, slow.requests(), n)
}

func TestDelivery_TwoReplicasDeliverEachEventOncePerEndpoint(t *testing.T) {
	t.Parallel()
	b := setup(t, webhooks.Config{AllowPrivate: true, Workers: 4})
	pool, err := store.Open(context.Background(), b.d.URL, store.PoolConfig{
		ConnectTimeout: 5 * time.Second, StatementTimeout: 30 * time.Second, LockTimeout: 5 * time.Second, MaxConns: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	other := store.New(pool)
	otherSvc := startService(t, other, webhooks.Config{AllowPrivate: true, Workers: 4})

	// Both replicas publish, woken only by their polls.
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	for _, p := range []*events.Publisher{
		events.NewPublisher(b.d.Store, events.PublisherConfig{PollInterval: 5 * time.Millisecond}, b.svc.Fanout, quiet),
		events.NewPublisher(other, events.PublisherConfig{PollInterval: 5 * time.Millisecond}, otherSvc.Fanout, quiet),
	} {
		go func() { p.Run(ctx); done <- struct{}{} }()
	}
	t.Cleanup(func() { stop(); <-done; <-done })

	var eps []db.WebhookEndpoint
	var rcvs []*receiver
	for range 2 {
		ep := b.endpoint(t, "http://placeholder", events.CreativeApproved)
		rcv := newReceiver(t, secretOf(t, b, ep), func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
		b.setURL(t, ep, rcv.srv.URL)
		eps, rcvs = append(eps, ep), append(rcvs, rcv)
	}
	const n = 200
	bg := context.Background()
	for i := range n { // one event per transaction, as commands write them
		if err := b.d.Store.InTx(bg, func(q store.Tx) error {
			return events.Write(bg, q.Queries, events.Event{Type: events.CreativeApproved, OrganizationID: b.org, Timestamp: time.Now(), Data: map[string]int{"n": i}})
		}); err != nil {
			t.Fatal(err)
		}
	}
	for i, ep := range eps {
		b.deliveries(t, ep.ID, n, "succeeded", succeeded)
		checkOncePerEvent(t, rcvs[i].requests(), n)
	}
	var workedBy int
	if err := b.d.Pool.QueryRow(bg, `SELECT count(DISTINCT attempted_by[1]) FROM river.river_job WHERE kind = 'webhook_delivery'`).Scan(&workedBy); err != nil {
		t.Fatal(err)
	}
	if workedBy != 2 {
		t.Errorf("deliveries were worked by %d replicas; want both", workedBy)
	}
}

func TestPurge_EndsADeliveryNoJobWillFinish(t *testing.T) {
	t.Parallel()
	b := setup(t, webhooks.Config{AllowPrivate: true})
	ep := b.endpoint(t, "http://placeholder", events.CreativeArchived) // not what is emitted: no job
	b.emitMany(t, events.CreativeApproved, 2)
	ctx := context.Background()
	// Two pending deliveries: one whose last attempt could not be logged 8
	// days ago, one due in a minute.
	var abandoned, due uuid.UUID
	if err := b.d.Pool.QueryRow(ctx, `
		INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, attempts, next_attempt_at, created_at)
		SELECT $1, id, type, 14, now() - interval '8 days', now() - interval '10 days' FROM outbox_events ORDER BY id LIMIT 1
		RETURNING id`, ep.ID).Scan(&abandoned); err != nil {
		t.Fatal(err)
	}
	if err := b.d.Pool.QueryRow(ctx, `
		INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, attempts, next_attempt_at, created_at)
		SELECT $1, id, type, 1, now() + interval '1 minute', now() - interval '10 days' FROM outbox_events ORDER BY id DESC LIMIT 1
		RETURNING id`, ep.ID).Scan(&due); err != nil {
		t.Fatal(err)
	}
	if _, err := b.d.Pool.Exec(ctx, `UPDATE outbox_events SET created_at = now() - interval '10 days', published_at = now() - interval '10 days'`); err != nil {
		t.Fatal(err)
	}
	status := func(id uuid.UUID) string {
		var s string
		if err := b.d.Pool.QueryRow(ctx, `SELECT coalesce((SELECT status FROM webhook_deliveries WHERE id = $1), 'purged')`, id).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	if _, err := b.svc.Purge(ctx, time.Now().Add(-7*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	// The abandoned delivery is ended, and goes with its event, older than
	// the retention; the event a delivery still waits for stays.
	var eventsLeft int
	if err := b.d.Pool.QueryRow(ctx, `SELECT count(*) FROM outbox_events`).Scan(&eventsLeft); err != nil {
		t.Fatal(err)
	}
	if a, d := status(abandoned), status(due); a != "purged" || d != "pending" || eventsLeft != 1 {
		t.Fatalf("after the purge: abandoned %s, due %s, %d events; want purged, pending, 1", a, d, eventsLeft)
	}
}

func TestStop_ReturnsOnlyOnceRunningAttemptsAreLogged(t *testing.T) {
	t.Parallel()
	b := setup(t, webhooks.Config{AllowPrivate: true, Timeout: 30 * time.Second})
	ep := b.endpoint(t, "http://placeholder", events.CreativeApproved)
	rcv := newReceiver(t, secretOf(t, b, ep), func(_ int, _ http.ResponseWriter, req *http.Request) { <-req.Context().Done() })
	b.setURL(t, ep, rcv.srv.URL)
	b.emit(t, events.CreativeApproved)
	rcv.wait(t, 1)
	// The attempt would run 30 s; Stop's bound ends first, so it is cut.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_ = b.svc.Stop(ctx)
	// Read once, right away: no waiting for the attempt to log itself.
	ds, err := b.d.Store.Q.WebhookDeliveryList(context.Background(), db.WebhookDeliveryListParams{EndpointID: ep.ID, RowLimit: 10})
	if err != nil || len(ds) != 1 {
		t.Fatalf("deliveries %+v, %v; want 1", ds, err)
	}
	if as := b.attempts(t, ds[0].ID); len(as) != 1 || as[0].Error == nil || ds[0].Status != "pending" {
		t.Fatalf("when Stop returned: delivery %s, attempts %+v; want the cut attempt logged and the delivery pending", ds[0].Status, as)
	}
}
