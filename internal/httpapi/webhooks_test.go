package httpapi_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"creativeapi/gen/api"
	"creativeapi/internal/events"
	"creativeapi/internal/httpapi"
	"creativeapi/internal/review"
	"creativeapi/internal/testenv"
	"creativeapi/internal/webhooks"
)

func webhooksURL(org uuid.UUID) string { return "/api/v1/organizations/" + org.String() + "/webhooks" }

func webhookURL(org, id uuid.UUID) string { return webhooksURL(org) + "/" + id.String() }

// productionEnv is a server without DEV_MODE: webhook URLs must be public https.
var productionEnv = testenv.Options{Env: map[string]string{"DEV_MODE": "false", "TREASURY_ADDRESS": ""}}

// createWebhook adds an endpoint as the desk's admin and returns the answer.
func (d *reviewDesk) createWebhook(t *testing.T, url string, types ...string) api.NewWebhookEndpoint {
	t.Helper()
	r := d.clients["admin"].Do(http.MethodPost, webhooksURL(d.org), map[string]any{"url": url, "eventTypes": types},
		key(uuid.NewString()))
	if r.Status != http.StatusCreated {
		t.Fatalf("create webhook %s: %d %s", url, r.Status, r.Body)
	}
	var ep api.NewWebhookEndpoint
	r.JSON(t, &ep)
	return ep
}

func (d *reviewDesk) deliveries(t *testing.T, endpoint uuid.UUID) api.WebhookDeliveryList {
	t.Helper()
	r := d.clients["admin"].Do(http.MethodGet, webhookURL(d.org, endpoint)+"/deliveries", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("deliveries: %d %s", r.Status, r.Body)
	}
	var out api.WebhookDeliveryList
	r.JSON(t, &out)
	return out
}

// startDelivery runs the webhook workers on the desk's database, retrying
// once at once; publish hands the events written so far to them.
func startDelivery(t *testing.T, d *reviewDesk, allowPrivate bool) (publish func()) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc, err := webhooks.New(d.env.DB.Store, webhooks.Config{
		AllowPrivate: allowPrivate, Schedule: []time.Duration{time.Millisecond}, Jitter: func(d time.Duration) time.Duration { return d },
		FetchPollInterval: 20 * time.Millisecond, Timeout: 2 * time.Second,
	}, log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopCtx, stop := context.WithTimeout(context.Background(), 5*time.Second)
		defer stop()
		_ = svc.Stop(stopCtx)
		cancel()
	})
	pub := events.NewPublisher(d.env.DB.Store, events.PublisherConfig{}, svc.Fanout, log)
	return func() {
		if _, err := pub.PublishOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// waitDelivery reads the endpoint's deliveries through the API until the
// only one is in status want, or fails after a generous bound.
func waitDelivery(t *testing.T, d *reviewDesk, endpoint uuid.UUID, want api.WebhookDeliveryStatus) api.WebhookDelivery {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		list := d.deliveries(t, endpoint)
		if len(list.Items) == 1 && list.Items[0].Status == want {
			return list.Items[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries %+v; want one %s", list.Items, want)
		}
		<-time.After(20 * time.Millisecond)
	}
}

func TestWebhooks_AnApprovedCreativeReachesAnEndpointAddedThroughTheAPI(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	publish := startDelivery(t, d, true)
	var verifier atomic.Pointer[standardwebhooks.Webhook]
	type got struct {
		id       string
		verified error
		body     string
	}
	received := make(chan got, 10)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		received <- got{r.Header.Get("webhook-id"), verifier.Load().Verify(body, r.Header), string(body)}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rcv.Close)

	ep := d.createWebhook(t, rcv.URL+"/hook", "creative.approved")
	wh, err := standardwebhooks.NewWebhook(ep.Secret)
	if err != nil {
		t.Fatal(err)
	}
	verifier.Store(wh)
	id := d.creative(t, creativeSpec{status: review.StatusInReview, versions: 1})
	if r := d.act("reviewer", id, map[string]any{"action": "approve"}); r.Status != http.StatusOK {
		t.Fatalf("approve: %d %s", r.Status, r.Body)
	}
	publish()

	var g got
	select {
	case g = <-received:
	case <-time.After(20 * time.Second):
		t.Fatal("the receiver got nothing")
	}
	if g.verified != nil {
		t.Fatalf("the delivery does not verify with the secret of the create answer: %v", g.verified)
	}
	if !strings.Contains(g.body, `"type":"creative.approved"`) || !strings.Contains(g.body, id.String()) {
		t.Fatalf("payload %s; want the approved creative", g.body)
	}
	delivery := waitDelivery(t, d, ep.Id, api.WebhookDeliveryStatusSucceeded)
	var seq int64
	if err := d.env.DB.Pool.QueryRow(context.Background(), "SELECT seq FROM outbox_events WHERE type = 'creative.approved'").Scan(&seq); err != nil {
		t.Fatal(err)
	}
	if delivery.Id.String() != g.id || delivery.EventId != seq || delivery.EventType != "creative.approved" {
		t.Errorf("delivery %s of event %d (%s); want webhook-id %s, event %d", delivery.Id, delivery.EventId, delivery.EventType, g.id, seq)
	}
	if len(delivery.Attempts) != 1 || delivery.Attempts[0].Attempt != 1 || delivery.Attempts[0].ResponseStatus.MustGet() != 204 ||
		delivery.Attempts[0].Error.IsSpecified() && !delivery.Attempts[0].Error.IsNull() || delivery.FinishedAt.IsNull() {
		t.Errorf("delivery %+v; want one attempt answered 204, finished", delivery)
	}
}

func TestWebhooks_ANameThatResolvesToLoopbackGetsAFailedAttemptNeverAConnection(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t, productionEnv)
	publish := startDelivery(t, d, false)
	var conns atomic.Int32
	rcv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))
	rcv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	rcv.StartTLS()
	t.Cleanup(rcv.Close)
	_, port, _ := net.SplitHostPort(rcv.Listener.Addr().String())

	// A host name passes when stored: it is checked on the address dialled.
	ep := d.createWebhook(t, "https://localhost:"+port+"/hook", "creative.approved")
	id := d.creative(t, creativeSpec{status: review.StatusInReview, versions: 1})
	if r := d.act("reviewer", id, map[string]any{"action": "approve"}); r.Status != http.StatusOK {
		t.Fatalf("approve: %d %s", r.Status, r.Body)
	}
	publish()
	delivery := waitDelivery(t, d, ep.Id, api.WebhookDeliveryStatusFailed)
	if len(delivery.Attempts) != 2 {
		t.Fatalf("attempts %+v; want 2 (the first and its one retry)", delivery.Attempts)
	}
	for _, a := range delivery.Attempts {
		if !a.ResponseStatus.IsNull() || !strings.Contains(a.Error.MustGet(), "not public") {
			t.Errorf("attempt %d: status %v error %v; want no answer, refused as not public", a.Attempt, a.ResponseStatus, a.Error)
		}
	}
	if n := conns.Load(); n != 0 {
		t.Fatalf("the receiver on loopback saw %d connections; want none", n)
	}
}

func TestWebhooks_URLsThatAreNotPublicHTTPSAreRefusedWithTheReason(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t, productionEnv)
	ep := d.createWebhook(t, "https://hooks.example.test/in", "creative.approved")
	for _, tc := range []struct{ url, message string }{
		{"https://127.0.0.1/in", "Must not point to a private, loopback or link-local address."},
		{"https://10.0.0.1/in", "Must not point to a private, loopback or link-local address."},
		{"https://[::1]:8443/in", "Must not point to a private, loopback or link-local address."},
		{"https://169.254.169.254/latest/meta-data", "Must not point to a private, loopback or link-local address."},
		{"https://[::127.0.0.1]/", "Must not point to a private, loopback or link-local address."},
		{"https://[::ffff:0:7f00:1]/", "Must not point to a private, loopback or link-local address."},
		{"https://[2002:7f00:1::]/", "Must not point to a private, loopback or link-local address."},
		{"https://[fec0::1]/", "Must not point to a private, loopback or link-local address."},
		{"https://[2001:0:5db8:1234:0:ffff:80ff:fffe]/", "Must not point to a private, loopback or link-local address."},
		{"https://[64:ff9b::a00:1]/", "Must not point to a private, loopback or link-local address."},
		{"http://hooks.example.test/in", "Must be an https URL."},
		{"https://user:pass@hooks.example.test/in", "Must not carry credentials."},
		{"hooks.example.test/in", "Must be an absolute URL."},
	} {
		for name, r := range map[string]*testenv.Response{
			"create": d.clients["admin"].Do(http.MethodPost, webhooksURL(d.org),
				map[string]any{"url": tc.url, "eventTypes": []string{"creative.approved"}}, key(uuid.NewString())),
			"update": d.clients["admin"].Do(http.MethodPatch, webhookURL(d.org, ep.Id), map[string]any{"url": tc.url}),
		} {
			only(t, r, fieldError{"url", "invalid_value"})
			if msg := r.Problem(t).FieldErrors[0].Message; msg != tc.message {
				t.Errorf("%s %s: %q; want %q", name, tc.url, msg, tc.message)
			}
		}
	}
	if n := count(t, d.env, "SELECT count(*) FROM webhook_endpoints WHERE url <> 'https://hooks.example.test/in'"); n != 0 {
		t.Fatalf("%d refused URLs were stored", n)
	}
}

func TestWebhooks_DevelopmentServersAllowLoopbackAndHTTP(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	for _, url := range []string{"http://127.0.0.1:9999/in", "https://10.0.0.1/in"} {
		d.createWebhook(t, url, "creative.approved")
	}
}

func TestWebhooks_TheSecretIsShownOnlyInTheCreateAnswer(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	k := key(uuid.NewString())
	body := map[string]any{"url": "https://hooks.example.test/in", "eventTypes": []string{"creative.approved", "creative.archived"}}
	first := d.clients["admin"].Do(http.MethodPost, webhooksURL(d.org), body, k)
	if first.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", first.Status, first.Body)
	}
	var ep api.NewWebhookEndpoint
	first.JSON(t, &ep)
	if !regexp.MustCompile(`^whsec_[A-Za-z0-9+/]{32}$`).MatchString(ep.Secret) || !ep.Enabled || !ep.DisabledReason.IsNull() ||
		first.Header.Get("Location") != webhookURL(d.org, ep.Id) {
		t.Fatalf("created %+v at %q", ep, first.Header.Get("Location"))
	}
	// The lost answer of a create, retried under its key, is the same answer.
	again := d.clients["admin"].Do(http.MethodPost, webhooksURL(d.org), body, k)
	if again.Status != http.StatusCreated || string(again.Body) != string(first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %s", again.Status, again.Body)
	}
	for _, path := range []string{webhookURL(d.org, ep.Id), webhooksURL(d.org)} {
		r := d.clients["admin"].Do(http.MethodGet, path, nil)
		if r.Status != http.StatusOK || strings.Contains(string(r.Body), "secret") || strings.Contains(string(r.Body), ep.Secret) {
			t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
		}
	}
}

func TestWebhooks_ListsPageNewestFirst(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	var ids []uuid.UUID
	for _, url := range []string{"https://a.example.test", "https://b.example.test", "https://c.example.test"} {
		ids = append([]uuid.UUID{d.createWebhook(t, url, "creative.created").Id}, ids...)
	}
	var seen []uuid.UUID
	path := webhooksURL(d.org) + "?limit=2"
	for pages := 0; ; pages++ {
		r := d.clients["admin"].Do(http.MethodGet, path, nil)
		var page api.WebhookEndpointList
		r.JSON(t, &page)
		for _, ep := range page.Items {
			seen = append(seen, ep.Id)
		}
		if page.NextCursor.IsNull() {
			break
		}
		if pages > 2 {
			t.Fatal("the pages do not end")
		}
		path = webhooksURL(d.org) + "?limit=2&cursor=" + page.NextCursor.MustGet()
	}
	if !slices.Equal(seen, ids) {
		t.Fatalf("listed %v; want %v, newest first", seen, ids)
	}
	// A cursor it did not make is refused, as every list refuses it; the
	// endpoints' and the deliveries' cursors are not each other's.
	endpointsCursor := base64.RawURLEncoding.EncodeToString([]byte("w1.1700000000000000." + uuid.NewString()))
	deliveriesCursor := base64.RawURLEncoding.EncodeToString([]byte("wd1.1700000000000000." + uuid.NewString()))
	for _, bad := range []string{"garbage", base64.RawURLEncoding.EncodeToString([]byte("c1.5")), deliveriesCursor} {
		only(t, d.clients["admin"].Do(http.MethodGet, webhooksURL(d.org)+"?cursor="+bad, nil), fieldError{"cursor", "invalid_format"})
	}
	for _, bad := range []string{"garbage", endpointsCursor} {
		only(t, d.clients["admin"].Do(http.MethodGet, webhookURL(d.org, ids[0])+"/deliveries?cursor="+bad, nil), fieldError{"cursor", "invalid_format"})
	}
	if r := d.clients["admin"].Do(http.MethodGet, webhookURL(d.org, ids[0])+"/deliveries?cursor="+deliveriesCursor, nil); r.Status != http.StatusOK {
		t.Fatalf("a deliveries cursor: %d %s", r.Status, r.Body)
	}
}

func TestWebhooks_UpdateChangesWhatIsSentAndReenablingClearsTheReason(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	ep := d.createWebhook(t, "https://hooks.example.test/in", "creative.approved")
	patch := func(body any) api.WebhookEndpoint {
		t.Helper()
		r := d.clients["admin"].Do(http.MethodPatch, webhookURL(d.org, ep.Id), body)
		if r.Status != http.StatusOK {
			t.Fatalf("patch %v: %d %s", body, r.Status, r.Body)
		}
		var out api.WebhookEndpoint
		r.JSON(t, &out)
		return out
	}
	got := patch(map[string]any{"url": "https://hooks.example.test/v2", "eventTypes": []string{"creative.submitted", "creative.approved"}})
	if got.Url != "https://hooks.example.test/v2" || !slices.Equal(got.EventTypes, []api.WebhookEventType{"creative.submitted", "creative.approved"}) ||
		!got.Enabled || !got.UpdatedAt.After(ep.UpdatedAt) {
		t.Fatalf("after the change: %+v", got)
	}
	if same := patch(map[string]any{"url": "https://hooks.example.test/v2"}); !same.UpdatedAt.Equal(got.UpdatedAt) {
		t.Fatalf("a change that changes nothing moved updatedAt: %s → %s", got.UpdatedAt, same.UpdatedAt)
	}
	// The service turned it off: the receiver answered 410.
	if _, err := d.env.DB.Pool.Exec(context.Background(), "UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'gone' WHERE id = $1", ep.Id); err != nil {
		t.Fatal(err)
	}
	if off := patch(map[string]any{"enabled": false}); off.Enabled || off.DisabledReason.MustGet() != "gone" {
		t.Fatalf("switched off again: %+v; want the reason kept", off)
	}
	if on := patch(map[string]any{"enabled": true}); !on.Enabled || !on.DisabledReason.IsNull() {
		t.Fatalf("re-enabled: %+v; want no reason", on)
	}
	if off := patch(map[string]any{"enabled": false}); off.Enabled || !off.DisabledReason.IsNull() {
		t.Fatalf("switched off by an admin: %+v; want no reason", off)
	}
}

func TestWebhooks_RequestsOutsideTheSchemaAreRefusedByField(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	ep := d.createWebhook(t, "https://hooks.example.test/in", "creative.approved")
	for name, tc := range map[string]struct {
		body any
		want fieldError
	}{
		"no event type":             {map[string]any{"url": "https://h.example.test", "eventTypes": []string{}}, fieldError{"eventTypes", "too_short"}},
		"a deposit event":           {map[string]any{"url": "https://h.example.test", "eventTypes": []string{"deposit.credited"}}, fieldError{"eventTypes[0]", "invalid_value"}},
		"a type twice":              {map[string]any{"url": "https://h.example.test", "eventTypes": []string{"creative.approved", "creative.approved"}}, fieldError{"eventTypes", "invalid_value"}},
		"no url":                    {map[string]any{"eventTypes": []string{"creative.approved"}}, fieldError{"url", "required"}},
		"a space in the url":        {map[string]any{"url": "https://h.example.test/a b", "eventTypes": []string{"creative.approved"}}, fieldError{"url", "invalid_format"}},
		"the secret cannot be sent": {map[string]any{"url": "https://h.example.test", "eventTypes": []string{"creative.approved"}, "secret": "whsec_x"}, fieldError{"secret", "unknown_field"}},
	} {
		t.Run(name, func(t *testing.T) {
			only(t, d.clients["admin"].Do(http.MethodPost, webhooksURL(d.org), tc.body, key(uuid.NewString())), tc.want)
		})
	}
	only(t, d.clients["admin"].Do(http.MethodPatch, webhookURL(d.org, ep.Id), map[string]any{"enabled": "yes"}), fieldError{"enabled", "invalid_type"})
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		only(t, d.clients["admin"].Do(method, webhooksURL(d.org)+"/not-a-uuid", nil), fieldError{"webhookId", "invalid_format"})
	}
	only(t, d.clients["admin"].Do(http.MethodGet, webhooksURL(d.org)+"/not-a-uuid/deliveries", nil), fieldError{"webhookId", "invalid_format"})
}

func TestWebhooks_AnEndpointIsVisibleOnlyInItsOrganization(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	ep := d.createWebhook(t, "https://hooks.example.test/in", "creative.approved")
	// The desk's admin is an admin of a second organization too: the
	// endpoint is not there.
	second := d.env.DB.Org(t, "Second Org")
	d.env.DB.Member(t, second, d.users["admin"], "admin")
	admin := d.clients["admin"]
	for _, r := range []*testenv.Response{
		admin.Do(http.MethodGet, webhookURL(second, ep.Id), nil),
		admin.Do(http.MethodPatch, webhookURL(second, ep.Id), map[string]any{"enabled": false}),
		admin.Do(http.MethodGet, webhookURL(second, ep.Id)+"/deliveries", nil),
		admin.Do(http.MethodDelete, webhookURL(second, ep.Id), nil),
		admin.Do(http.MethodGet, webhookURL(d.org, uuid.New()), nil),
	} {
		if r.Status != http.StatusNotFound || r.Problem(t).Code != "not_found" {
			t.Fatalf("got %d %s; want 404", r.Status, r.Body)
		}
	}
	if r := admin.Do(http.MethodGet, webhooksURL(second), nil); r.Status != http.StatusOK || strings.Contains(string(r.Body), ep.Id.String()) {
		t.Fatalf("the second organization's list: %d %s", r.Status, r.Body)
	}
}

func TestWebhooks_DeleteRemovesTheEndpointAndItsDeliveries(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	publish := startDelivery(t, d, true)
	var mu sync.Mutex
	hits := 0
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(rcv.Close)
	ep := d.createWebhook(t, rcv.URL, "creative.approved")
	id := d.creative(t, creativeSpec{status: review.StatusInReview, versions: 1})
	if r := d.act("reviewer", id, map[string]any{"action": "approve"}); r.Status != http.StatusOK {
		t.Fatalf("approve: %d %s", r.Status, r.Body)
	}
	publish()
	waitDelivery(t, d, ep.Id, api.WebhookDeliveryStatusSucceeded)
	admin := d.clients["admin"]
	if r := admin.Do(http.MethodDelete, webhookURL(d.org, ep.Id), nil); r.Status != http.StatusNoContent || len(r.Body) != 0 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	for _, r := range []*testenv.Response{
		admin.Do(http.MethodGet, webhookURL(d.org, ep.Id), nil),
		admin.Do(http.MethodGet, webhookURL(d.org, ep.Id)+"/deliveries", nil),
		admin.Do(http.MethodDelete, webhookURL(d.org, ep.Id), nil),
	} {
		if r.Status != http.StatusNotFound {
			t.Fatalf("after the delete: %d %s", r.Status, r.Body)
		}
	}
	if n := count(t, d.env, "SELECT count(*) FROM webhook_deliveries"); n != 0 {
		t.Fatalf("%d deliveries left", n)
	}
}

func TestWebhooks_TheEventTypesAreTheCreativeEvents(t *testing.T) {
	t.Parallel()
	spec, err := httpapi.Spec()
	if err != nil {
		t.Fatal(err)
	}
	var inSpec []string
	for _, v := range spec.Components.Schemas["WebhookEventType"].Value.Enum {
		inSpec = append(inSpec, v.(string))
	}
	var inCode []string
	for _, ty := range events.CreativeTypes {
		inCode = append(inCode, string(ty))
	}
	if !slices.Equal(inSpec, inCode) {
		t.Fatalf("openapi.yaml's WebhookEventType %v; events.CreativeTypes %v", inSpec, inCode)
	}
}

// TestWebhooks_ARotatedSecretSignsBesideTheNewOneFor24Hours: after
// rotate-secret, deliveries carry two signatures (Standard Webhooks'
// space-separated list) that the library verifies with either secret; once
// the overlap ends, only the new secret signs.
func TestWebhooks_ARotatedSecretSignsBesideTheNewOneFor24Hours(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	publish := startDelivery(t, d, true)
	type got struct {
		body   []byte
		header http.Header
	}
	received := make(chan got, 10)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		received <- got{body, r.Header.Clone()}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rcv.Close)
	ep := d.createWebhook(t, rcv.URL+"/hook", "creative.approved")

	rotate := func(who string) *testenv.Response {
		return d.clients[who].Do(http.MethodPost, webhookURL(d.org, ep.Id)+"/rotate-secret", nil)
	}
	if r := rotate("reviewer"); r.Status != http.StatusForbidden {
		t.Fatalf("a reviewer rotates: %d %s", r.Status, r.Body)
	}
	if r := rotate("outsider"); r.Status != http.StatusNotFound {
		t.Fatalf("an outsider rotates: %d %s", r.Status, r.Body)
	}
	if r := d.clients["admin"].Do(http.MethodPost, webhooksURL(d.org)+"/not-a-uuid/rotate-secret", nil); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("a malformed endpoint id: %d %s", r.Status, r.Body)
	}
	r := rotate("admin")
	if r.Status != http.StatusOK {
		t.Fatalf("rotate: %d %s", r.Status, r.Body)
	}
	var rotated api.WebhookSecretRotation
	r.JSON(t, &rotated)
	if rotated.Secret == ep.Secret || time.Until(rotated.PreviousSecretExpiresAt) < 23*time.Hour {
		t.Fatalf("rotation %+v", rotated)
	}

	deliver := func() got {
		t.Helper()
		id := d.creative(t, creativeSpec{status: review.StatusInReview, versions: 1})
		if r := d.act("reviewer", id, map[string]any{"action": "approve"}); r.Status != http.StatusOK {
			t.Fatalf("approve: %d %s", r.Status, r.Body)
		}
		publish()
		select {
		case g := <-received:
			return g
		case <-time.After(20 * time.Second):
			t.Fatal("the receiver got nothing")
		}
		return got{}
	}
	verifies := func(secret string, g got) bool {
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			t.Fatal(err)
		}
		return wh.Verify(g.body, g.header) == nil
	}
	during := deliver()
	if n := len(strings.Fields(during.header.Get("webhook-signature"))); n != 2 || !verifies(rotated.Secret, during) || !verifies(ep.Secret, during) {
		t.Fatalf("during the overlap: %d signatures (%q); want two, each verifying with its secret", n, during.header.Get("webhook-signature"))
	}

	// The overlap ends.
	if _, err := d.env.DB.Pool.Exec(context.Background(), "UPDATE webhook_endpoints SET previous_secret_until = now() - interval '1 second' WHERE id = $1", ep.Id); err != nil {
		t.Fatal(err)
	}
	after := deliver()
	if n := len(strings.Fields(after.header.Get("webhook-signature"))); n != 1 || !verifies(rotated.Secret, after) || verifies(ep.Secret, after) {
		t.Fatalf("after the overlap: %d signatures; want the new secret's alone", n)
	}
}

func TestWebhooks_ShareEventsReachAnEndpointWithoutTheToken(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	publish := startDelivery(t, d, true)
	received := make(chan string, 10)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		received <- string(body)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rcv.Close)
	d.createWebhook(t, rcv.URL+"/hook", "share.created", "share.revoked")
	c := d.creative(t, creativeSpec{versions: 1})
	r := d.createShare(t, "admin", shareOf(c), key("hooked-share"))
	if r.Status != http.StatusCreated {
		t.Fatalf("share: %d %s", r.Status, r.Body)
	}
	var sh api.Share
	r.JSON(t, &sh)
	token, _ := sh.Token.Get()
	if got := d.clients["admin"].Do(http.MethodDelete, sharesURL(d.org)+"/"+sh.Id.String(), nil); got.Status != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", got.Status, got.Body)
	}
	publish()
	// Deliveries run in parallel: either may come first.
	got := map[string]bool{}
	for range 2 {
		select {
		case body := <-received:
			var p struct{ Type string }
			_ = json.Unmarshal([]byte(body), &p)
			got[p.Type] = true
			if !strings.Contains(body, sh.Id.String()) || strings.Contains(body, token) {
				t.Errorf("delivery %s; want share %s, without its token", body, sh.Id)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("the receiver got %v; want share.created and share.revoked", got)
		}
	}
	if !got["share.created"] || !got["share.revoked"] {
		t.Errorf("delivered %v; want share.created and share.revoked", got)
	}
}
