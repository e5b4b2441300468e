package auth_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/auth"
	"creativeapi/internal/idempotency"
	"creativeapi/internal/requestctx"
	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// waitFor yields until cond holds (other goroutines queue up), failing
// after a while.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// authenticate runs svc.Authenticate(r) on its own goroutine; its error
// comes on the channel.
func authenticate(svc *auth.Service, r *http.Request) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, _, _, err := svc.Authenticate(r, "")
		done <- err
	}()
	return done
}

// within is the error that comes on done, failing the test with what when
// none comes in 10 s.
func within(t *testing.T, done <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s after 10 s", what)
		return nil
	}
}

func TestSessionLookupsQueuedForThePoolShareOneStatement(t *testing.T) {
	t.Parallel()
	tr := &testenv.RoundTrips{}
	d := testenv.NewDB(t, testenv.PoolOptions{MaxConns: 1, Tracer: tr})
	ctx := context.Background()
	ada, _ := d.User(t, "Ada")
	bob, _ := d.User(t, "Bob")
	adaToken, _ := d.Session(t, ada)
	bobToken, _ := d.Session(t, bob)
	revokedToken, _ := d.Session(t, bob)
	if _, err := d.Pool.Exec(ctx, `UPDATE sessions SET revoked_at = now() WHERE token_hash = $1`, auth.HashToken(revokedToken)); err != nil {
		t.Fatal(err)
	}
	status, location := int32(201), "/v1/account/deposits/x"
	if err := d.Store.Q.IdempotencyKeyInsert(ctx, db.IdempotencyKeyInsertParams{UserID: ada, Key: "k1", Fingerprint: []byte("fp"), TtlSeconds: 3600}); err != nil {
		t.Fatal(err)
	}
	if err := d.Store.Q.IdempotencyKeySetResponse(ctx, db.IdempotencyKeySetResponseParams{
		StatusCode: &status, ResponseBody: []byte(`{}`), ResponseLocation: &location, UserID: ada, Key: "k1",
	}); err != nil {
		t.Fatal(err)
	}
	svc := auth.NewService(d.Store, auth.SessionConfig{IdleTTL: time.Hour, AbsoluteTTL: 24 * time.Hour}, slog.New(slog.NewTextHandler(io.Discard, nil)))

	tests := []struct {
		name       string
		token, key string
		user       uuid.UUID // uuid.Nil: no session
		stored     bool
	}{
		{"a live session is found", adaToken, "", ada, false},
		{"another user's session in the same statement is found as its own", bobToken, "", bob, false},
		{"the same session twice in one statement is found twice", adaToken, "", ada, false},
		{"a revoked session is not found, and fails no other lookup", revokedToken, "", uuid.Nil, false},
		{"an unknown token is not found, and fails no other lookup", auth.NewToken(), "", uuid.Nil, false},
		{"the answer stored under a key comes with its user's lookup", adaToken, "k1", ada, true},
		{"another user's key is not read", bobToken, "k1", bob, false},
	}
	type result struct {
		caller requestctx.Caller
		stored *idempotency.Stored
		ok     bool
		err    error
	}
	request := func(token string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.AddCookie(&http.Cookie{Name: "session", Value: token})
		return r
	}

	// The pool's one connection is taken: the first lookup waits for it,
	// and every later one joins the first's batch.
	held, err := d.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var released sync.Once
	release := func() { released.Do(held.Release) }
	defer release() // a failing test still lets the batch finish
	results := make([]result, len(tests))
	var wg sync.WaitGroup
	for i, tt := range tests {
		wg.Go(func() {
			r := &results[i]
			r.caller, r.stored, r.ok, r.err = svc.Authenticate(request(tt.token), tt.key)
		})
		waitFor(t, "the lookup to join the batch", func() bool { return svc.Forming() == i+1 })
	}

	// A request that gives up leaves at once, and the batch still answers
	// the others.
	cancelled, cancel := context.WithCancel(ctx)
	gaveUp := authenticate(svc, request(adaToken).WithContext(cancelled))
	waitFor(t, "the cancelled lookup to join the batch", func() bool { return svc.Forming() == len(tests)+1 })
	cancel()
	if err := within(t, gaveUp, "a cancelled lookup still waits for its batch"); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled lookup returned %v, want context.Canceled", err)
	}

	trips := tr.Record(func() {
		release()
		wg.Wait()
	})
	if got := strings.Join(trips, ", "); got != "SessionGetBatch" {
		t.Errorf("round trips %q, want one SessionGetBatch for all %d lookups", got, len(tests)+1)
	}
	for i, tt := range tests {
		r := results[i]
		if r.err != nil {
			t.Errorf("%s: %v", tt.name, r.err)
			continue
		}
		if r.ok != (tt.user != uuid.Nil) || r.caller.UserID != tt.user {
			t.Errorf("%s: found %v, user %s; want user %s", tt.name, r.ok, r.caller.UserID, tt.user)
		}
		if (r.stored != nil) != tt.stored || (tt.stored && (*r.stored.StatusCode != status || *r.stored.Location != location)) {
			t.Errorf("%s: stored answer %+v, want one: %v", tt.name, r.stored, tt.stored)
		}
	}
}

func TestASessionLookupEndsAtItsRequestsDeadline(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t, testenv.PoolOptions{MaxConns: 1})
	ada, _ := d.User(t, "Ada")
	token, _ := d.Session(t, ada)
	svc := auth.NewService(d.Store, auth.SessionConfig{IdleTTL: time.Hour, AbsoluteTTL: 24 * time.Hour}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	held, err := d.Pool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()

	// The lookup leads its batch, which waits for the held connection: the
	// request's deadline ends it, although the batch is not the request's
	// alone.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
	r.AddCookie(&http.Cookie{Name: "session", Value: token})
	if err := within(t, authenticate(svc, r), "the lookup outlived its request's deadline"); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("err = %v, want store.ErrUnavailable", err)
	}
}
