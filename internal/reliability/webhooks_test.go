package reliability_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"creativeapi/gen/db"
	"creativeapi/internal/events"
	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
	"creativeapi/internal/webhooks"
)

// TestWebhookKilledMidDeliveryIsDeliveredAfterRestart runs the real binary,
// SIGKILLs it while it waits for a receiver's answer, and restarts it: the
// delivery is made again, with the same webhook-id, and succeeds
// (docs/events.md: River's rescuer takes the dead worker's job once it ran
// longer than WEBHOOK_TIMEOUT + 10 s).
func TestWebhookKilledMidDeliveryIsDeliveredAfterRestart(t *testing.T) {
	t.Parallel()
	bin := testenv.BuildServer(t)
	d := testenv.NewDB(t)
	org := d.Org(t, "Killed Mid Delivery")
	secret := webhooks.NewSecret()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		ids      []string
		verified []error
	)
	first := make(chan struct{})
	release := make(chan struct{})
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		ids = append(ids, r.Header.Get("webhook-id"))
		verified = append(verified, wh.Verify(body, r.Header))
		n := len(ids)
		mu.Unlock()
		if n == 1 {
			close(first)
			select { // the sender dies while waiting for this answer
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rcv.Close)
	t.Cleanup(func() { close(release) })
	ctx := context.Background()
	ep, err := d.Store.Q.WebhookEndpointCreate(ctx, db.WebhookEndpointCreateParams{OwnerID: org, Url: rcv.URL,
		EventTypes: []string{string(events.CreativeApproved)}, Enabled: true, Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, bin, d.URL, map[string]string{"WEBHOOK_TIMEOUT": "1s"})
	if err := d.Store.InTx(ctx, func(q store.Tx) error {
		return events.Write(ctx, q.Queries, events.Event{Type: events.CreativeApproved, OrganizationID: org, Timestamp: time.Now(), Data: map[string]string{"id": "c1"}})
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-first:
	case <-time.After(30 * time.Second):
		t.Fatal("the receiver got no request within 30s")
	}
	srv.kill()
	srv.start()

	var status string
	waitFor(t, "the delivery to succeed after the restart", 90*time.Second, func() bool {
		if err := d.Pool.QueryRow(ctx, "SELECT status FROM webhook_deliveries WHERE endpoint_id = $1", ep.ID).Scan(&status); err != nil {
			t.Fatal(err)
		}
		return status == "succeeded"
	})
	mu.Lock()
	defer mu.Unlock()
	if len(ids) != 2 || ids[0] != ids[1] || ids[0] == "" {
		t.Errorf("the receiver got webhook-ids %q; want the same id twice (cut, then delivered)", ids)
	}
	for i, err := range verified {
		if err != nil {
			t.Errorf("request %d does not verify: %v", i+1, err)
		}
	}
}
