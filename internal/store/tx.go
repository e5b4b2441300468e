package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"creativeapi/gen/db"
)

// tx is the transaction InTx gives its function, as the DBTX of the
// generated queries. It spends no round trip of its own: BEGIN waits for
// the first statement and goes with it, and statements sent through Tx.Next
// wait for the next one (or for COMMIT). Each group is one pipeline (a pgx
// batch with one Sync): statements still run one after another, each with
// its own snapshot, and a failure skips the rest of the group.
type tx struct {
	conn *pgx.Conn
	// pending are the statements waiting for the next one: BEGIN at first,
	// then those sent through Tx.Next.
	pending []queued
	begun   bool
}

type queued struct {
	sql  string
	args []any
	// wrap, when set, wraps the statement's error (see Tx.NextWrapped).
	wrap func(error) error
}

// Tx is the transaction InTx gives its function. Its queries run each
// statement in order; Next queues one to travel with the one after it.
// This pipelining is kept by the ablation
// (docs/performance.md, ablation row C): without it a deposit create took
// 8 round trips instead of 3.
type Tx struct {
	*db.Queries
	t *tx
}

// Next returns the queries whose Exec statements wait and are sent with
// the transaction's next statement, or with its COMMIT, in the same round
// trip. It suits writes whose outcome the code does not look at before its
// next statement (the lock before an insert, a review action's write
// before the read of the versions it shows, the stored answer before
// COMMIT): their error is returned by that next statement. Reads run at
// once. In a transaction of InPgxTx, Next's statements run at once.
//
// Deferring the error is safe because nothing can commit past it:
//   - the error that comes back is the failing statement's own (flush
//     returns the first queued statement that failed, never the later
//     statement's), so the log names what failed;
//   - PostgreSQL aborts the transaction at the failure and the pipeline
//     skips the rest of its group, so no later statement takes effect;
//   - a caller that drops the later statement's error still cannot
//     commit: COMMIT of the aborted transaction answers ROLLBACK, which
//     InTx returns as pgx.ErrTxCommitRollback.
//
// What a deferred error may do is reach a caller that reads the later
// statement's error as its own (a unique violation taken for its own
// insert's conflict, say): a statement whose failure must be told apart
// goes through NextWrapped. TestADeferredFailureNeverCommits and
// TestANextWrappedStatementsFailureComesBackWrapped hold this.
func (x Tx) Next() *db.Queries { return x.NextWrapped(nil) }

// NextWrapped is Next for a statement whose failure the caller must tell
// apart from a failure of the statements sent with it: its error comes
// back, from whichever later call sends it, as wrap(err), err translated.
func (x Tx) NextWrapped(wrap func(error) error) *db.Queries {
	if x.t == nil {
		return x.Queries
	}
	return db.New(translating{next{x.t, wrap}})
}

// next is the DBTX of Tx.Next: Exec queues, reads run at once.
type next struct {
	*tx
	wrap func(error) error
}

func (n next) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	n.pending = append(n.pending, queued{sql: sql, args: args, wrap: n.wrap})
	return pgconn.CommandTag{}, nil
}

func newTx(conn *pgx.Conn) *tx {
	// Room for BEGIN and the statements commands send with it (a claim, a
	// lock): appends that grow the slice cost an allocation each.
	pending := make([]queued, 1, 4)
	pending[0] = queued{sql: "begin"}
	return &tx{conn: conn, pending: pending}
}

// flush sends the pending statements followed by sql in one pipeline and
// returns the batch positioned on sql's result.
func (t *tx) flush(ctx context.Context, sql string, args []any) (pgx.BatchResults, error) {
	// Sized up front: growing the queue cost an allocation per doubling.
	b := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, len(t.pending)+1)}
	for _, q := range t.pending {
		b.Queue(q.sql, q.args...)
	}
	b.Queue(sql, args...)
	// The next statements queued by Tx.Next reuse the slice; nothing appends
	// to it while this function reads it.
	pending := t.pending
	t.pending, t.begun = pending[:0], true
	br := t.conn.SendBatch(ctx, b)
	for _, q := range pending {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			if q.wrap != nil {
				err = q.wrap(translateCall(err))
			}
			return nil, err
		}
	}
	return br, nil
}

func (t *tx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if len(t.pending) == 0 {
		return t.conn.Exec(ctx, sql, args...)
	}
	br, err := t.flush(ctx, sql, args)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

func (t *tx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if len(t.pending) == 0 {
		return t.conn.Query(ctx, sql, args...)
	}
	br, err := t.flush(ctx, sql, args)
	if err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return nil, err
	}
	return &batchRows{Rows: rows, br: br}, nil
}

func (t *tx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if len(t.pending) == 0 {
		return t.conn.QueryRow(ctx, sql, args...)
	}
	br, err := t.flush(ctx, sql, args)
	if err != nil {
		return errRow{err}
	}
	return batchRow{row: br.QueryRow(), br: br}
}

// commit sends the pending statements and COMMIT in one round trip. A
// transaction that sent nothing has nothing to commit.
func (t *tx) commit(ctx context.Context) error {
	if !t.begun && len(t.pending) <= 1 {
		t.pending = nil
		return nil
	}
	br, err := t.flush(ctx, "commit", nil)
	if err != nil {
		return err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err == nil && tag.String() != "COMMIT" {
		// COMMIT of a transaction an earlier error aborted answers ROLLBACK.
		err = pgx.ErrTxCommitRollback
	}
	return err
}

// rollback ends a transaction that was begun and not committed. When it
// fails, the pool discards the connection (it is not idle).
func (t *tx) rollback(ctx context.Context) {
	if !t.begun || t.conn.PgConn().TxStatus() == 'I' {
		return
	}
	_, _ = t.conn.Exec(ctx, "rollback")
}

// batchRows closes the pipeline with the rows of its last statement.
type batchRows struct {
	pgx.Rows
	br pgx.BatchResults
}

func (r *batchRows) Close() {
	r.Rows.Close()
	_ = r.br.Close()
}

// batchRow closes the pipeline once its row is scanned.
type batchRow struct {
	row pgx.Row
	br  pgx.BatchResults
}

func (r batchRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if cerr := r.br.Close(); err == nil && cerr != nil && !errors.Is(cerr, pgx.ErrNoRows) {
		err = fmt.Errorf("close pipeline: %w", cerr)
	}
	return err
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
