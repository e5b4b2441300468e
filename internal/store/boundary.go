package store

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"creativeapi/gen/db"
)

// translating is the DBTX every generated query runs on, outside and inside
// InTx: each error a statement, its rows or its row scan returns comes back
// through translateCall, so no caller can forget to translate (the way River
// wraps its driver). Callers compare with ErrNotFound, ErrConflict and
// ErrUnavailable only.
type translating struct{ db db.DBTX }

func (t translating) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tag, err := t.db.Exec(ctx, sql, args...)
	return tag, translateCall(err)
}

func (t translating) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := t.db.Query(ctx, sql, args...)
	if err != nil {
		return nil, translateCall(err)
	}
	return translatingRows{rows}, nil
}

func (t translating) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return translatingRow{t.db.QueryRow(ctx, sql, args...)}
}

// translatingRows translates the errors a result set reports while it is
// read: a lock timeout or a cancelled statement usually arrives there, not
// from Query.
type translatingRows struct{ pgx.Rows }

func (r translatingRows) Scan(dest ...any) error { return translateCall(r.Rows.Scan(dest...)) }
func (r translatingRows) Err() error             { return translateCall(r.Rows.Err()) }

type translatingRow struct{ row pgx.Row }

func (r translatingRow) Scan(dest ...any) error { return translateCall(r.row.Scan(dest...)) }
