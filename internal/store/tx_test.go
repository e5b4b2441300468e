package store_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"creativeapi/gen/db"
	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
)

// trips records round trips: a statement alone, or a pipeline as its
// statements joined with "+".
type trips struct {
	mu  sync.Mutex
	all []string
}

func first(sql string) string {
	f := strings.Fields(sql)
	if len(f) >= 3 && f[0] == "--" && f[1] == "name:" {
		return f[2]
	}
	return strings.ToLower(f[0])
}

func (t *trips) add(s string) {
	t.mu.Lock()
	t.all = append(t.all, s)
	t.mu.Unlock()
}

func (t *trips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	t.add(first(d.SQL))
	return ctx
}
func (t *trips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (t *trips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	names := make([]string, len(d.Batch.QueuedQueries))
	for i, q := range d.Batch.QueuedQueries {
		names[i] = first(q.SQL)
	}
	t.add(strings.Join(names, "+"))
	return ctx
}
func (t *trips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (t *trips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

func (t *trips) during(f func()) string {
	t.mu.Lock()
	t.all = nil
	t.mu.Unlock()
	f()
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.all, ", ")
}

func orgExists(t *testing.T, d *testenv.DB, slug string) bool {
	t.Helper()
	_, err := d.Store.Q.OrganizationGetBySlug(context.Background(), slug)
	if err != nil && !errors.Is(store.Translate(err), store.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

// orphanAsset violates the assets→creative_versions foreign key.
var orphanAsset = db.AssetInsertParams{
	VersionID: uuid.New(), Position: 1, FileName: "x.png", MimeType: "image/png", Url: "https://cdn.test/x.png",
	Sha256: strings.Repeat("0", 64),
}

func TestTransactionsSpendNoRoundTripOfTheirOwn(t *testing.T) {
	t.Parallel()
	tr := &trips{}
	d := testenv.NewDB(t, testenv.PoolOptions{Tracer: tr})
	ctx := context.Background()
	tests := []struct {
		name string
		fn   func(q *db.Queries) error
		want string
	}{
		{"nothing sent, nothing to commit", func(q *db.Queries) error { return nil }, ""},
		{"BEGIN goes with the first statement", func(q *db.Queries) error {
			_, err := q.OrganizationInsert(ctx, db.OrganizationInsertParams{Name: "A", Slug: "trip-a"})
			return err
		}, "begin+OrganizationInsert, commit"},
		{"a WithNext statement goes with the next one, and with COMMIT at the end", func(q *db.Queries) error {
			if _, err := q.OrganizationInsert(ctx, db.OrganizationInsertParams{Name: "B", Slug: "trip-b"}); err != nil {
				return err
			}
			if _, err := q.SessionRevokeAllForUser(store.WithNext(ctx), uuid.New()); err != nil {
				return err
			}
			if _, err := q.OrganizationGetBySlug(ctx, "trip-b"); err != nil {
				return err
			}
			_, err := q.SessionRevokeAllForUser(store.WithNext(ctx), uuid.New())
			return err
		}, "begin+OrganizationInsert, SessionRevokeAllForUser+OrganizationGetBySlug, SessionRevokeAllForUser+commit"},
	}
	for _, tt := range tests {
		var err error
		got := tr.during(func() { err = d.Store.InTx(ctx, tt.fn) })
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got != tt.want {
			t.Errorf("%s: round trips %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestAFailedWithNextStatementFailsTheNextAndRollsBackEverything(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	ctx := context.Background()
	var nextErr error
	err := d.Store.InTx(ctx, func(q *db.Queries) error {
		if _, err := q.OrganizationInsert(ctx, db.OrganizationInsertParams{Name: "C", Slug: "fail-next"}); err != nil {
			return err
		}
		if err := q.AssetInsert(store.WithNext(ctx), orphanAsset); err != nil {
			t.Fatalf("a waiting statement reports nothing yet: %v", err)
		}
		_, nextErr = q.OrganizationGetBySlug(ctx, "fail-next")
		return nextErr
	})
	if nextErr == nil || err == nil || !strings.Contains(err.Error(), "foreign key") {
		t.Fatalf("next statement: %v; InTx: %v; want the foreign key violation", nextErr, err)
	}
	if orgExists(t, d, "fail-next") {
		t.Fatal("the transaction's earlier write was committed")
	}
}

func TestAFailedStatementSentWithCommitRollsBackEverything(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	ctx := context.Background()
	err := d.Store.InTx(ctx, func(q *db.Queries) error {
		if _, err := q.OrganizationInsert(ctx, db.OrganizationInsertParams{Name: "D", Slug: "fail-commit"}); err != nil {
			return err
		}
		return q.AssetInsert(store.WithNext(ctx), orphanAsset)
	})
	if err == nil || !strings.Contains(err.Error(), "foreign key") {
		t.Fatalf("InTx: %v; want the foreign key violation", err)
	}
	if orgExists(t, d, "fail-commit") {
		t.Fatal("the transaction's earlier write was committed")
	}
	// The connection went back to the pool usable.
	if err := d.Store.InTx(ctx, func(q *db.Queries) error {
		_, err := q.OrganizationInsert(ctx, db.OrganizationInsertParams{Name: "E", Slug: "after-failure"})
		return err
	}); err != nil || !orgExists(t, d, "after-failure") {
		t.Fatalf("next transaction: %v", err)
	}
}

func TestAnErrorOfTheFunctionRollsBackTheStatementsSentWithBegin(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	ctx := context.Background()
	boom := errors.New("boom")
	err := d.Store.InTx(ctx, func(q *db.Queries) error {
		if _, err := q.OrganizationInsert(ctx, db.OrganizationInsertParams{Name: "F", Slug: "fn-error"}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("InTx: %v", err)
	}
	if orgExists(t, d, "fn-error") {
		t.Fatal("rolled-back write visible")
	}
}
