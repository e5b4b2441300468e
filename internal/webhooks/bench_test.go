package webhooks_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"creativeapi/internal/events"
	"creativeapi/internal/store"
	"creativeapi/internal/webhooks"
)

// BenchmarkChangeToDelivered measures events per second from the change's
// commit to a 2xx from a local receiver: write, publish (fan-out into River
// jobs), sign, POST, log the attempt.
func BenchmarkChangeToDelivered(b *testing.B) {
	bb := setup(b, webhooks.Config{AllowPrivate: true})
	got := make(chan struct{}, 1<<16)
	rcv := newReceiver(b, webhooks.NewSecret(), func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	rcv.seen = got
	bb.endpoint(b, rcv.srv.URL, events.CreativeApproved)
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i += 100 {
		n := min(100, b.N-i)
		if err := bb.d.Store.InTx(ctx, func(q store.Tx) error {
			evs := make([]events.Event, n)
			for j := range evs {
				evs[j] = events.Event{Type: events.CreativeApproved, OrganizationID: bb.org, Timestamp: time.Now(), Data: map[string]int{"n": i + j}}
			}
			return events.Write(ctx, q.Queries, evs...)
		}); err != nil {
			b.Fatal(err)
		}
		if _, err := bb.pub.PublishOnce(ctx); err != nil {
			b.Fatal(err)
		}
	}
	for range b.N {
		select {
		case <-got:
		case <-time.After(30 * time.Second):
			b.Fatal("deliveries stopped")
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}
