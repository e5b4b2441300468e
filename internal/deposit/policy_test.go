package deposit_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/internal/deposit"
	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
	"creativeapi/internal/tron"
)

// unmatchedTransfer records an unmatched transfer of amount to the
// treasury, final and waiting for review, as the watcher does for a
// transfer no deposit reserves.
func unmatchedTransfer(t *testing.T, d *testenv.DB, tx string, amount int64) {
	t.Helper()
	exec(t, d, `INSERT INTO chain_transfers (network, tx_id, token, from_address, to_address, amount_raw, amount_minor,
		block_time, block_number, status, reason, needs_review) VALUES ('TRC20', $1, 'USDT-contract', 'stranger', $2, $3::bigint::text, $3::bigint, now(), 10, 'unmatched', 'no_reservation', true)`,
		tx, tron.DevTreasuryAddress, amount)
}

// claimTx is deposit.Claim in its own transaction.
func claimTx(t *testing.T, d *testenv.DB, user, dep uuid.UUID, tx string) (deposit.Status, error) {
	t.Helper()
	ctx := context.Background()
	var got deposit.Status
	err := d.Store.InTx(ctx, func(q store.Tx) error {
		out, err := deposit.Claim(ctx, q, user, dep, tx, time.Hour, time.Now())
		got = deposit.Status(out.Status)
		return err
	})
	return got, err
}

// TestClaim_NeverCreditsWhateverTheAmount: a transaction id is public, so
// a claim proves nothing: a claimed transfer within the tolerance, above
// the requested amount or short beyond it puts the deposit under review
// for an operator, and nothing is credited, by policy or otherwise (the
// fourth review: anyone could be credited with a stranger's transfer).
func TestClaim_NeverCreditsWhateverTheAmount(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	n := 0
	for name, short := range map[string]int64{
		"short by exactly the cap of 1 USDT":  1_000_000,
		"short by a network fee of 0.35 USDT": 350_000,
		"overpaid by 5 USDT":                  -5_000_000,
		"short by 1 USDT and one micro-USDT":  1_000_001,
	} {
		n++
		tx := fmt.Sprintf("%064x", 5100+n)
		t.Run(name, func(t *testing.T) {
			user, _ := d.User(t, "Claimer "+name)
			dep := mustCreate(t, d, user, hundredUSDT)
			unmatchedTransfer(t, d, tx, dep.RequestedAmountMinor-short)
			got, err := claimTx(t, d, user, dep.ID, tx)
			if err != nil || got != deposit.StatusUnderReview {
				t.Fatalf("claim = %s, %v; want under_review", got, err)
			}
			if stored := read(t, d, dep.ID); stored.CreditedAmount != 0 ||
				count(t, d, "SELECT count(*) FROM ledger_entries WHERE user_id = $1", user) != 0 ||
				count(t, d, "SELECT count(*) FROM chain_transfer_settlements s JOIN chain_transfers t ON t.id = s.transfer_id WHERE t.tx_id = $1", tx) != 0 ||
				count(t, d, "SELECT count(*) FROM chain_transfers WHERE tx_id = $1 AND status = 'unmatched' AND needs_review", tx) != 1 {
				t.Fatalf("a claim moved money: %+v", stored)
			}
		})
	}
}

// TestClaim_SeveralDepositsClaimOneTransferAndEachIsContested: a second
// claim of one transfer does not take it from the first; both deposits
// wait under review, each marked contested, and the operator sees both
// claims. Crediting it to the first closes the other claim and puts the
// second deposit back to awaiting its transfer.
func TestClaim_SeveralDepositsClaimOneTransferAndEachIsContested(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	ctx := context.Background()
	payer, _ := d.User(t, "Payer Pia")
	thief, _ := d.User(t, "Thief Theo")
	paid := mustCreate(t, d, payer, hundredUSDT)
	other := mustCreate(t, d, thief, hundredUSDT)
	tx := fmt.Sprintf("%064x", 5200)
	unmatchedTransfer(t, d, tx, paid.RequestedAmountMinor-3_000_000)
	for _, c := range []struct{ user, dep uuid.UUID }{{payer, paid.ID}, {thief, other.ID}} {
		if got, err := claimTx(t, d, c.user, c.dep, tx); err != nil || got != deposit.StatusUnderReview {
			t.Fatalf("claim = %s, %v", got, err)
		}
	}
	if n := count(t, d, "SELECT count(*) FROM deposits WHERE id = ANY($1) AND status = 'under_review' AND review_contested", []uuid.UUID{paid.ID, other.ID}); n != 2 {
		t.Fatalf("%d contested deposits; want both", n)
	}
	if n := count(t, d, "SELECT count(*) FROM deposit_claims c JOIN chain_transfers t ON t.id = c.transfer_id WHERE t.tx_id = $1 AND c.closed_at IS NULL", tx); n != 2 {
		t.Fatalf("%d open claims; want 2", n)
	}
	var publicID uuid.UUID
	if err := d.Pool.QueryRow(ctx, "SELECT public_id FROM chain_transfers WHERE tx_id = $1", tx).Scan(&publicID); err != nil {
		t.Fatal(err)
	}
	seen, err := deposit.OperatorTransfer(ctx, d.Store.Q, publicID)
	if err != nil || len(seen.Claims) != 2 || seen.Claims[0].DepositId != paid.ID || seen.Claims[1].DepositId != other.ID || seen.From != "stranger" {
		t.Fatalf("the operator sees %+v, %v; want both claims, oldest first, and the sender", seen, err)
	}
	if err := deposit.Settle(ctx, d.Store, transferID(t, d, tx), deposit.MoveSettleCredit, "ops", "the sender is Pia's wallet"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, d, paid.ID); got.Status != deposit.StatusCredited {
		t.Fatalf("the attached claimant is %s; want credited", got.Status)
	}
	if got := read(t, d, other.ID); got.Status != deposit.StatusAwaitingTransfer || got.TxID != nil {
		t.Fatalf("the other claimant is %+v; want awaiting its transfer again", got)
	}
	if n := count(t, d, "SELECT count(*) FROM deposit_claims WHERE closed_at IS NULL"); n != 0 {
		t.Fatalf("%d claims still open", n)
	}
}

// TestClaim_AtMostThreeOpenAndTenADay: a user holds at most
// deposit.MaxOpenClaims open claims (the fourth is too_many_claims), and
// makes at most deposit.MaxDailyClaims in a day, closed ones counted.
func TestClaim_AtMostThreeOpenAndTenADay(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	user, _ := d.User(t, "Greedy Gus")
	var deps []uuid.UUID
	for i := range deposit.MaxOpenClaims + 1 {
		dep := mustCreate(t, d, user, hundredUSDT+int64(i)*deposit.CentMinor)
		deps = append(deps, dep.ID)
		unmatchedTransfer(t, d, fmt.Sprintf("%064x", 5300+i), 1_000_000)
	}
	for i := range deposit.MaxOpenClaims {
		if _, err := claimTx(t, d, user, deps[i], fmt.Sprintf("%064x", 5300+i)); err != nil {
			t.Fatalf("claim %d: %v", i, err)
		}
	}
	last := deposit.MaxOpenClaims
	if _, err := claimTx(t, d, user, deps[last], fmt.Sprintf("%064x", 5300+last)); !errors.Is(err, deposit.ErrTooManyClaims) {
		t.Fatalf("claim past the open limit: %v; want ErrTooManyClaims", err)
	}
	// Closed claims still count toward the day.
	exec(t, d, "UPDATE deposit_claims SET closed_at = now() WHERE user_id = $1", user)
	exec(t, d, `INSERT INTO deposit_claims (transfer_id, deposit_id, user_id, closed_at)
		SELECT (SELECT min(id) FROM chain_transfers), $2, $1, now() FROM generate_series(1, $3::int)`, user, deps[0], deposit.MaxDailyClaims-deposit.MaxOpenClaims)
	if _, err := claimTx(t, d, user, deps[last], fmt.Sprintf("%064x", 5300+last)); !errors.Is(err, deposit.ErrTooManyClaims) {
		t.Fatalf("claim past the daily limit: %v; want ErrTooManyClaims", err)
	}
	exec(t, d, "UPDATE deposit_claims SET created_at = now() - interval '25 hours' WHERE user_id = $1", user)
	if _, err := claimTx(t, d, user, deps[last], fmt.Sprintf("%064x", 5300+last)); err != nil {
		t.Fatalf("a day later: %v", err)
	}
}

// TestCreditByFingerprint_IsCreditedWithWhatArrivedAndKeepsItsReview: a
// confirming transfer that carried the deposit's suffix, short within the
// tolerance, credits what arrived; the deposit keeps its review
// (amount_mismatch) and the audit record names the policy.
func TestCreditByFingerprint_IsCreditedWithWhatArrivedAndKeepsItsReview(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	ctx := context.Background()
	user, _ := d.User(t, "Fee Fay")
	dep := mustCreate(t, d, user, hundredUSDT)
	tx := fmt.Sprintf("%064x", 5400)
	received := dep.RequestedAmountMinor - 350_000 // a fee in whole cents keeps the suffix
	if err := d.Store.InTx(ctx, func(q store.Tx) error {
		return deposit.Record(ctx, q, 40, []deposit.Transfer{{
			TxID: tx, Token: "USDT-contract", From: "payer", To: tron.DevTreasuryAddress, AmountRaw: fmt.Sprint(received),
			AmountMinor: received, BlockTime: time.Now(), Block: 10, Status: deposit.TransferConfirming,
			Reason: deposit.ReasonFingerprint, DepositID: dep.ID,
		}}, time.Now())
	}); err != nil {
		t.Fatal(err)
	}
	var outcome deposit.CreditOutcome
	if err := d.Store.InTx(ctx, func(q store.Tx) error {
		var err error
		outcome, err = deposit.CreditByFingerprint(ctx, q, transferID(t, d, tx), dep.ID, tx, received)
		return err
	}); err != nil || outcome != deposit.Credited {
		t.Fatalf("credit = %v, %v", outcome, err)
	}
	row, err := d.Store.Q.DepositGet(ctx, dep.ID)
	if err != nil {
		t.Fatal(err)
	}
	body := deposit.Body(row.Deposit, row.DbNow)
	review, _ := body.Review.Get()
	if body.Status != "credited" || body.CreditedAmount.AmountMinor != fmt.Sprint(received) || review.Reason != "amount_mismatch" ||
		review.ReceivedAmount.AmountMinor != fmt.Sprint(received) || review.TransactionId != tx {
		t.Fatalf("deposit %+v review %+v; want credited with what arrived, its review kept", body, review)
	}
	if count(t, d, `SELECT count(*) FROM chain_transfer_settlements s JOIN chain_transfers t ON t.id = s.transfer_id
		WHERE t.tx_id = $1 AND s.operator = 'policy' AND s.decision = 'credit' AND s.deposit_id = $2 AND t.status = 'credited'`, tx, dep.ID) != 1 {
		t.Fatal("no policy settlement of the credited transfer")
	}
}
