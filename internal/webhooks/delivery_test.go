package webhooks_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"creativeapi/gen/db"
	"creativeapi/internal/events"
	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
	"creativeapi/internal/webhooks"
)

// received is one request the receiver got.
type received struct {
	id, signature string
	verified      error
	body          string
}

// receiver is a webhook endpoint that verifies every request with the
// Standard Webhooks library and answers what answer says for the n-th
// request (1-based).
type receiver struct {
	srv    *httptest.Server
	secret string
	mu     sync.Mutex
	got    []received
	answer func(n int, w http.ResponseWriter, req *http.Request)
	seen   chan struct{}
}

func newReceiver(t testing.TB, secret string, answer func(n int, w http.ResponseWriter, req *http.Request)) *receiver {
	return newReceiverOn(t, secret, answer, nil)
}

// newReceiverOn serves on ln (a new loopback listener when nil).
func newReceiverOn(t testing.TB, secret string, answer func(n int, w http.ResponseWriter, req *http.Request), ln net.Listener) *receiver {
	r := &receiver{secret: secret, answer: answer, seen: make(chan struct{}, 1<<16)}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{id: req.Header.Get("webhook-id"), signature: req.Header.Get("webhook-signature"),
			verified: wh.Verify(body, req.Header), body: string(body)})
		n := len(r.got)
		r.mu.Unlock()
		select {
		case r.seen <- struct{}{}:
		default: // wait rereads the count
		}
		r.answer(n, w, req)
	}))
	if ln != nil {
		r.srv.Listener.Close()
		r.srv.Listener = ln
	}
	r.srv.Start()
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

type bundle struct {
	d   *testenv.DB
	org uuid.UUID
	svc *webhooks.Service
	pub *events.Publisher
}

// setup starts a delivery service with retries due at once (no waits)
// unless cfg says otherwise.
func setup(t testing.TB, cfg webhooks.Config) *bundle {
	t.Helper()
	d := testenv.NewDB(t)
	svc := startService(t, d.Store, cfg)
	return &bundle{d: d, org: d.Org(t, "Hooks"), svc: svc, pub: events.NewPublisher(d.Store, events.PublisherConfig{}, svc.Fanout, quiet)}
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// startService runs a delivery service on st (a replica, when st has a
// pool of its own) until the test ends.
func startService(t testing.TB, st *store.Store, cfg webhooks.Config) *webhooks.Service {
	t.Helper()
	if cfg.Schedule == nil {
		cfg.Schedule = []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}
	}
	cfg.Jitter = func(d time.Duration) time.Duration { return d }
	cfg.FetchPollInterval = 20 * time.Millisecond
	if cfg.Timeout == 0 {
		cfg.Timeout = 2 * time.Second
	}
	svc, err := webhooks.New(st, cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopCtx, c := context.WithTimeout(context.Background(), 5*time.Second)
		defer c()
		_ = svc.Stop(stopCtx)
		cancel()
	})
	return svc
}

func (b *bundle) endpoint(t testing.TB, url string, types ...events.Type) db.WebhookEndpoint {
	t.Helper()
	names := make([]string, len(types))
	for i, ty := range types {
		names[i] = string(ty)
	}
	ep, err := b.d.Store.Q.WebhookEndpointCreate(context.Background(), db.WebhookEndpointCreateParams{
		OwnerID: b.org, Url: url, EventTypes: names, Enabled: true, Secret: webhooks.NewSecret()})
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// emit writes one creative event and publishes it.
func (b *bundle) emit(t *testing.T, ty events.Type) {
	t.Helper()
	ctx := context.Background()
	if err := b.d.Store.InTx(ctx, func(q store.Tx) error {
		return events.Write(ctx, q.Queries, events.Event{Type: ty, OrganizationID: b.org, Timestamp: time.Now(), Data: map[string]string{"id": "c1"}})
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.pub.PublishOnce(ctx); err != nil {
		t.Fatal(err)
	}
}

// wait waits for the receiver's n-th request, or fails after a generous bound.
func (r *receiver) wait(t *testing.T, n int) {
	t.Helper()
	for len(r.requests()) < n {
		select {
		case <-r.seen:
		case <-time.After(20 * time.Second):
			t.Fatalf("the receiver got %d requests; want %d", len(r.requests()), n)
		}
	}
}

func (b *bundle) delivery(t *testing.T, endpoint uuid.UUID, want string) db.WebhookDeliveryListRow {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ds, err := b.d.Store.Q.WebhookDeliveryList(context.Background(), db.WebhookDeliveryListParams{EndpointID: endpoint, RowLimit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) == 1 && ds[0].Status == want {
			return ds[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries %+v; want one %s", ds, want)
		}
		<-time.After(10 * time.Millisecond)
	}
}

func TestDelivery_SignedByTheStandardRetriedWithTheSameIDUntilAccepted(t *testing.T) {
	t.Parallel()
	b := setup(t, webhooks.Config{AllowPrivate: true})
	secret := webhooks.NewSecret()
	rcv := newReceiver(t, secret, func(n int, w http.ResponseWriter, req *http.Request) {
		switch n {
		case 1:
			w.WriteHeader(http.StatusInternalServerError)
		case 2:
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
	ep := b.endpoint(t, rcv.srv.URL, events.CreativeApproved)
	if _, err := b.d.Pool.Exec(context.Background(), "UPDATE webhook_endpoints SET secret = $1 WHERE id = $2", secret, ep.ID); err != nil {
		t.Fatal(err)
	}
	b.emit(t, events.CreativeSubmitted) // not subscribed: never sent
	b.emit(t, events.CreativeApproved)
	rcv.wait(t, 3)
	d := b.delivery(t, ep.ID, "succeeded")
	got := rcv.requests()
	for i, r := range got {
		if r.verified != nil {
			t.Errorf("request %d does not verify: %v", i+1, r.verified)
		}
		if r.id != d.ID.String() {
			t.Errorf("request %d has webhook-id %q; want the delivery's %s on every attempt", i+1, r.id, d.ID)
		}
	}
	if d.Attempts != 3 {
		t.Errorf("attempts %d; want 3", d.Attempts)
	}
	attempts, err := b.d.Store.Q.WebhookAttemptsForDeliveries(context.Background(), []uuid.UUID{d.ID})
	if err != nil {
		t.Fatal(err)
	}
	var statuses []int32
	for _, a := range attempts {
		statuses = append(statuses, *a.ResponseStatus)
	}
	if len(statuses) != 3 || statuses[0] != 500 || statuses[1] != 429 || statuses[2] != 204 {
		t.Errorf("attempt log %v; want [500 429 204]", statuses)
	}
}

func TestDelivery_410DisablesTheEndpoint(t *testing.T) {
	t.Parallel()
	b := setup(t, webhooks.Config{AllowPrivate: true})
	rcv := newReceiver(t, webhooks.NewSecret(), func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusGone) })
	ep := b.endpoint(t, rcv.srv.URL, events.CreativeApproved)
	b.emit(t, events.CreativeApproved)
	rcv.wait(t, 1)
	b.delivery(t, ep.ID, "failed")
	got, err := b.d.Store.Q.WebhookEndpointGet(context.Background(), db.WebhookEndpointGetParams{ID: ep.ID, OwnerID: b.org})
	if err != nil {
		t.Fatal(err)
	}
	if got.Enabled || got.DisabledReason == nil || *got.DisabledReason != "gone" {
		t.Fatalf("endpoint enabled=%v reason=%v; want disabled as gone", got.Enabled, got.DisabledReason)
	}
	b.emit(t, events.CreativeApproved) // a disabled endpoint gets nothing more
	if n, err := b.d.Store.Q.WebhookDeliveryList(context.Background(), db.WebhookDeliveryListParams{EndpointID: ep.ID, RowLimit: 10}); err != nil || len(n) != 1 {
		t.Fatalf("deliveries after disabling: %d, %v; want still 1", len(n), err)
	}
}

func TestDelivery_NeverReachesAPrivateAddress(t *testing.T) {
	t.Parallel()
	b := setup(t, webhooks.Config{Schedule: []time.Duration{time.Millisecond}})
	rcv := newReceiver(t, webhooks.NewSecret(), func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	_, port, _ := strings.Cut(strings.TrimPrefix(rcv.srv.URL, "http://"), ":")
	// Stored as if they had been accepted (a name that resolves to loopback
	// passes the URL check; the literals stand for a name that resolves to
	// them): the dial-time check refuses each.
	for _, host := range []string{"localhost", "127.0.0.1", "[::1]", "10.0.0.1", "169.254.169.254", "[::ffff:127.0.0.1]"} {
		t.Run(host, func(t *testing.T) {
			ep := b.endpoint(t, "https://"+host+":"+port, events.CreativeApproved)
			b.emit(t, events.CreativeApproved)
			d := b.delivery(t, ep.ID, "failed")
			attempts, err := b.d.Store.Q.WebhookAttemptsForDeliveries(context.Background(), []uuid.UUID{d.ID})
			if err != nil || len(attempts) != 2 || attempts[0].Error == nil || !strings.Contains(*attempts[0].Error, "not public") {
				t.Fatalf("attempts %+v, %v; want 2 failed as not public", attempts, err)
			}
		})
	}
	if n := len(rcv.requests()); n != 0 {
		t.Fatalf("the receiver on loopback got %d requests; want none", n)
	}
}

func TestCheckURL_RefusesWhatIsNotPublicHTTPS(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"https://hooks.example.com/in", true},
		{"https://93.184.216.34/in", true},
		{"http://hooks.example.com/in", false},
		{"https://127.0.0.1/in", false},
		{"https://10.0.0.1/in", false},
		{"https://169.254.169.254/latest", false},
		{"https://[::1]/in", false},
		{"https://[::ffff:10.0.0.1]/in", false},
		{"https://100.64.0.1/in", false},
		{"https://user:pw@hooks.example.com/in", false},
		{"hooks.example.com/in", false},
	} {
		if err := webhooks.CheckURL(tc.url, false); (err == nil) != tc.ok {
			t.Errorf("CheckURL(%q) = %v; want ok=%v", tc.url, err, tc.ok)
		}
	}
}
