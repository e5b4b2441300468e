package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"creativeapi/internal/requestctx"
)

// watchedBody is a request body that counts its reads.
type watchedBody struct {
	*strings.Reader
	reads *atomic.Int32
}

func (b watchedBody) Read(p []byte) (int, error) {
	b.reads.Add(1)
	return b.Reader.Read(p)
}

func (watchedBody) Close() error { return nil }

// doorRequest is a valid deposit create of the session "ok", its body
// counting its reads in reads.
func doorRequest(reads *atomic.Int32) *http.Request {
	body := `{"amount":{"currency":"USDT","amountMinor":"25000000","scale":6}}`
	req := httptest.NewRequest(http.MethodPost, depositsRoute, nil)
	req.Body, req.ContentLength = watchedBody{strings.NewReader(body), reads}, int64(len(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", testCSRF)
	req.Header.Set("Origin", "http://api.test")
	req.AddCookie(&http.Cookie{Name: "session", Value: "ok"})
	return req
}

// TestARequestBeyondTheActiveSlotsWaitsAtTheDoor holds the only slot and
// sends requests on a session: they wait before anything else, their
// session unlooked-up and their body unread; one enters when the slot is
// given back, and one waits no longer than the bound, then answers 503.
func TestARequestBeyondTheActiveSlotsWaitsAtTheDoor(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const bound = 3 * time.Second
		var waited []time.Duration
		slots := newActiveSlots(1, bound, func(d time.Duration) { waited = append(waited, d) })
		var keys []string
		e := admitting(admit(SpecGate(t), nil, oneSession{caller: requestctx.Caller{UserID: uuid.New(), CSRFToken: testCSRF}, keys: &keys},
			newOriginPolicy("http://api.test", nil), slots))
		e.POST(depositsRoute, func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })
		if err := slots.enter(t.Context()); err != nil {
			t.Fatal(err)
		}

		var reads atomic.Int32
		entered := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			e.ServeHTTP(entered, doorRequest(&reads))
			close(done)
		}()
		synctest.Wait()
		readsAtTheDoor, lookupsAtTheDoor := reads.Load(), len(keys)
		time.Sleep(time.Second) // the bubble's clock: no real time passes
		slots.leave()
		<-done
		if readsAtTheDoor != 0 || lookupsAtTheDoor != 0 {
			t.Fatalf("waiting at the door: %d body reads, %d session lookups", readsAtTheDoor, lookupsAtTheDoor)
		}
		if entered.Code != http.StatusNoContent || reads.Load() == 0 || len(keys) != 1 {
			t.Fatalf("after the slot was given back: %d, %d body reads, %d session lookups", entered.Code, reads.Load(), len(keys))
		}
		if len(waited) != 1 || waited[0] != time.Second {
			t.Fatalf("waits counted %v, want [1s]", waited)
		}

		if err := slots.enter(t.Context()); err != nil {
			t.Fatal(err)
		}
		reads.Store(0)
		start := time.Now()
		refused := httptest.NewRecorder()
		e.ServeHTTP(refused, doorRequest(&reads))
		var p struct{ Code string }
		if err := json.Unmarshal(refused.Body.Bytes(), &p); err != nil || refused.Code != http.StatusServiceUnavailable ||
			p.Code != "service_unavailable" || refused.Header().Get("Retry-After") == "" {
			t.Fatalf("every slot taken for the bound: %d %s (%v)", refused.Code, refused.Body, err)
		}
		if took := time.Since(start); took != bound || reads.Load() != 0 || len(keys) != 1 {
			t.Fatalf("refused after %s (bound %s) with %d body reads, %d session lookups", took, bound, reads.Load(), len(keys))
		}
	})
}

// TestARequestWhoseDeadlineComesAtTheDoorLeavesThen: the request's own
// deadline (REQUEST_TIMEOUT) ends its wait if it comes before the bound.
func TestARequestWhoseDeadlineComesAtTheDoorLeavesThen(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		slots := newActiveSlots(1, time.Minute, nil)
		if err := slots.enter(t.Context()); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start := time.Now()
		err := slots.enter(ctx)
		if took := time.Since(start); err == nil || took != time.Second || !strings.Contains(err.Error(), "context deadline exceeded") {
			t.Fatalf("enter = %v after %s, want the deadline after 1s", err, took)
		}
	})
}
