package idempotency_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/internal/idempotency"
	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The HTTP tests (internal/httpapi/idempotency_test.go) cover the rules
// through the API, where the session lookup always brings the stored answer
// along. These cover the runner's own paths: without that prefetch, and
// with a prefetch the database has overtaken.
func TestRunner(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	r := idempotency.NewRunner(d.Store, time.Hour, "http://test")
	ctx := context.Background()
	fingerprint := []byte("the request's fingerprint")
	command := func(runs *int, body string) idempotency.Command {
		return func(context.Context, store.Tx) (idempotency.Response, error) {
			*runs++
			return idempotency.Response{Status: http.StatusCreated, Body: []byte(body)}, nil
		}
	}

	t.Run("without a prefetch, a repeat reads the stored answer itself", func(t *testing.T) {
		user, _ := d.User(t, "Una Prefetch")
		req := idempotency.Request{UserID: user, Key: "k1", Fingerprint: fingerprint}
		runs := 0
		for i, want := range []bool{false, true} {
			resp, replayed, err := r.Run(ctx, req, command(&runs, "first"))
			if err != nil || replayed != want || string(resp.Body) != "first" {
				t.Fatalf("call %d: %q replayed %v, %v; want %q replayed %v", i, resp.Body, replayed, err, "first", want)
			}
		}
		if runs != 1 {
			t.Fatalf("command ran %d times", runs)
		}
	})

	t.Run("a prefetched answer is replayed without running the command", func(t *testing.T) {
		user, _ := d.User(t, "Pia Prefetched")
		status := int32(http.StatusCreated)
		prefetched := &idempotency.Prefetched{UserID: user, Key: "k2", Stored: &idempotency.Stored{Fingerprint: fingerprint, StatusCode: &status, Body: []byte("stored")}}
		runs := 0
		// The structured-field form of the key is the same key.
		resp, replayed, err := r.Run(ctx, idempotency.Request{UserID: user, Key: `"k2"`, Fingerprint: fingerprint, Prefetched: prefetched}, command(&runs, "new"))
		if err != nil || !replayed || string(resp.Body) != "stored" || runs != 0 {
			t.Fatalf("%q replayed %v, %v after %d runs", resp.Body, replayed, err, runs)
		}
	})

	t.Run("a key stored since the prefetch runs nothing twice: its answer is replayed", func(t *testing.T) {
		user, _ := d.User(t, "Sam Stale")
		req := idempotency.Request{UserID: user, Key: "k3", Fingerprint: fingerprint}
		runs := 0
		if _, _, err := r.Run(ctx, req, command(&runs, "first")); err != nil {
			t.Fatal(err)
		}
		// The session lookup saw no answer; a repeat committed right after it.
		req.Prefetched = &idempotency.Prefetched{UserID: user, Key: "k3"}
		resp, replayed, err := r.Run(ctx, req, command(&runs, "second"))
		if err != nil || !replayed || string(resp.Body) != "first" {
			t.Fatalf("%q replayed %v, %v", resp.Body, replayed, err)
		}
		var keys int
		if err := d.Pool.QueryRow(ctx, "SELECT count(*) FROM idempotency_keys WHERE user_id = $1", user).Scan(&keys); err != nil || keys != 1 {
			t.Fatalf("%d keys, %v", keys, err)
		}
	})

	t.Run("a claim still waiting at the request's deadline answers unavailable, not a bug", func(t *testing.T) {
		user, _ := d.User(t, "Holly Held")
		// Another transaction holds the key: the claim waits on it until the
		// request's deadline.
		tx, err := d.Pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		if _, err := tx.Exec(ctx, `INSERT INTO idempotency_keys (user_id, key, fingerprint, expires_at)
			VALUES ($1, 'k5', '\x00', now() + interval '1 hour')`, user); err != nil {
			t.Fatal(err)
		}
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		runs := 0
		_, _, err = r.Run(short, idempotency.Request{UserID: user, Key: "k5", Fingerprint: fingerprint}, command(&runs, "x"))
		if !errors.Is(err, store.ErrUnavailable) {
			t.Fatalf("%v, want store.ErrUnavailable (503)", err)
		}
	})

	t.Run("a prefetch for another key or user is not used", func(t *testing.T) {
		user, _ := d.User(t, "Oli Other")
		status := int32(http.StatusCreated)
		stored := &idempotency.Stored{Fingerprint: fingerprint, StatusCode: &status, Body: []byte("someone else's")}
		runs := 0
		for i, p := range []*idempotency.Prefetched{
			{UserID: user, Key: "other-key", Stored: stored},
			{UserID: uuid.New(), Key: "k4", Stored: stored},
		} {
			resp, replayed, err := r.Run(ctx, idempotency.Request{UserID: user, Key: "k4", Fingerprint: fingerprint, Prefetched: p}, command(&runs, "mine"))
			if err != nil || string(resp.Body) != "mine" || replayed != (i == 1) {
				t.Fatalf("call %d: %q replayed %v, %v; want %q, the second replayed", i, resp.Body, replayed, err, "mine")
			}
		}
		if runs != 1 {
			t.Fatalf("command ran %d times", runs)
		}
	})
}

func TestLookupKeyPassesOnlyWellFormedKeys(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("k", 255)
	for _, tt := range []struct{ name, raw, want string }{
		{"a visible ASCII key is itself", "5b3d8a2e-8f1c", "5b3d8a2e-8f1c"},
		{"the structured-field string form loses its quotes", `"abc"`, "abc"},
		{"255 characters are a key", long, long},
		{"256 characters are not", long + "k", ""},
		{"an empty key is none", "", ""},
		{"a space is not allowed", "a b", ""},
		{"non-ASCII is not allowed", "ключ", ""},
		{"bytes that are not UTF-8 are not allowed", "key-\xff\xfe", ""},
	} {
		if got := idempotency.LookupKey(tt.raw); got != tt.want {
			t.Errorf("%s: LookupKey(%q) = %q, want %q", tt.name, tt.raw, got, tt.want)
		}
	}
}
