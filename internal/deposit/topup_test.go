package deposit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/deposit"
	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
	"creativeapi/internal/tron"
)

// shortUnderReview makes a deposit of 100 USDT that a transfer carrying
// its fingerprint, short by short, was attached to by the watcher (under
// review for the amount), and answers it and the transfer's id.
func shortUnderReview(t *testing.T, d *testenv.DB, user uuid.UUID, short int64, tx string) (db.Deposit, int64) {
	t.Helper()
	ctx := context.Background()
	dep := mustCreate(t, d, user, hundredUSDT)
	received := dep.RequestedAmountMinor - short
	if err := d.Store.InTx(ctx, func(q store.Tx) error {
		return deposit.Record(ctx, q, 40, []deposit.Transfer{{
			TxID: tx, Token: "USDT-contract", From: "payer", To: tron.DevTreasuryAddress, AmountRaw: fmt.Sprint(received),
			AmountMinor: received, BlockTime: time.Now(), Block: 11, Status: deposit.TransferUnmatched,
			Reason: deposit.ReasonAmountMismatch, DepositID: dep.ID,
		}}, time.Now())
	}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, d, dep.ID); got.Status != deposit.StatusUnderReview {
		t.Fatalf("the attached deposit is %s; want under_review", got.Status)
	}
	return dep, transferID(t, d, tx)
}

// TestTopUp_AClaimedTransferTakesNone: a claimant could otherwise top a
// stranger's short payment up to their own amount and be credited both
// with no operator; top-up is only for a transfer the watcher attached by
// its fingerprint.
func TestTopUp_AClaimedTransferTakesNone(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	user, _ := d.User(t, "Claimer Cal")
	dep := mustCreate(t, d, user, hundredUSDT)
	tx := strings.Repeat("e", 64)
	unmatchedTransfer(t, d, tx, dep.RequestedAmountMinor-5_000_000)
	if _, err := claimTx(t, d, user, dep.ID, tx); err != nil {
		t.Fatal(err)
	}
	err := d.Store.InTx(context.Background(), func(q store.Tx) error {
		_, err := deposit.TopUp(context.Background(), q, settings(), user, dep.ID, deposit.DefaultTolerance(), time.Now())
		return err
	})
	var r *deposit.Refusal
	if !errors.As(err, &r) {
		t.Fatalf("top-up of a claimed transfer: %v; want a refusal", err)
	}
	if n := count(t, d, "SELECT count(*) FROM deposits WHERE top_up_of = $1", dep.ID); n != 0 {
		t.Fatalf("%d top-ups reserved", n)
	}
}

// topUpFor reserves a top-up for dep and answers the top-up's row.
func topUpFor(t *testing.T, d *testenv.DB, dep db.Deposit) db.Deposit {
	t.Helper()
	ctx := context.Background()
	if err := d.Store.InTx(ctx, func(q store.Tx) error {
		_, err := deposit.TopUp(ctx, q, settings(), dep.UserID, dep.ID, deposit.DefaultTolerance(), time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var up db.Deposit
	if err := d.Pool.QueryRow(ctx, "SELECT id, requested_amount_minor, base_amount_minor FROM deposits WHERE top_up_of = $1", dep.ID).
		Scan(&up.ID, &up.RequestedAmountMinor, &up.BaseAmountMinor); err != nil {
		t.Fatal(err)
	}
	return up
}

// payTopUp records a confirming transfer tx of the top-up's amount and
// credits it as the watcher does.
func payTopUp(t *testing.T, d *testenv.DB, up db.Deposit, tx string) deposit.CreditOutcome {
	t.Helper()
	exec(t, d, `INSERT INTO chain_transfers (network, tx_id, token, from_address, to_address, amount_raw, amount_minor,
		block_time, block_number, status, deposit_id) VALUES ('TRC20', $1, 'USDT-contract', 'payer', $2, $3::bigint::text, $3::bigint, now(), 12, 'confirming', $4)`,
		tx, tron.DevTreasuryAddress, up.RequestedAmountMinor, up.ID)
	exec(t, d, "UPDATE deposits SET status = 'confirming', transfer_tx_id = $2 WHERE id = $1", up.ID, tx)
	var outcome deposit.CreditOutcome
	if err := d.Store.InTx(context.Background(), func(q store.Tx) error {
		var err error
		outcome, err = deposit.CreditTopUp(context.Background(), q, transferID(t, d, tx), up.ID, tx, up.RequestedAmountMinor)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return outcome
}

// TestTopUp_ReservesTheShortfallPlusAFreeSuffix: the top-up's amount is
// the shortfall plus a suffix; a deposit under review for a shortfall the
// tolerance accepts takes none.
func TestTopUp_ReservesTheShortfallPlusAFreeSuffix(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	user, _ := d.User(t, "Short Sam")
	dep, _ := shortUnderReview(t, d, user, 3_000_000, strings.Repeat("a", 64))
	up := topUpFor(t, d, dep)
	if up.BaseAmountMinor != 3_000_000 || up.RequestedAmountMinor-up.BaseAmountMinor < deposit.SuffixMin || up.RequestedAmountMinor-up.BaseAmountMinor > deposit.SuffixMax {
		t.Fatalf("top-up %d on base %d; want 3 USDT plus a suffix", up.RequestedAmountMinor, up.BaseAmountMinor)
	}
	// A tolerance of 5% accepts a 3 USDT shortfall of 100: no top-up.
	other, _ := shortUnderReview(t, d, user, 3_000_000, strings.Repeat("b", 64))
	err := d.Store.InTx(context.Background(), func(q store.Tx) error {
		_, err := deposit.TopUp(context.Background(), q, settings(), user, other.ID, deposit.Tolerance{BasisPoints: 500, MaxMinor: 5_000_000}, time.Now())
		return err
	})
	var r *deposit.Refusal
	if !errors.As(err, &r) {
		t.Fatalf("a shortfall the tolerance accepts: %v; want a refusal", err)
	}
}

// TestCreditTopUp_ADepositSettledMeanwhileLeavesTheTopUpCreditedAlone: an
// operator refunds the deposit's transfer while its top-up is
// open; the top-up's transfer then credits the top-up alone, with its own
// ledger entry, and the refunded deposit stays refunded: no money lost,
// none credited twice.
func TestCreditTopUp_ADepositSettledMeanwhileLeavesTheTopUpCreditedAlone(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	user, _ := d.User(t, "Refunded Rex")
	dep, claimed := shortUnderReview(t, d, user, 4_000_000, strings.Repeat("c", 64))
	up := topUpFor(t, d, dep)
	if err := deposit.Settle(context.Background(), d.Store, claimed, deposit.MoveSettleRefund, "ops", "sent back"); err != nil {
		t.Fatal(err)
	}
	if got := payTopUp(t, d, up, strings.Repeat("d", 64)); got != deposit.Credited {
		t.Fatalf("outcome %v", got)
	}
	var parent, child string
	var credited, entries, sum int64
	if err := d.Pool.QueryRow(context.Background(), `SELECT p.status, c.status, c.credited_amount_minor,
		(SELECT count(*) FROM ledger_entries), (SELECT coalesce(sum(amount_minor), 0) FROM ledger_entries WHERE source_id = c.id::text)
		FROM deposits p JOIN deposits c ON c.top_up_of = p.id WHERE p.id = $1`, dep.ID).Scan(&parent, &child, &credited, &entries, &sum); err != nil {
		t.Fatal(err)
	}
	if parent != "refunded" || child != "credited" || credited != up.RequestedAmountMinor || entries != 1 || sum != up.RequestedAmountMinor {
		t.Fatalf("deposit %s, top-up %s credited %d, %d entries (%d for the top-up); want refunded, the top-up credited alone with %d",
			parent, child, credited, entries, sum, up.RequestedAmountMinor)
	}
}
