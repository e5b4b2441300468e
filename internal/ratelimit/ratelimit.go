// Package ratelimit is the API's request budget per principal (a user, a
// token, a guest, or the client address of an anonymous request), reads
// and commands apart: a limit per minute that every replica enforces
// together without a database statement per request.
//
// Each replica holds, in memory, a generic cell rate algorithm (GCRA)
// bucket per principal and class, sized to the replica's share of the
// budget. The shares come from the replicas that are alive: every few
// seconds each replica records itself in PostgreSQL (rate_limit_replicas)
// and reads who else is there (Registry); with n replicas the budget is
// split into n integer shares that add up to it exactly. Behind a load
// balancer that spreads a principal's requests over the replicas, as
// round robin and least-connections do, the replicas together allow the
// budget; a principal pinned to one replica gets that replica's share.
// docs/reliability.md ("Rate limits") says more.
package ratelimit

import (
	"hash/maphash"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Class is a kind of request with a budget of its own.
type Class int

const (
	// Reads are safe requests (GET, HEAD).
	Reads Class = iota
	// Commands are the others.
	Commands
	classes
)

// Name is the class's policy name in the RateLimit headers.
func (c Class) Name() string {
	if c == Reads {
		return "reads"
	}
	return "commands"
}

// Window is the period a limit is given for.
const Window = time.Minute

// Decision is what the limiter said of one request.
type Decision struct {
	// Allowed: the request may go on; otherwise it is refused with 429.
	Allowed bool
	// Limit is the budget per Window (the whole, not this replica's share).
	Limit int
	// Remaining is how many more requests of the class this replica would
	// allow now.
	Remaining int
	// Reset is how long until the principal's budget on this replica is
	// whole again.
	Reset time.Duration
	// RetryAfter, for a refused request, is how long until one more would
	// be allowed.
	RetryAfter time.Duration
	Class      Class
}

// Limiter holds the buckets of one replica.
type Limiter struct {
	limits [classes]int
	// share is this replica's part of each class's limit: replicas in its
	// high 32 bits, this replica's index among them in the low ones.
	share  atomic.Uint64
	now    func() time.Time
	seed   maphash.Seed
	shards [64]shard
}

type shard struct {
	mu sync.Mutex
	// tat is each bucket's theoretical arrival time (GCRA), in Unix
	// nanoseconds: a bucket whose tat is past is whole, and is dropped.
	tat map[bucket]int64
}

type bucket struct {
	principal string
	class     Class
}

// New makes a limiter of reads and commands per minute; a limit of 0 (or
// less) is no limit for that class.
func New(readsPerMinute, commandsPerMinute int) *Limiter {
	l := &Limiter{limits: [classes]int{readsPerMinute, commandsPerMinute}, now: time.Now, seed: maphash.MakeSeed()}
	for i := range l.shards {
		l.shards[i].tat = map[bucket]int64{}
	}
	l.SetReplicas(1, 0)
	return l
}

// Enabled reports whether class has a limit.
func (l *Limiter) Enabled(c Class) bool { return l != nil && l.limits[c] > 0 }

// SetReplicas makes this replica the index-th (from 0) of n alive.
func (l *Limiter) SetReplicas(n, index int) {
	if n < 1 || index < 0 || index >= n {
		n, index = 1, 0
	}
	l.share.Store(uint64(n)<<32 | uint64(index))
}

// Replicas is the number of replicas sharing the budget and this one's
// index among them.
func (l *Limiter) Replicas() (n, index int) {
	s := l.share.Load()
	return int(s >> 32), int(uint32(s))
}

// Share is this replica's part of a limit: the limit split in n integer
// parts that add up to it, the first ones one larger.
func Share(limit, n, index int) int {
	s := limit / n
	if index < limit%n {
		s++
	}
	return s
}

// Allow counts one request of class by principal and says whether it may
// go on.
func (l *Limiter) Allow(principal string, c Class) Decision {
	return l.take(principal, c, true)
}

// Peek says what Allow would, without counting a request.
func (l *Limiter) Peek(principal string, c Class) Decision {
	return l.take(principal, c, false)
}

func (l *Limiter) take(principal string, c Class, count bool) Decision {
	limit := l.limits[c]
	d := Decision{Allowed: true, Limit: limit, Class: c}
	if limit <= 0 {
		return d
	}
	n, index := l.Replicas()
	share := Share(limit, n, index)
	if share == 0 {
		// More replicas than requests a window: this one has none to give.
		d.Allowed, d.RetryAfter, d.Reset = false, Window, Window
		return d
	}
	// GCRA: each request moves the bucket's arrival time one emission
	// interval on; a request is allowed while that time stays within a
	// window of now (a burst of share requests, then one per interval).
	interval := int64(Window) / int64(share)
	now := l.now().UnixNano()
	key := bucket{principal, c}
	sh := &l.shards[(maphash.String(l.seed, principal)+uint64(c))%uint64(len(l.shards))]
	sh.mu.Lock()
	tat := max(sh.tat[key], now)
	next := tat + interval
	if next-now > int64(Window) {
		d.Allowed = false
		d.RetryAfter = time.Duration(next - now - int64(Window))
		next = tat
	} else if count {
		sh.tat[key] = next
	} else {
		next = tat
	}
	sh.mu.Unlock()
	d.Remaining = int((int64(Window) - (next - now)) / interval)
	d.Reset = time.Duration(next - now)
	return d
}

// Sweep drops the buckets that are whole again, which hold nothing a new
// bucket would not: the memory of the limiter is that of the principals
// seen in the last window.
func (l *Limiter) Sweep() {
	now := l.now().UnixNano()
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		for k, tat := range sh.tat {
			if tat <= now {
				delete(sh.tat, k)
			}
		}
		sh.mu.Unlock()
	}
}

// PolicyHeader is the RateLimit-Policy field (draft-ietf-httpapi-
// ratelimit-headers) of a decision: the class's quota over the window.
func (d Decision) PolicyHeader() string {
	return `"` + d.Class.Name() + `";q=` + strconv.Itoa(d.Limit) + ";w=" + strconv.Itoa(int(Window/time.Second))
}

// Header is the RateLimit field of a decision: what remains of the quota,
// and in how many seconds it is whole again.
func (d Decision) Header() string {
	return `"` + d.Class.Name() + `";r=` + strconv.Itoa(d.Remaining) + ";t=" + strconv.Itoa(ceilSeconds(d.Reset))
}

// RetryAfterSeconds is RetryAfter in whole seconds, at least 1.
func (d Decision) RetryAfterSeconds() int { return max(1, ceilSeconds(d.RetryAfter)) }

func ceilSeconds(d time.Duration) int {
	return int(math.Ceil(d.Seconds()))
}
