package store_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"

	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
)

// TestOnlyPostgreSQLErrorsAreDatabaseUnavailable: a network failure of
// PostgreSQL's connection (refused, or cut mid-statement) is
// ErrUnavailable, whether it comes back from a query or through InTx; the
// same failure of another service (an object store call inside a
// transaction), or a deadline nobody attributed, passes through untouched,
// so it is never logged or answered as a database outage.
func TestOnlyPostgreSQLErrorsAreDatabaseUnavailable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testenv.NewDB(t, testenv.PoolOptions{})

	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	s3Like := fmt.Errorf("list parts: operation error S3: ListParts: request send failed: %w", refused)
	for name, err := range map[string]error{
		"another service's refused connection": s3Like,
		"a deadline of another service":        fmt.Errorf("head object: %w", context.DeadlineExceeded),
	} {
		if got := store.Translate(err); errors.Is(got, store.ErrUnavailable) || got != err {
			t.Errorf("%s: translated to %v", name, got)
		}
		if got := d.Store.InTx(ctx, func(store.Tx) error { return err }); errors.Is(got, store.ErrUnavailable) {
			t.Errorf("%s through InTx: %v", name, got)
		}
	}

	// PostgreSQL refusing the connection.
	_, err := pgx.Connect(ctx, "postgres://nobody@127.0.0.1:1/none?connect_timeout=2")
	if err == nil || !errors.Is(store.Translate(err), store.ErrUnavailable) {
		t.Errorf("a refused connection to PostgreSQL: %v", err)
	}
	// PostgreSQL's connection cut under a statement.
	conn, err := pgx.Connect(ctx, d.URL)
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.PgConn().Conn().Close()
	_, err = conn.Exec(ctx, "SELECT 1")
	if err == nil || !errors.Is(store.Translate(err), store.ErrUnavailable) {
		t.Errorf("a connection cut under a statement: %v (translated %v)", err, store.Translate(err))
	}
}
