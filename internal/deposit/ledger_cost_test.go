package deposit_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"

	"creativeapi/internal/cursor"
	"creativeapi/internal/deposit"
	"creativeapi/internal/testenv"
	"creativeapi/internal/tron"
)

// seedLedger makes n expired deposits of another user and 120 credited
// deposits of a new user, each with its ledger entry, in SQL
// (generate_series), analyzes the tables, and answers the user: a ledger
// page among n deposits.
func seedLedger(tb testing.TB, d *testenv.DB, n int) uuid.UUID {
	tb.Helper()
	ctx := context.Background()
	filler, _ := d.User(tb, "Filler")
	user, _ := d.User(tb, "Lena Ledger")
	// A million rows take longer than the pool's statement timeout.
	conn, err := d.Pool.Acquire(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SET statement_timeout = 0"); err != nil {
		tb.Fatal(err)
	}
	defer func() { _, _ = conn.Exec(ctx, "RESET statement_timeout") }()
	for _, st := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO deposits (user_id, network, address, currency, base_amount_minor, suffix_minor, requested_amount_minor,
			confirmations_required, created_at, expires_at, reserved_until, reserved, status)
		SELECT $1, 'TRC20', $2, 'USDT', 10000000, 1 + s % 9999, 10000001 + s % 9999, 19,
			now() - interval '2 days', now() - interval '1 day', now() - interval '1 day', false, 'expired'
		FROM generate_series(1, $3::int) AS s`, []any{filler, tron.DevTreasuryAddress, n}},
		{`INSERT INTO deposits (user_id, network, address, currency, base_amount_minor, suffix_minor, requested_amount_minor,
			credited_amount_minor, confirmations, confirmations_required, created_at, expires_at, reserved_until, reserved, status, transfer_tx_id)
		SELECT $1, 'TRC20', $2, 'USDT', 10000000, s, 10000000 + s, 10000000 + s, 19, 19,
			now() - make_interval(mins => s), now(), now(), false, 'credited', md5(s::text) || md5(s::text)
		FROM generate_series(1, 120) AS s`, []any{user, tron.DevTreasuryAddress}},
		{`INSERT INTO ledger_entries (user_id, currency, amount_minor, source_type, source_id, created_at)
		SELECT user_id, currency, credited_amount_minor, 'deposit', id::text, created_at FROM deposits WHERE user_id = $1`, []any{user}},
		{`ANALYZE deposits`, nil},
		{`ANALYZE ledger_entries`, nil},
	} {
		if _, err := conn.Exec(ctx, st.sql, st.args...); err != nil {
			tb.Fatalf("seed: %v", err)
		}
	}
	return user
}

// ledgerPageSQL is the statement deposit.Entries sends
// (LedgerEntryListByUser), as sqlc generated it.
func ledgerPageSQL(tb testing.TB) string {
	tb.Helper()
	src, err := os.ReadFile("../../gen/db/deposits.sql.go")
	if err != nil {
		tb.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(src), "const ledgerEntryListByUser = `")
	sql, _, ok2 := strings.Cut(rest, "`")
	if !ok || !ok2 {
		tb.Fatal("no LedgerEntryListByUser in gen/db")
	}
	return sql
}

// TestLedgerEntries_ThePageReadsDepositsByTheirKey: the ledger page joins
// deposits by the entry's typed deposit_id, an index scan of the primary
// key, never a scan of every deposit (a join on d.id::text read them all:
// 8 ms at a few deposits, 1.4 s at 122 000). The plan is the generic one
// the pool's prepared statement uses.
func TestLedgerEntries_ThePageReadsDepositsByTheirKey(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	ctx := context.Background()
	user := seedLedger(t, d, 10_000)
	conn, err := d.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SET plan_cache_mode = force_generic_plan"); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = conn.Exec(ctx, "RESET plan_cache_mode") }()
	rows, err := conn.Query(ctx, "EXPLAIN "+ledgerPageSQL(t), user, nil, nil, 51)
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(plan, "\n")
	if strings.Contains(text, "Seq Scan on deposits") || !strings.Contains(text, "deposits_pkey") {
		t.Fatalf("the ledger page does not read deposits by their key:\n%s", text)
	}
	items, _, err := deposit.Entries(ctx, d.Store.Q, user, cursor.TimeID{}, 50)
	if err != nil || len(items) != 50 {
		t.Fatalf("a page of %d entries (%v); want 50", len(items), err)
	}
	for _, e := range items {
		if id, err := e.DepositId.Get(); err != nil || id == uuid.Nil || len(e.TransactionIds) != 1 {
			t.Fatalf("entry %+v names no deposit or transaction", e)
		}
	}
}

// BenchmarkLedgerEntries times one page of 50 entries (deposit.Entries)
// among 10 000 and 1 000 000 deposits: the same cost at both
// (docs/performance.md). Run it with
// go test -run '^$' -bench LedgerEntries -benchtime 200x ./internal/deposit/
func BenchmarkLedgerEntries(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		b.Run(fmt.Sprintf("deposits=%d", n), func(b *testing.B) {
			d := testenv.NewDB(b)
			ctx := context.Background()
			user := seedLedger(b, d, n)
			for b.Loop() {
				items, _, err := deposit.Entries(ctx, d.Store.Q, user, cursor.TimeID{}, 50)
				if err != nil || len(items) != 50 {
					b.Fatalf("%d entries, %v", len(items), err)
				}
			}
		})
	}
}
