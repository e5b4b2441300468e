package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"creativeapi/gen/api"
	"creativeapi/internal/events"
	"creativeapi/internal/review"
	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
)

// The webhook tools (test, redeliver) and the platform's deposit webhooks,
// against a real receiver over HTTP; every request it gets is verified
// with the Standard Webhooks library.

// hookRequest is one request a test receiver got.
type hookRequest struct {
	id     string
	body   []byte
	header http.Header
}

// receiver is a webhook receiver that answers 204 and hands on what it got.
func receiver(t *testing.T) (url string, got chan hookRequest) {
	t.Helper()
	got = make(chan hookRequest, 20)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- hookRequest{r.Header.Get("webhook-id"), body, r.Header.Clone()}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rcv.Close)
	return rcv.URL + "/hook", got
}

// next is the next request the receiver got, within a generous bound.
func nextRequest(t *testing.T, got chan hookRequest) hookRequest {
	t.Helper()
	select {
	case g := <-got:
		return g
	case <-time.After(20 * time.Second):
		t.Fatal("the receiver got nothing")
	}
	return hookRequest{}
}

// nothingMore fails if the receiver gets a request within a short while.
func nothingMore(t *testing.T, got chan hookRequest, why string) {
	t.Helper()
	select {
	case g := <-got:
		t.Errorf("%s: the receiver got %s", why, g.body)
	case <-time.After(300 * time.Millisecond):
	}
}

// verify checks a request's signature with the Standard Webhooks library.
func verify(t *testing.T, secret string, g hookRequest) {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(g.body, g.header); err != nil {
		t.Fatalf("the delivery does not verify with the endpoint's secret: %v", err)
	}
}

// finishedDelivery inserts a published event of org and a succeeded
// delivery of it to endpoint, with one attempt logged.
func finishedDelivery(t *testing.T, env *testenv.Env, endpoint, org uuid.UUID) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	err := env.DB.Pool.QueryRow(context.Background(), `
		WITH e AS (INSERT INTO outbox_events (type, organization_id, payload, seq, published_at)
		           VALUES ('creative.approved', $2, '{}', nextval('outbox_events_seq'), now()) RETURNING id),
		     d AS (INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, status, attempts, finished_at)
		           SELECT $1, e.id, 'creative.approved', 'succeeded', 1, now() FROM e RETURNING id)
		INSERT INTO webhook_delivery_attempts (delivery_id, attempt, started_at, duration_ms, response_status)
		SELECT d.id, 1, now(), 5, 204 FROM d RETURNING delivery_id`, endpoint, org).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// waitFor reads an endpoint's deliveries from path until one with id is
// in status want.
func waitFor(t *testing.T, c *testenv.Client, path string, id uuid.UUID, want api.WebhookDeliveryStatus) api.WebhookDelivery {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var list api.WebhookDeliveryList
		r := c.Do(http.MethodGet, path, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("deliveries: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &list)
		for _, d := range list.Items {
			if d.Id == id && d.Status == want {
				return d
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries %+v; want %s %s", list.Items, id, want)
		}
		<-time.After(20 * time.Millisecond)
	}
}

// TestWebhookTest_IsASignedWebhookTestDeliveryOfItsOwn: the test tool
// answers 202 with a new pending delivery of a webhook.test event, which
// the receiver gets signed with the endpoint's secret, under the
// delivery's id, logged like any delivery; only admins may send one.
func TestWebhookTest_IsASignedWebhookTestDeliveryOfItsOwn(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	startDelivery(t, d, true)
	url, got := receiver(t)
	ep := d.createWebhook(t, url, "creative.approved")
	test := func(who string, endpoint string) *testenv.Response {
		return d.clients[who].Do(http.MethodPost, webhooksURL(d.org)+"/"+endpoint+"/test", nil)
	}

	for who, want := range map[string]int{"reviewer": http.StatusForbidden, "outsider": http.StatusNotFound} {
		if r := test(who, ep.Id.String()); r.Status != want {
			t.Errorf("%s tests: %d %s; want %d", who, r.Status, r.Body, want)
		}
	}
	if r := test("admin", uuid.NewString()); r.Status != http.StatusNotFound {
		t.Errorf("an unknown endpoint: %d %s", r.Status, r.Body)
	}
	nothingMore(t, got, "after refused tests")

	r := test("admin", ep.Id.String())
	if r.Status != http.StatusAccepted {
		t.Fatalf("test: %d %s", r.Status, r.Body)
	}
	var queued api.WebhookDelivery
	r.JSON(t, &queued)
	if queued.EventType != string(events.WebhookTest) || queued.Status != api.WebhookDeliveryStatusPending || len(queued.Attempts) != 0 {
		t.Fatalf("queued %+v; want a pending webhook.test delivery without attempts", queued)
	}

	g := nextRequest(t, got)
	verify(t, ep.Secret, g)
	var payload struct {
		Type string `json:"type"`
		Data struct {
			WebhookID uuid.UUID `json:"webhookId"`
		} `json:"data"`
	}
	if err := json.Unmarshal(g.body, &payload); err != nil {
		t.Fatal(err)
	}
	if g.id != queued.Id.String() || payload.Type != "webhook.test" || payload.Data.WebhookID != ep.Id {
		t.Errorf("got webhook-id %s, payload %s; want the delivery %s of a webhook.test naming %s", g.id, g.body, queued.Id, ep.Id)
	}
	done := waitFor(t, d.clients["admin"], webhookURL(d.org, ep.Id)+"/deliveries", queued.Id, api.WebhookDeliveryStatusSucceeded)
	if done.EventId != queued.EventId || len(done.Attempts) != 1 || done.Attempts[0].ResponseStatus.MustGet() != http.StatusNoContent {
		t.Errorf("delivered %+v; want the queued event, one attempt answered 204", done)
	}
	// The test event is no one's: no member's stream carries it.
	var org, user *uuid.UUID
	if err := d.env.DB.Pool.QueryRow(context.Background(), "SELECT organization_id, user_id FROM outbox_events WHERE seq = $1", done.EventId).
		Scan(&org, &user); err != nil || org != nil || user != nil {
		t.Errorf("the test event's organization %v and user %v (%v); want neither", org, user, err)
	}
	nothingMore(t, got, "after the one test")
}

// TestWebhookRedeliver_IsANewDeliveryOfTheSameMessage: a redelivery sends
// the same webhook-id and the same body bytes again, signed afresh, as a
// delivery of its own (its own attempts: the attempt log of the one it
// repeats stays as it was); a redelivery of a redelivery sends the first
// one's message; a delivery still pending may be redelivered too.
func TestWebhookRedeliver_IsANewDeliveryOfTheSameMessage(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	publish := startDelivery(t, d, true)
	url, got := receiver(t)
	ep := d.createWebhook(t, url, "creative.approved")
	id := d.creative(t, creativeSpec{status: review.StatusInReview, versions: 1})
	if r := d.act("reviewer", id, map[string]any{"action": "approve"}); r.Status != http.StatusOK {
		t.Fatalf("approve: %d %s", r.Status, r.Body)
	}
	publish()
	first := nextRequest(t, got)
	deliveries := webhookURL(d.org, ep.Id) + "/deliveries"
	original := waitDelivery(t, d, ep.Id, api.WebhookDeliveryStatusSucceeded)
	if original.MessageId != original.Id || first.id != original.Id.String() {
		t.Fatalf("a first delivery's message %s, webhook-id %s; want its id %s", original.MessageId, first.id, original.Id)
	}
	redeliver := func(who string, endpoint, delivery uuid.UUID) *testenv.Response {
		return d.clients[who].Do(http.MethodPost, webhookURL(d.org, endpoint)+"/deliveries/"+delivery.String()+"/redeliver", nil)
	}
	queue := func(delivery uuid.UUID) api.WebhookDelivery {
		t.Helper()
		r := redeliver("admin", ep.Id, delivery)
		if r.Status != http.StatusAccepted {
			t.Fatalf("redeliver: %d %s", r.Status, r.Body)
		}
		var queued api.WebhookDelivery
		r.JSON(t, &queued)
		return queued
	}

	queued := queue(original.Id)
	if queued.Id == original.Id || queued.MessageId != original.Id || queued.EventId != original.EventId ||
		queued.Status != api.WebhookDeliveryStatusPending || len(queued.Attempts) != 0 {
		t.Fatalf("redelivery answered %+v; want a new pending delivery of the same event and message", queued)
	}
	again := nextRequest(t, got)
	verify(t, ep.Secret, again)
	if again.id != first.id || string(again.body) != string(first.body) {
		t.Errorf("redelivered webhook-id %s, body %s; want %s, %s", again.id, again.body, first.id, first.body)
	}
	done := waitFor(t, d.clients["admin"], deliveries, queued.Id, api.WebhookDeliveryStatusSucceeded)
	if len(done.Attempts) != 1 || done.Attempts[0].Attempt != 1 {
		t.Errorf("the redelivery's attempts %+v; want one of its own", done.Attempts)
	}
	before := waitFor(t, d.clients["admin"], deliveries, original.Id, api.WebhookDeliveryStatusSucceeded)
	if len(before.Attempts) != 1 || !before.Attempts[0].StartedAt.Equal(original.Attempts[0].StartedAt) || !before.FinishedAt.IsSpecified() ||
		before.FinishedAt.MustGet() != original.FinishedAt.MustGet() {
		t.Errorf("the delivery redelivered is now %+v; want it as it was, %+v", before, original)
	}

	// A redelivery of the redelivery sends the first message; so does a
	// redelivery of a delivery still pending.
	if twice := queue(queued.Id); twice.MessageId != original.Id {
		t.Errorf("a redelivery of a redelivery sends message %s; want %s", twice.MessageId, original.Id)
	}
	if g := nextRequest(t, got); g.id != first.id {
		t.Errorf("webhook-id %s; want %s", g.id, first.id)
	}
	execDepositSQL(t, d.env, "UPDATE webhook_deliveries SET status = 'pending', finished_at = NULL WHERE id = $1", original.Id)
	if pending := queue(original.Id); pending.MessageId != original.Id {
		t.Errorf("a redelivery of a pending delivery sends message %s; want %s", pending.MessageId, original.Id)
	}
	if g := nextRequest(t, got); g.id != first.id {
		t.Errorf("webhook-id %s; want %s", g.id, first.id)
	}

	// Only an admin, only the endpoint's own deliveries.
	other := d.createWebhook(t, url, "creative.approved")
	for name, tc := range map[string]struct {
		who                string
		endpoint, delivery uuid.UUID
		want               int
	}{
		"a reviewer":                  {"reviewer", ep.Id, original.Id, http.StatusForbidden},
		"an admin of another org":     {"outsider", ep.Id, original.Id, http.StatusNotFound},
		"through another endpoint":    {"admin", other.Id, original.Id, http.StatusNotFound},
		"an unknown delivery":         {"admin", ep.Id, uuid.New(), http.StatusNotFound},
		"through an unknown endpoint": {"admin", uuid.New(), original.Id, http.StatusNotFound},
	} {
		if r := redeliver(tc.who, tc.endpoint, tc.delivery); r.Status != tc.want {
			t.Errorf("%s: %d %s; want %d", name, r.Status, r.Body, tc.want)
		}
	}
	nothingMore(t, got, "after refused redeliveries")
}

const platformWebhooks = "/api/v1/operator/webhooks"

// TestPlatformWebhooks_EveryUsersDepositEventsReachAnOperatorsEndpoint:
// an operator's endpoint receives the deposit events of users in no
// organization of its own, every deposit.* type (one no list names too)
// for deposit.*, the named ones only otherwise; organization endpoints
// get none of them; the tools work on it as on an organization's.
func TestPlatformWebhooks_EveryUsersDepositEventsReachAnOperatorsEndpoint(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	publish := startDelivery(t, d, true)
	op, _ := signedInOperator(t, d.env, "Olga Operator")
	allURL, all := receiver(t)
	creditedURL, credited := receiver(t)
	orgURL, org := receiver(t)
	create := func(url string, types ...string) api.NewPlatformWebhookEndpoint {
		t.Helper()
		r := op.Do(http.MethodPost, platformWebhooks, map[string]any{"url": url, "eventTypes": types}, key(uuid.NewString()))
		if r.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		var ep api.NewPlatformWebhookEndpoint
		r.JSON(t, &ep)
		return ep
	}
	every := create(allURL, "deposit.*")
	onlyCredited := create(creditedURL, "deposit.credited")
	d.createWebhook(t, orgURL, "creative.approved")

	// A user of no organization cancels a deposit.
	payer, payerID := d.env.SignedIn(t, "Paula Payer")
	r := payer.Do(http.MethodPost, depositsPath, depositBody("25000000"))
	if r.Status != http.StatusCreated {
		t.Fatalf("deposit: %d %s", r.Status, r.Body)
	}
	var dep api.AccountDeposit
	r.JSON(t, &dep)
	if r := payer.Do(http.MethodPost, cancelPath(dep.Id.String()), nil); r.Status != http.StatusOK {
		t.Fatalf("cancel: %d %s", r.Status, r.Body)
	}
	// A deposit type no list of ours names (a later release's).
	err := d.env.DB.Store.InTx(context.Background(), func(q store.Tx) error {
		return events.Write(context.Background(), q.Queries, events.Event{Type: "deposit.top_up_requested", UserID: d.users["author"], Timestamp: time.Now(), Data: map[string]string{"id": "later"}})
	})
	if err != nil {
		t.Fatal(err)
	}
	publish()

	var types []string
	owners := map[string]uuid.UUID{}
	for range 2 {
		g := nextRequest(t, all)
		verify(t, every.Secret, g)
		var p struct {
			Type   string
			UserID uuid.UUID `json:"userId"`
		}
		if err := json.Unmarshal(g.body, &p); err != nil {
			t.Fatal(err)
		}
		types = append(types, p.Type)
		owners[p.Type] = p.UserID
	}
	if owners["deposit.cancelled"] != payerID || owners["deposit.top_up_requested"] != d.users["author"] {
		t.Errorf("owners %v; want the payer %s and the author %s named by userId", owners, payerID, d.users["author"])
	}
	slices.Sort(types)
	if !slices.Equal(types, []string{"deposit.cancelled", "deposit.top_up_requested"}) {
		t.Errorf("deposit.* hookRequest %v; want deposit.cancelled, deposit.top_up_requested", types)
	}
	nothingMore(t, credited, "deposit.credited only")
	nothingMore(t, org, "an organization's endpoint")

	// The same API as an organization's endpoints.
	path := platformWebhooks + "/" + every.Id.String()
	var list api.PlatformWebhookEndpointList
	op.Do(http.MethodGet, platformWebhooks, nil).JSON(t, &list)
	if len(list.Items) != 2 || list.Items[0].Id != onlyCredited.Id || list.Items[1].EventTypes[0] != "deposit.*" {
		t.Errorf("list %+v; want both, newest first", list.Items)
	}
	if r := op.Do(http.MethodGet, path, nil); r.Status != http.StatusOK {
		t.Errorf("get: %d %s", r.Status, r.Body)
	}
	if r := op.Do(http.MethodGet, platformWebhooks+"/"+d.createWebhook(t, orgURL, "creative.approved").Id.String(), nil); r.Status != http.StatusNotFound {
		t.Errorf("an organization's endpoint through the platform's path: %d %s", r.Status, r.Body)
	}
	var deliveries api.WebhookDeliveryList
	op.Do(http.MethodGet, path+"/deliveries", nil).JSON(t, &deliveries)
	if len(deliveries.Items) != 2 {
		t.Fatalf("deliveries %+v; want 2", deliveries.Items)
	}
	i := slices.IndexFunc(deliveries.Items, func(d api.WebhookDelivery) bool { return d.EventType == "deposit.cancelled" })
	if i < 0 {
		t.Fatalf("deliveries %+v; want one of deposit.cancelled", deliveries.Items)
	}
	cancelled := waitFor(t, op, path+"/deliveries", deliveries.Items[i].Id, api.WebhookDeliveryStatusSucceeded)
	waitFor(t, op, path+"/deliveries", deliveries.Items[1-i].Id, api.WebhookDeliveryStatusSucceeded)

	r = op.Do(http.MethodPost, path+"/rotate-secret", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("rotate: %d %s", r.Status, r.Body)
	}
	var rotated api.WebhookSecretRotation
	r.JSON(t, &rotated)
	r = op.Do(http.MethodPost, path+"/deliveries/"+cancelled.Id.String()+"/redeliver", nil)
	if r.Status != http.StatusAccepted {
		t.Fatalf("redeliver: %d %s", r.Status, r.Body)
	}
	again := nextRequest(t, all)
	verify(t, rotated.Secret, again)
	verify(t, every.Secret, again)
	var redelivery api.WebhookDelivery
	r.JSON(t, &redelivery)
	if again.id != cancelled.Id.String() || redelivery.MessageId != cancelled.Id {
		t.Errorf("redelivered webhook-id %s, message %s; want %s", again.id, redelivery.MessageId, cancelled.Id)
	}
	waitFor(t, op, path+"/deliveries", redelivery.Id, api.WebhookDeliveryStatusSucceeded)
	r = op.Do(http.MethodPost, path+"/test", nil)
	if r.Status != http.StatusAccepted {
		t.Fatalf("test: %d %s", r.Status, r.Body)
	}
	test := nextRequest(t, all)
	verify(t, rotated.Secret, test)
	if !strings.Contains(string(test.body), `"type":"webhook.test"`) {
		t.Errorf("test body %s", test.body)
	}

	r = op.Do(http.MethodPatch, path, map[string]any{"eventTypes": []string{"deposit.credited", "deposit.expired"}, "enabled": false})
	var changed api.PlatformWebhookEndpoint
	r.JSON(t, &changed)
	if r.Status != http.StatusOK || len(changed.EventTypes) != 2 || changed.Enabled {
		t.Errorf("update: %d %s", r.Status, r.Body)
	}
	for name, body := range map[string]any{
		"a creative type":   map[string]any{"url": allURL, "eventTypes": []string{"creative.approved"}},
		"not a deposit one": map[string]any{"url": allURL, "eventTypes": []string{"deposits.*"}},
	} {
		if r := op.Do(http.MethodPost, platformWebhooks, body, key(uuid.NewString())); r.Status != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %s; want 422", name, r.Status, r.Body)
		}
	}
	if r := d.clients["admin"].Do(http.MethodPost, webhooksURL(d.org), map[string]any{"url": allURL, "eventTypes": []string{"deposit.*"}},
		key(uuid.NewString())); r.Status != http.StatusUnprocessableEntity {
		t.Errorf("an organization's endpoint for deposit events: %d %s; want 422", r.Status, r.Body)
	}
	if r := op.Do(http.MethodDelete, path, nil); r.Status != http.StatusNoContent {
		t.Errorf("delete: %d %s", r.Status, r.Body)
	}
	if r := op.Do(http.MethodDelete, path, nil); r.Status != http.StatusNotFound {
		t.Errorf("delete again: %d %s", r.Status, r.Body)
	}
}

// TestWebhookToolsAndPlatformWebhooks_MalformedParametersAre422: the new
// operations refuse a malformed id or limit with 422 naming it, before
// anything is read (the operator's past the operator gate).
func TestWebhookToolsAndPlatformWebhooks_MalformedParametersAre422(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	execDepositSQL(t, d.env, "UPDATE users SET operator = true WHERE id = $1", d.users["admin"])
	admin := d.clients["admin"]
	good := uuid.NewString()
	for _, tc := range []struct{ method, path string }{
		{http.MethodPost, webhooksURL(d.org) + "/not-a-uuid/test"},
		{http.MethodPost, webhooksURL(d.org) + "/" + good + "/deliveries/not-a-uuid/redeliver"},
		{http.MethodGet, platformWebhooks + "?limit=0"},
		{http.MethodGet, platformWebhooks + "/not-a-uuid"},
		{http.MethodDelete, platformWebhooks + "/not-a-uuid"},
		{http.MethodGet, platformWebhooks + "/not-a-uuid/deliveries"},
		{http.MethodPost, platformWebhooks + "/not-a-uuid/rotate-secret"},
		{http.MethodPost, platformWebhooks + "/not-a-uuid/test"},
		{http.MethodPost, platformWebhooks + "/" + good + "/deliveries/not-a-uuid/redeliver"},
	} {
		if r := admin.Do(tc.method, tc.path, nil); r.Status != http.StatusUnprocessableEntity {
			t.Errorf("%s %s: %d %s; want 422", tc.method, tc.path, r.Status, r.Body)
		}
	}
}
