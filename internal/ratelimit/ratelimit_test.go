package ratelimit

import (
	"testing"
	"time"
)

// clock is a limiter's time, moved by the test.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newAt(reads, commands int) (*Limiter, *clock) {
	c := &clock{t: time.Unix(1_800_000_000, 0)}
	l := New(reads, commands)
	l.now = c.now
	return l, c
}

func TestABurstOfTheBudgetIsAllowedThenOneRequestPerInterval(t *testing.T) {
	l, c := newAt(0, 6) // one command every 10 s
	for i := range 6 {
		d := l.Allow("user:a", Commands)
		if !d.Allowed || d.Remaining != 5-i {
			t.Fatalf("request %d of the burst: %+v", i+1, d)
		}
	}
	d := l.Allow("user:a", Commands)
	if d.Allowed || d.RetryAfter != 10*time.Second || d.RetryAfterSeconds() != 10 || d.Remaining != 0 {
		t.Fatalf("the 7th at once: %+v", d)
	}
	c.t = c.t.Add(9 * time.Second)
	if d := l.Allow("user:a", Commands); d.Allowed {
		t.Fatalf("before the interval: %+v", d)
	}
	c.t = c.t.Add(time.Second)
	if d := l.Allow("user:a", Commands); !d.Allowed || d.Remaining != 0 {
		t.Fatalf("after one interval: %+v", d)
	}
}

func TestEachPrincipalAndClassHasABudgetOfItsOwn(t *testing.T) {
	l, _ := newAt(1, 1)
	for _, tc := range []struct {
		principal string
		class     Class
	}{{"user:a", Reads}, {"user:a", Commands}, {"user:b", Reads}, {"addr:192.0.2.1", Reads}} {
		if d := l.Allow(tc.principal, tc.class); !d.Allowed {
			t.Fatalf("%s %s: %+v", tc.principal, tc.class.Name(), d)
		}
	}
	if d := l.Allow("user:a", Reads); d.Allowed {
		t.Fatalf("user:a's second read: %+v", d)
	}
}

func TestNoLimitAllowsEverything(t *testing.T) {
	l, _ := newAt(0, 0)
	for range 1000 {
		if d := l.Allow("user:a", Reads); !d.Allowed {
			t.Fatalf("%+v", d)
		}
	}
	var off *Limiter
	if off.Enabled(Reads) || off.Enabled(Commands) {
		t.Fatal("a nil limiter limits")
	}
}

func TestPeekCountsNothing(t *testing.T) {
	l, _ := newAt(2, 0)
	for range 5 {
		if d := l.Peek("addr:x", Reads); !d.Allowed || d.Remaining != 2 {
			t.Fatalf("peek: %+v", d)
		}
	}
	l.Allow("addr:x", Reads)
	if d := l.Peek("addr:x", Reads); d.Remaining != 1 {
		t.Fatalf("peek after one: %+v", d)
	}
}

func TestTheReplicasSharesAddUpToTheBudget(t *testing.T) {
	for _, limit := range []int{1, 5, 120, 601} {
		for n := 1; n <= 7; n++ {
			sum := 0
			for i := range n {
				sum += Share(limit, n, i)
			}
			if sum != limit {
				t.Errorf("limit %d over %d replicas: shares add up to %d", limit, n, sum)
			}
		}
	}
}

func TestAReplicaAllowsItsShare(t *testing.T) {
	l, _ := newAt(0, 5)
	l.SetReplicas(2, 1) // shares 3 and 2: this one is the second
	allowed := 0
	for range 10 {
		if l.Allow("user:a", Commands).Allowed {
			allowed++
		}
	}
	if allowed != 2 {
		t.Fatalf("allowed %d, want the second share of 5 over 2 replicas, 2", allowed)
	}
	if d := l.Peek("user:a", Commands); d.Limit != 5 {
		t.Fatalf("the policy names the whole budget: %+v", d)
	}
}

func TestWholeBucketsAreSweptAway(t *testing.T) {
	l, c := newAt(60, 0)
	l.Allow("user:a", Reads)
	l.Allow("user:b", Reads)
	c.t = c.t.Add(500 * time.Millisecond)
	l.Sweep()
	if n := buckets(l); n != 2 {
		t.Fatalf("%d buckets before they are whole, want 2", n)
	}
	c.t = c.t.Add(time.Second)
	l.Sweep()
	if n := buckets(l); n != 0 {
		t.Fatalf("%d buckets once whole, want 0", n)
	}
}

func buckets(l *Limiter) int {
	n := 0
	for i := range l.shards {
		n += len(l.shards[i].tat)
	}
	return n
}

func TestTheHeadersFollowTheDraft(t *testing.T) {
	l, _ := newAt(0, 120)
	d := l.Allow("user:a", Commands)
	if got := d.PolicyHeader(); got != `"commands";q=120;w=60` {
		t.Errorf("RateLimit-Policy: %s", got)
	}
	if got := d.Header(); got != `"commands";r=119;t=1` {
		t.Errorf("RateLimit: %s", got)
	}
}

func BenchmarkAllow(b *testing.B) {
	l := New(1_000_000, 1_000_000)
	b.ReportAllocs()
	for b.Loop() {
		l.Allow("user:6a1f7e4c-0a3b-4f2e-8d9c-5b7a2e1f0c3d", Commands)
	}
}
