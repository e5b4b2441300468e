package auth

import (
	"context"
	"sync"

	"creativeapi/gen/db"
	"creativeapi/internal/store"
)

// maxLookups caps a batch: a statement's arrays stay small, and a batch
// that is full lets the next request start another.
const maxLookups = 64

// lookups shares session lookups between concurrent requests. The first
// request to need one starts a batch and waits for a pooled connection;
// the requests that need one while it waits join that batch, and once the
// connection is there one statement answers them all. An idle pool hands
// the connection over at once, so the batch is that one request and
// nothing waits longer than it would alone. Under load requests queue for
// the pool anyway, and the batches grow with the queue: one round trip,
// on the database and in this process, serves more requests the more
// clients there are. Kept by the ablation
// (docs/performance.md, ablation row B), the weakest of its keeps: without
// it a deposit create at 64 clients cost the server 14 to 21% more CPU.
type lookups struct {
	store *store.Store

	mu sync.Mutex
	// forming is the batch waiting for its connection, which requests may
	// still join; nil when none waits.
	forming *batch
}

type batch struct{ items []*lookup }

// lookup is one request's: what it asks, and once done is closed what the
// batch's statement answered (found false: no live session).
type lookup struct {
	tokenHash []byte
	key       string

	done  chan struct{}
	row   db.SessionGetBatchRow
	found bool
	err   error
}

// get finds the live session of tokenHash, with the answer stored under
// key for its user when key is not empty; store.ErrNotFound when there is
// no live session.
func (l *lookups) get(ctx context.Context, tokenHash []byte, key string) (db.SessionGetBatchRow, error) {
	it := &lookup{tokenHash: tokenHash, key: key, done: make(chan struct{})}
	l.mu.Lock()
	b := l.forming
	lead := b == nil
	if lead {
		b = &batch{}
		l.forming = b
	}
	b.items = append(b.items, it)
	if len(b.items) == maxLookups {
		l.forming = nil
	}
	l.mu.Unlock()
	if lead {
		bctx, cancel := batchContext(ctx)
		l.run(bctx, b)
		cancel()
	} else {
		select {
		case <-it.done:
		case <-ctx.Done():
			// Past its deadline the request answers 503, as for any
			// layer that notices it first.
			return db.SessionGetBatchRow{}, ctx.Err()
		}
	}
	switch {
	case it.err != nil:
		return db.SessionGetBatchRow{}, it.err
	case !it.found:
		return db.SessionGetBatchRow{}, store.ErrNotFound
	}
	return it.row, nil
}

// batchContext is the context of a batch that ctx's request leads. The
// batch answers others too, so the request's cancellation (its client
// leaving) must not cut it short; its deadline, the request timeout that
// every request has alike, still bounds it, as it bounded a lone lookup
// (a database that stopped answering holds a sent statement until then).
func batchContext(ctx context.Context) (context.Context, context.CancelFunc) {
	bctx := context.WithoutCancel(ctx)
	if deadline, ok := ctx.Deadline(); ok {
		return context.WithDeadline(bctx, deadline)
	}
	return bctx, func() {}
}

// run answers b: it waits for a connection, closes b to joiners, and
// sends b's lookups in one statement.
func (l *lookups) run(ctx context.Context, b *batch) {
	var items []*lookup
	closeBatch := func() {
		l.mu.Lock()
		if l.forming == b {
			l.forming = nil
		}
		items = b.items
		l.mu.Unlock()
	}
	err := l.store.OnConn(ctx, func(q *db.Queries) error {
		closeBatch()
		arg := db.SessionGetBatchParams{
			TokenHashes: make([][]byte, len(items)), IdempotencyKeys: make([]string, len(items)),
		}
		for i, it := range items {
			arg.TokenHashes[i], arg.IdempotencyKeys[i] = it.tokenHash, it.key
		}
		rows, err := q.SessionGetBatch(ctx, arg)
		for _, r := range rows {
			it := items[r.Ord-1]
			it.row, it.found = r, true
		}
		return err
	})
	if items == nil { // no connection came
		closeBatch()
	}
	for _, it := range items {
		it.err = err
		close(it.done)
	}
}
