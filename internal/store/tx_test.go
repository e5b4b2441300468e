package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"creativeapi/gen/db"
	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
)

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
	tr := &testenv.RoundTrips{}
	d := testenv.NewDB(t, testenv.PoolOptions{Tracer: tr})
	ctx := context.Background()
	tests := []struct {
		name string
		fn   func(q store.Tx) error
		want string
	}{
		{"nothing sent, nothing to commit", func(q store.Tx) error { return nil }, ""},
		{"BEGIN goes with the first statement", func(q store.Tx) error {
			_, err := q.OrganizationInsert(ctx, db.OrganizationInsertParams{Name: "A", Slug: "trip-a"})
			return err
		}, "begin+OrganizationInsert, commit"},
		{"a statement sent through Next goes with the next one, and with COMMIT at the end", func(q store.Tx) error {
			if _, err := q.OrganizationInsert(ctx, db.OrganizationInsertParams{Name: "B", Slug: "trip-b"}); err != nil {
				return err
			}
			if _, err := q.Next().SessionRevokeAllForUser(ctx, uuid.New()); err != nil {
				return err
			}
			if _, err := q.OrganizationGetBySlug(ctx, "trip-b"); err != nil {
				return err
			}
			_, err := q.Next().SessionRevokeAllForUser(ctx, uuid.New())
			return err
		}, "begin+OrganizationInsert, SessionRevokeAllForUser+OrganizationGetBySlug, SessionRevokeAllForUser+commit"},
	}
	for _, tt := range tests {
		var err error
		got := strings.Join(tr.Record(func() { err = d.Store.InTx(ctx, tt.fn) }), ", ")
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got != tt.want {
			t.Errorf("%s: round trips %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestAFailedNextStatementFailsTheNextAndRollsBackEverything(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	ctx := context.Background()
	var nextErr error
	err := d.Store.InTx(ctx, func(q store.Tx) error {
		if _, err := q.OrganizationInsert(ctx, db.OrganizationInsertParams{Name: "C", Slug: "fail-next"}); err != nil {
			return err
		}
		if err := q.Next().AssetInsert(ctx, orphanAsset); err != nil {
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

// wrappedFailure marks the error of a statement sent through NextWrapped.
type wrappedFailure struct{ err error }

func (w wrappedFailure) Error() string { return "wrapped: " + w.err.Error() }

func TestANextWrappedStatementsFailureComesBackWrapped(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	ctx := context.Background()
	wrap := func(err error) error { return wrappedFailure{err} }
	for _, tt := range []struct {
		name string
		fn   func(q store.Tx) error
	}{
		{"from the next statement", func(q store.Tx) error {
			_ = q.NextWrapped(wrap).AssetInsert(ctx, orphanAsset)
			_, err := q.OrganizationGetBySlug(ctx, "anything")
			return err
		}},
		{"from COMMIT", func(q store.Tx) error {
			return q.NextWrapped(wrap).AssetInsert(ctx, orphanAsset)
		}},
	} {
		var failure wrappedFailure
		if err := d.Store.InTx(ctx, tt.fn); !errors.As(err, &failure) || !strings.Contains(err.Error(), "foreign key") {
			t.Errorf("%s: %v, want the foreign key violation wrapped", tt.name, err)
		}
	}
	// A failure of a statement sent with it is not wrapped.
	err := d.Store.InTx(ctx, func(q store.Tx) error {
		_, _ = q.NextWrapped(wrap).SessionRevokeAllForUser(ctx, uuid.New())
		return q.AssetInsert(ctx, orphanAsset)
	})
	var failure wrappedFailure
	if err == nil || errors.As(err, &failure) {
		t.Fatalf("%v, want the second statement's error unwrapped", err)
	}
}

func TestAFailedStatementSentWithCommitRollsBackEverything(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	ctx := context.Background()
	err := d.Store.InTx(ctx, func(q store.Tx) error {
		if _, err := q.OrganizationInsert(ctx, db.OrganizationInsertParams{Name: "D", Slug: "fail-commit"}); err != nil {
			return err
		}
		return q.Next().AssetInsert(ctx, orphanAsset)
	})
	if err == nil || !strings.Contains(err.Error(), "foreign key") {
		t.Fatalf("InTx: %v; want the foreign key violation", err)
	}
	if orgExists(t, d, "fail-commit") {
		t.Fatal("the transaction's earlier write was committed")
	}
	// The connection went back to the pool usable.
	if err := d.Store.InTx(ctx, func(q store.Tx) error {
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
	err := d.Store.InTx(ctx, func(q store.Tx) error {
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

// TestADeferredFailureNeverCommits: a statement sent through Next fails
// later, when the next statement or COMMIT sends it. The error is the
// failing statement's own (not the later statement's), and even a caller
// that drops it commits nothing: the transaction is aborted, its COMMIT
// answers ROLLBACK, and InTx fails.
func TestADeferredFailureNeverCommits(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	ctx := context.Background()
	var dropped, after error
	err := d.Store.InTx(ctx, func(q store.Tx) error {
		if _, err := q.OrganizationInsert(ctx, db.OrganizationInsertParams{Name: "G", Slug: "deferred"}); err != nil {
			return err
		}
		_ = q.Next().AssetInsert(ctx, orphanAsset)
		// The next statement reports the queued one's failure, not one of
		// its own: it would have found the organization.
		_, dropped = q.OrganizationGetBySlug(ctx, "deferred")
		// A caller that goes on regardless: every later statement fails
		// (the transaction is aborted), and so does COMMIT.
		_, after = q.OrganizationInsert(ctx, db.OrganizationInsertParams{Name: "H", Slug: "deferred-after"})
		return nil
	})
	if dropped == nil || !strings.Contains(dropped.Error(), "foreign key") {
		t.Fatalf("the next statement answered %v, want the queued statement's foreign key violation", dropped)
	}
	if after == nil || !strings.Contains(after.Error(), "aborted") {
		t.Fatalf("a statement after the failure answered %v, want the aborted transaction's error", after)
	}
	if !errors.Is(err, pgx.ErrTxCommitRollback) {
		t.Fatalf("InTx: %v, want COMMIT's ROLLBACK (pgx.ErrTxCommitRollback)", err)
	}
	if orgExists(t, d, "deferred") || orgExists(t, d, "deferred-after") {
		t.Fatal("a write of the failed transaction was committed")
	}
}
