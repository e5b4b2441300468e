package main

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"creativeapi/gen/db"
	"creativeapi/internal/chainwatch"
	"creativeapi/internal/deposit"
	"creativeapi/internal/devchain"
	"creativeapi/internal/money"
	"creativeapi/internal/tron"
	"creativeapi/internal/trongrid"
)

func TestParseUSDT(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"100.001234", 100_001_234, true},
		{"100", 100_000_000, true},
		{"0.5", 500_000, true},
		{"100.0012345", 0, false},
		{"-1", 0, false},
		{"0", 0, false},
		{"", 0, false},
		{".5", 0, false},
		{"1e3", 0, false},
	}
	for _, tt := range tests {
		got, err := parseUSDT(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseUSDT(%q) = %d, %v; want %d (ok %v)", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestDevchainPayAndTransfersReview(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	chain := devchain.New(devchain.Options{Contract: tron.MainnetUSDT})
	srv := httptest.NewServer(chain.Handler())
	defer srv.Close()

	out := c.ok("", "devchain", "pay", "--amount", "12.345678", "--url", srv.URL)
	if !strings.Contains(out, "paid 12.345678 USDT to "+tron.DevTreasuryAddress) {
		t.Fatalf("pay printed %q", out)
	}
	if _, err := c.run("", "devchain", "pay", "--amount", "1.2345678", "--url", srv.URL); err == nil {
		t.Fatal("an amount with 7 decimals was paid")
	}
	chain.Mine(1 + devchain.DefaultSolidLag) // an unmatched transfer is recorded once final
	api, _ := trongrid.New(srv.URL, nil, time.Second)
	w := chainwatch.New(chainwatch.Config{Treasury: tron.DevTreasuryAddress, Contract: tron.MainnetUSDT,
		PollInterval: time.Second, MonitoringWindow: time.Hour}, c.db.Store, api, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if res, err := w.Poll(context.Background()); err != nil || res.Unmatched != 1 {
		t.Fatalf("poll: %+v, %v; want the payment unmatched (no deposit asked for it)", res, err)
	}

	list := c.ok("", "transfers", "list", "--unmatched")
	m := regexp.MustCompile(`(?m)^([0-9a-f-]{36})\s+unmatched\s+no_reservation\s+12\.345678 USDT`).FindStringSubmatch(list)
	if m == nil {
		t.Fatalf("transfers list:\n%s", list)
	}
	if _, err := c.run("", "transfers", "settle", m[1], "--credit", "--note", "x", "--operator", "ops"); err == nil {
		t.Fatal("an unmatched transfer was credited")
	}
	if _, err := c.run("", "transfers", "settle", m[1], "--reject", "--note", "x", "--operator", "ops"); err == nil {
		t.Fatal("an unmatched transfer nobody claimed was rejected")
	}
	if _, err := c.run("", "transfers", "settle", m[1], "--refund", "--operator", "ops"); err == nil {
		t.Fatal("settled without a note")
	}
	if out := c.ok("", "transfers", "settle", m[1], "--refund", "--note", "sent back", "--operator", "ops"); !strings.Contains(out, "settled: refund by ops") {
		t.Fatalf("settle printed %q", out)
	}
	if list := c.ok("", "transfers", "list"); strings.Contains(list, "unmatched") {
		t.Fatalf("the settled transfer is still for review:\n%s", list)
	}
	if list := c.ok("", "transfers", "list", "--all"); !strings.Contains(list, "refunded") {
		t.Fatalf("--all does not show the refunded transfer:\n%s", list)
	}
}

// TestDevchainPayWarnsWhenNoOpenDepositAwaitsTheAmount: amountMinor pasted
// as --amount, or a mistyped amount, pays into "unmatched"; pay says so
// before it pays, and is quiet for the amount an open deposit awaits.
func TestDevchainPayWarnsWhenNoOpenDepositAwaitsTheAmount(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	chain := devchain.New(devchain.Options{Contract: tron.MainnetUSDT})
	srv := httptest.NewServer(chain.Handler())
	defer srv.Close()
	created := c.ok("author-password", "users", "create", "--email", "payer@example.test", "--name", "Payer", "--password-stdin")
	user, err := uuid.Parse(strings.Fields(created)[3])
	if err != nil {
		t.Fatalf("%q: %v", created, err)
	}
	hour := pgtype.Interval{Microseconds: time.Hour.Microseconds(), Valid: true}
	if _, err := c.db.Store.Q.DepositInsert(context.Background(), db.DepositInsertParams{
		UserID: user, Network: deposit.Network, Address: tron.DevTreasuryAddress, Currency: money.USDT.Code,
		BaseAmountMinor: 20_000_000, SuffixMinor: 1234, RequestedAmountMinor: 20_001_234,
		ConfirmationsRequired: 19, Ttl: hour, ReserveFor: hour, MaxOpen: 5,
	}); err != nil {
		t.Fatal(err)
	}
	const warning = "warning: no open deposit to " + tron.DevTreasuryAddress + " awaits exactly "
	tests := []struct {
		args []string
		paid string
		warn bool
	}{
		{[]string{"--amount-minor", "20001234"}, "paid 20.001234 USDT", false},
		{[]string{"--amount", "20.001234"}, "paid 20.001234 USDT", false},
		{[]string{"--amount", "20001234"}, "paid 20001234.000000 USDT", true},
		{[]string{"--amount-minor", "20001235"}, "paid 20.001235 USDT", true},
	}
	// A late exact payment: the deposit expired but keeps its amount
	// reserved; the watcher records it late and puts the deposit under review.
	if _, err := c.db.Store.Q.DepositInsert(context.Background(), db.DepositInsertParams{
		UserID: user, Network: deposit.Network, Address: tron.DevTreasuryAddress, Currency: money.USDT.Code,
		BaseAmountMinor: 30_000_000, SuffixMinor: 1234, RequestedAmountMinor: 30_001_234,
		ConfirmationsRequired: 19, Ttl: hour, ReserveFor: hour, MaxOpen: 5,
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.db.Pool.Exec(context.Background(),
		"UPDATE deposits SET created_at = now() - interval '2 hours', expires_at = now() - interval '1 minute' WHERE requested_amount_minor = 30001234"); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := c.runAll("", "devchain", "pay", "--url", srv.URL, "--amount-minor", "30001234"); err != nil ||
		!strings.Contains(stderr, "recorded as late and the deposit put under review") {
		t.Errorf("a late exact payment: %v, stderr %q; want the late warning", err, stderr)
	}
	for _, tt := range tests {
		stdout, stderr, err := c.runAll("", append([]string{"devchain", "pay", "--url", srv.URL}, tt.args...)...)
		if err != nil || !strings.HasPrefix(stdout, tt.paid) {
			t.Errorf("%v: %v, %q; want %q", tt.args, err, stdout, tt.paid)
		}
		if got := strings.Contains(stderr, warning); got != tt.warn {
			t.Errorf("%v: warned %v (stderr %q), want %v", tt.args, got, stderr, tt.warn)
		}
	}
}

// TestDevchainPay_PredictsTheWatchersJudgment: devchain pay's prediction
// is deposit.Judge's verdict for a final block: nothing to say for an
// on-time exact payment; late (under review) for the exact amount of an
// expired deposit still reserved; unmatched for no reservation or a
// deposit already paid; failed for a REVERT receipt.
func TestDevchainPay_PredictsTheWatchersJudgment(t *testing.T) {
	now := time.Now()
	tx := "paid"
	open := &deposit.Candidate{ID: uuid.New(), Status: deposit.StatusAwaitingTransfer, CreatedAt: now.Add(-time.Minute), ExpiresAt: now.Add(time.Hour)}
	expired := &deposit.Candidate{ID: uuid.New(), Status: deposit.StatusAwaitingTransfer, CreatedAt: now.Add(-time.Hour), ExpiresAt: now.Add(-time.Minute)}
	paid := &deposit.Candidate{ID: uuid.New(), Status: deposit.StatusConfirming, CreatedAt: now.Add(-time.Minute), ExpiresAt: now.Add(time.Hour), TxID: &tx}
	tests := []struct {
		name   string
		c      *deposit.Candidate
		result string
		want   string
	}{
		{"an on-time exact payment pays its deposit", open, "", ""},
		{"a late exact payment is late and under review", expired, "", "recorded as late and the deposit put under review"},
		{"no reservation is unmatched", nil, "", "recorded as unmatched"},
		{"a paid deposit's amount is unmatched", paid, "", "(already_paid): this payment will be recorded as unmatched"},
		{"a reverted payment fails", open, "REVERT", "recorded as failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := predictPayment(tt.c, tt.result, tron.DevTreasuryAddress, 1_000_000, now)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Fatalf("predicted %q; want %q", got, tt.want)
			}
		})
	}
}
