package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/internal/httpapi"
	"creativeapi/internal/testenv"
)

// The live stream (openapi.yaml streamMyEvents; docs/events.md, "The live
// stream"), through the real server with its publisher and stream hub.

const streamPath = "/api/v1/me/events"

// streamDesk is a member of an organization who creates creatives there,
// beside an organization (and a user) whose events are not theirs.
type streamDesk struct {
	env       *testenv.Env
	c         *testenv.Client
	user      uuid.UUID
	org       uuid.UUID
	other     *testenv.Client
	otherUser uuid.UUID
	others    uuid.UUID
}

func newStreamDesk(t *testing.T, env *testenv.Env) *streamDesk {
	t.Helper()
	c, user := env.SignedIn(t, "Stella Stream")
	org := env.DB.Org(t, "Streamed Ads")
	env.DB.Member(t, org, user, "author")
	other, otherUser := env.SignedIn(t, "Otto Other")
	otherOrg := env.DB.Org(t, "Other Ads")
	env.DB.Member(t, otherOrg, otherUser, "author")
	return &streamDesk{env: env, c: c, user: user, org: org, other: other, otherUser: otherUser, others: otherOrg}
}

// create creates a creative through the API as c in org and returns its id.
func (d *streamDesk) create(t *testing.T, c *testenv.Client, org uuid.UUID, title string) string {
	t.Helper()
	r := c.Do(http.MethodPost, creativesURL(org), newCreativeBody(title), key(uuid.NewString()))
	if r.Status != http.StatusCreated {
		t.Fatalf("create %q: %d %s", title, r.Status, r.Body)
	}
	var body struct{ ID string }
	r.JSON(t, &body)
	return body.ID
}

// wantCreated reads the next event and checks it is the creation of id.
func wantCreated(t *testing.T, s *testenv.Stream, id string) testenv.Message {
	t.Helper()
	m, ok := s.NextEvent()
	if !ok {
		t.Fatalf("the stream ended; want the creation of %s", id)
	}
	var p struct {
		Type string
		Data struct{ ID string }
	}
	if err := json.Unmarshal([]byte(m.Data), &p); err != nil {
		t.Fatal(err)
	}
	if m.Event != "creative.created" || p.Type != "creative.created" || p.Data.ID != id {
		t.Fatalf("event %s %s of %s; want creative.created of %s", m.ID, m.Event, p.Data.ID, id)
	}
	return m
}

func TestAResumedStreamMissesNothingBetweenResumeAndLive(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Events: true})
	d := newStreamDesk(t, env)

	first := d.c.Stream(streamPath)
	if m, _ := first.Next(); m.Retry != "2000" {
		t.Fatalf("first message %+v; want the retry line", m)
	}
	ids := []string{d.create(t, d.c, d.org, "One"), d.create(t, d.c, d.org, "Two")}
	seen := wantCreated(t, first, ids[0])
	first.Close() // the connection drops after the first event

	// While away: two more of ours, and one of an organization the caller
	// is not in (never theirs).
	ids = append(ids, d.create(t, d.c, d.org, "Three"))
	d.create(t, d.other, d.others, "Not yours")
	ids = append(ids, d.create(t, d.c, d.org, "Four"))

	resumed := d.c.Stream(streamPath, testenv.Header{Name: "Last-Event-ID", Value: seen.ID})
	for _, id := range ids[1:] {
		wantCreated(t, resumed, id)
	}
	// Live after the backlog, in order.
	d.create(t, d.other, d.others, "Still not yours")
	live := d.create(t, d.c, d.org, "Five")
	last := wantCreated(t, resumed, live)

	t.Run("lastEventId resumes a new EventSource", func(t *testing.T) {
		s := d.c.Stream(streamPath + "?lastEventId=" + seen.ID)
		wantCreated(t, s, ids[1])
	})
	t.Run("Last-Event-ID wins over lastEventId", func(t *testing.T) {
		s := d.c.Stream(streamPath+"?lastEventId="+seen.ID, testenv.Header{Name: "Last-Event-ID", Value: last.ID})
		next := d.create(t, d.c, d.org, "Six")
		wantCreated(t, s, next)
	})
	t.Run("a malformed Last-Event-ID is 422", func(t *testing.T) {
		r := d.c.Do(http.MethodGet, streamPath, nil, testenv.Header{Name: "Last-Event-ID", Value: "abc"})
		if p := r.Problem(t); r.Status != http.StatusUnprocessableEntity || p.Code != "invalid_request" {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
	})
}

func TestTheStreamCarriesTheCallersDepositEvents(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Events: true})
	d := newStreamDesk(t, env)
	s := d.c.Stream(streamPath)
	s.Next() // retry: the stream is open
	// A deposit's move, as the chain watcher writes it (the watcher's own
	// tests prove it writes this event): another user's first, never ours.
	for _, owner := range []uuid.UUID{d.otherUser, d.user} {
		writeDepositEvent(t, env, owner)
	}
	m, _ := s.NextEvent()
	if m.Event != "deposit.confirming" || !json.Valid([]byte(m.Data)) {
		t.Fatalf("got %+v", m)
	}
	var p struct{ Data struct{ ID string } }
	_ = json.Unmarshal([]byte(m.Data), &p)
	if p.Data.ID != d.user.String() {
		t.Fatalf("got the deposit event of %s; want only the caller's (%s)", p.Data.ID, d.user)
	}
}

func writeDepositEvent(t *testing.T, env *testenv.Env, owner uuid.UUID) {
	t.Helper()
	if _, err := env.DB.Pool.Exec(context.Background(), `INSERT INTO outbox_events (type, user_id, payload) VALUES ('deposit.confirming', $1, $2)`,
		owner, depositPayload(owner)); err != nil {
		t.Fatal(err)
	}
}

// depositPayload is an AccountDeposit event whose deposit id is the owner's
// id, so the test can tell whose it is.
func depositPayload(owner uuid.UUID) string {
	return fmt.Sprintf(`{"type":"deposit.confirming","timestamp":"2026-11-20T10:15:00Z","data":{"id":%q,
		"address":"TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7","network":"TRC20","networkLabel":"TRON (TRC20)",
		"requestedAmount":{"amountMinor":"100004217","currency":"USDT","scale":6},
		"creditedAmount":{"amountMinor":"0","currency":"USDT","scale":6},"confirmations":7,"confirmationsRequired":19,
		"status":"confirming","transactionId":"4e3d2c1b0a99887766554433221100ffeeddccbbaa99887766554433221100ff","review":null,
		"createdAt":"2026-11-20T10:00:00Z","expiresAt":"2026-11-20T10:30:00Z"}}`, owner)
}

// TestAnEventOnOneReplicaReachesAStreamOnAnother runs two servers on one
// database, each with its own pool, listener, publisher and hub: the
// command goes to A, the stream is held by B.
func TestAnEventOnOneReplicaReachesAStreamOnAnother(t *testing.T) {
	t.Parallel()
	a := testenv.New(t, testenv.Options{Events: true})
	b := a.Replica(t, 5, testenv.Options{Events: true})
	d := newStreamDesk(t, a)
	onB := b.Client(t)
	onB.CopySession(d.c)
	s := onB.Stream(streamPath)
	s.Next()
	id := d.create(t, d.c, d.org, "Made on A")
	wantCreated(t, s, id)
}

func TestTheStreamSendsHeartbeats(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Env: map[string]string{"STREAM_HEARTBEAT": "50ms"}})
	c, _ := env.SignedIn(t, "Hank Heartbeat")
	s := c.Stream(streamPath)
	if s.Header().Get("Cache-Control") != "no-store" || s.Header().Get("X-Accel-Buffering") != "no" {
		t.Errorf("headers %v; want no-store and no proxy buffering", s.Header())
	}
	for beats := 0; beats < 3; {
		m, ok := s.Next()
		if !ok {
			t.Fatal("the stream ended")
		}
		if len(m.Comments) == 1 && m.Comments[0] == "heartbeat" {
			beats++
		}
	}
}

func TestSigningOutEndsTheSessionsStreams(t *testing.T) {
	t.Parallel()
	// The default heartbeat (15 s): the sign-out's notice ends the stream,
	// not the periodic check.
	env := testenv.New(t, testenv.Options{Events: true})
	c, user := env.SignedIn(t, "Sigrid Signout")
	otherSession := env.SessionFor(t, user)
	s := c.Stream(streamPath)
	kept := otherSession.Stream(streamPath)
	s.Next()
	kept.Next()
	if r := c.Do(http.MethodPost, "/api/v1/auth/sign-out", nil); r.Status != http.StatusNoContent {
		t.Fatalf("sign-out: %d %s", r.Status, r.Body)
	}
	s.Ended()
	// EventSource's reconnect is refused, which stops it.
	if r := c.Do(http.MethodGet, streamPath, nil); r.Status != http.StatusUnauthorized {
		t.Fatalf("reconnect after sign-out: %d %s", r.Status, r.Body)
	}
	// The user's other session streams on.
	writeDepositEvent(t, env, user)
	if m, ok := kept.NextEvent(); !ok || m.Event != "deposit.confirming" {
		t.Fatalf("the other session's stream: %+v, %t", m, ok)
	}
}

func TestAChangeOfMembershipsEndsTheStreamForItsResume(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Events: true, Env: map[string]string{"STREAM_HEARTBEAT": "50ms"}})
	d := newStreamDesk(t, env)
	s := d.c.Stream(streamPath)
	s.Next()
	seenID := wantCreated(t, s, d.create(t, d.c, d.org, "Before joining")).ID
	// Joining another organization, whose member writes meanwhile.
	d.env.DB.Member(t, d.others, d.user, "viewer")
	joined := d.create(t, d.other, d.others, "In the joined organization")
	s.Ended()
	resumed := d.c.Stream(streamPath, testenv.Header{Name: "Last-Event-ID", Value: seenID})
	wantCreated(t, resumed, joined)
}

func TestAUsersStreamsAreLimited(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Env: map[string]string{"STREAM_MAX_PER_USER": "2"}})
	c, _ := env.SignedIn(t, "Lim Limit")
	c.Stream(streamPath).Next()
	second := c.Stream(streamPath)
	second.Next()
	r := c.Do(http.MethodGet, streamPath, nil)
	if p := r.Problem(t); r.Status != http.StatusTooManyRequests || p.Code != "too_many_streams" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("a third stream: %d %s", r.Status, r.Body)
	}
	// Another user is not affected; a closed stream frees its place.
	other, _ := env.SignedIn(t, "Una Unaffected")
	other.Stream(streamPath).Next()
	second.Close()
	for try := 0; ; try++ {
		// The server notices the hang-up when it reads the closed connection.
		r := c.Do(http.MethodGet, streamPath, nil)
		if r.Status == http.StatusOK {
			break
		}
		if try == 100 {
			t.Fatalf("the closed stream's place was never freed: %d", r.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestHEADOfTheStreamAnswersItsHeadersAndEnds(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	token, _ := rawSession(t, env)
	r := raw(t, env, http.MethodHead, streamPath, testenv.Header{Name: "Cookie", Value: "session=" + token})
	if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "text/event-stream" || len(r.Body) != 0 {
		t.Fatalf("HEAD: %d %v %q", r.Status, r.Header, r.Body)
	}
}

// TestShutdownEndsOpenStreams serves the handler as serve does (the
// production server limits, far shorter here), so the stream also proves
// it outlives the read and write timeouts.
func TestShutdownEndsOpenStreamsAndTheStreamOutlivesTheServerTimeouts(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Events: true, Env: map[string]string{"STREAM_HEARTBEAT": "100ms"}})
	d := newStreamDesk(t, env)
	limits := httpapi.ServerLimits{ReadHeaderTimeout: time.Second, ReadTimeout: 300 * time.Millisecond,
		WriteTimeout: 300 * time.Millisecond, IdleTimeout: time.Second}
	srv := httpapi.NewHTTPServer(env.Echo, limits, slog.New(slog.NewTextHandler(io.Discard, nil)))
	srv.RegisterOnShutdown(env.Streams.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	c := d.c.At("http://" + ln.Addr().String())
	s := c.Stream(streamPath)
	opened := time.Now()
	for time.Since(opened) < 4*limits.WriteTimeout {
		if _, ok := s.Next(); !ok {
			t.Fatalf("the stream ended after %s", time.Since(opened))
		}
	}
	wantCreated(t, s, d.create(t, d.c, d.org, "After the timeouts"))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with an open stream: %v", err)
	}
	s.Ended()
	if err := <-served; err != http.ErrServerClosed {
		t.Fatalf("serve: %v", err)
	}
}

func TestShareEventsNeverReachTheMembersStreams(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Events: true})
	d := newStreamDesk(t, env)
	s := d.c.Stream(streamPath)
	if m, _ := s.Next(); m.Retry != "2000" {
		t.Fatalf("first message %+v; want the retry line", m)
	}
	first := d.create(t, d.c, d.org, "Shared")
	r := d.c.Do(http.MethodPost, "/api/v1/organizations/"+d.org.String()+"/shares",
		map[string]any{"creativeIds": []string{first}, "permission": "view"}, key(uuid.NewString()))
	if r.Status != http.StatusCreated {
		t.Fatalf("share: %d %s", r.Status, r.Body)
	}
	second := d.create(t, d.c, d.org, "After the share")
	seen := wantCreated(t, s, first)
	wantCreated(t, s, second) // live: the share.created between them is not sent
	resumed := d.c.Stream(streamPath, testenv.Header{Name: "Last-Event-ID", Value: seen.ID})
	wantCreated(t, resumed, second) // nor in the backlog
}
