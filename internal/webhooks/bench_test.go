package webhooks_test

import (
	"context"
	"net/http"
	"slices"
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

// BenchmarkChangeToDeliveredLatency measures one event's time from its
// commit to a 2xx from a local receiver, with the publisher running as
// serve runs it (looking every events.DefaultPollInterval): the p50 and p99
// in milliseconds. Events go one at a time, each after the last arrived.
func BenchmarkChangeToDeliveredLatency(b *testing.B) {
	bb := setup(b, webhooks.Config{AllowPrivate: true})
	got := make(chan struct{}, 1<<16)
	rcv := newReceiver(b, webhooks.NewSecret(), func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	rcv.seen = got
	bb.endpoint(b, rcv.srv.URL, events.CreativeApproved)
	pub := events.NewPublisher(bb.d.Store, events.PublisherConfig{}, bb.svc.Fanout, quiet)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { pub.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	deliver := func(i int) time.Duration {
		if err := bb.d.Store.InTx(ctx, func(q store.Tx) error {
			return events.Write(ctx, q.Queries, events.Event{Type: events.CreativeApproved, OrganizationID: bb.org, Timestamp: time.Now(), Data: map[string]int{"n": i}})
		}); err != nil {
			b.Fatal(err)
		}
		committed := time.Now()
		select {
		case <-got:
		case <-time.After(30 * time.Second):
			b.Fatal("delivery stopped")
		}
		return time.Since(committed)
	}
	deliver(-1) // River's workers and the receiver's connection warm up.
	took := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := range b.N {
		took[i] = deliver(i)
	}
	b.StopTimer()
	slices.Sort(took)
	ms := func(p float64) float64 { return float64(took[int(p*float64(len(took)-1))]) / float64(time.Millisecond) }
	b.ReportMetric(ms(0.5), "p50-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
}
