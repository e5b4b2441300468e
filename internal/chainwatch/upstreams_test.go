package chainwatch_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"creativeapi/internal/chainwatch"
	"creativeapi/internal/devchain"
	"creativeapi/internal/tron"
	"creativeapi/internal/trongrid"
)

// failing is an upstream that answers every call with status, and counts them.
func failing(t *testing.T, status int) (url string, calls *atomic.Int64) {
	t.Helper()
	calls = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, calls
}

// upstreamsWatcher is a watcher of the bundle's treasury reading urls in order.
func (b *bundle) upstreamsWatcher(t *testing.T, urls ...string) *chainwatch.Watcher {
	t.Helper()
	var list []chainwatch.Upstream
	for _, u := range urls {
		api, err := trongrid.New(u, nil, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		list = append(list, chainwatch.Upstream{Name: u, Chain: api})
	}
	// An hour's back-off: a failed upstream is not asked first again
	// during the test.
	return chainwatch.New(chainwatch.Config{
		Treasury: tron.DevTreasuryAddress, Contract: tron.MainnetUSDT,
		PollInterval: 20 * time.Millisecond, MonitoringWindow: 24 * time.Hour,
	}, b.d.Store, chainwatch.NewUpstreams(list, time.Hour, 2*time.Hour), logger())
}

// TestUpstreams_AFailingFirstUpstreamDoesNotStopCrediting: with the first
// upstream down (5xx) or rate limited (429), every poll succeeds through
// the second, the deposit is credited once, and the failed upstream backs
// off: it is asked once, not on every call.
func TestUpstreams_AFailingFirstUpstreamDoesNotStopCrediting(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusServiceUnavailable, http.StatusTooManyRequests} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			t.Parallel()
			_, b := setup(t)
			down, calls := failing(t, status)
			w := b.upstreamsWatcher(t, down, b.upstream.URL)
			dep := b.deposit(t, hundredUSDT)
			b.pay(t, dep.RequestedAmountMinor)
			if res := poll(t, w); res.Confirming != 1 {
				t.Fatalf("first poll: %+v; want the transfer seen through the second upstream", res)
			}
			b.chain.Mine(devchain.DefaultSolidLag + required)
			if res := poll(t, w); res.Credited != 1 {
				t.Fatalf("second poll: %+v; want the deposit credited", res)
			}
			if s := b.state(t, dep.ID); s.Status != "credited" || s.Credited != dep.RequestedAmountMinor {
				t.Fatalf("deposit: %+v", s)
			}
			if n := calls.Load(); n != 1 {
				t.Fatalf("the failing upstream was asked %d times; want once, then backing off", n)
			}
		})
	}
}

// TestUpstreams_EveryUpstreamDownFailsThePoll: nothing is decided when no
// upstream answers; the poll fails, and the next one with a live upstream
// catches up.
func TestUpstreams_EveryUpstreamDownFailsThePoll(t *testing.T) {
	t.Parallel()
	w0, b := setup(t)
	a, _ := failing(t, http.StatusBadGateway)
	c, _ := failing(t, http.StatusTooManyRequests)
	w := b.upstreamsWatcher(t, a, c)
	dep := b.deposit(t, hundredUSDT)
	b.pay(t, dep.RequestedAmountMinor)
	if _, err := w.Poll(t.Context()); err == nil {
		t.Fatal("a poll with every upstream down succeeded")
	}
	if s := b.state(t, dep.ID); s.Status != "awaiting_transfer" {
		t.Fatalf("deposit: %+v; want it untouched", s)
	}
	if res := poll(t, w0); res.Confirming != 1 {
		t.Fatalf("poll through a live upstream: %+v", res)
	}
}
