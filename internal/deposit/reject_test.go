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

// TestSettleReject_DetachesTheTransferAndPutsTheDepositBack: an operator's
// reject of a claimed transfer detaches it (unmatched again, still waiting
// for review, reason rejected), writes the audit record naming the
// deposit, and puts the deposit back with its event: awaiting_transfer
// before expiresAt, expired after (also for a late transfer the watcher
// attached). The same deposit cannot claim that transfer again; another
// can, and the transfer may still be settled finally (refunded) once.
func TestSettleReject_DetachesTheTransferAndPutsTheDepositBack(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	ctx := context.Background()
	const window = time.Hour
	n := 0
	// attached records a transfer of 5 micro-USDT in status, attached to
	// dep as a claim (unmatched) or by the watcher (late), and puts dep
	// under review with it.
	attached := func(t *testing.T, dep uuid.UUID, status, reason string) (int64, string) {
		n++
		tx := fmt.Sprintf("%064x", 1000+n)
		exec(t, d, `INSERT INTO chain_transfers (network, tx_id, token, from_address, to_address, amount_raw, amount_minor,
			block_time, block_number, status, deposit_id, needs_review) VALUES ('TRC20', $1, 'USDT-contract', 'payer', $2, '5', 5, now(), 10, $3, $4, true)`,
			tx, tron.DevTreasuryAddress, status, dep)
		exec(t, d, `UPDATE deposits SET status = 'under_review', transfer_tx_id = $2, review_reason = $3,
			review_received_minor = 5, review_opened_at = now() WHERE id = $1`, dep, tx, reason)
		return transferID(t, d, tx), tx
	}
	settle := func(id int64, m deposit.Move) error {
		return deposit.Settle(ctx, d.Store, id, m, "ops", "not this payer's")
	}
	claim := func(user, dep uuid.UUID, tx string) error {
		return d.Store.InTx(ctx, func(q store.Tx) error {
			_, err := deposit.Claim(ctx, q, user, dep, tx, window, time.Now())
			return err
		})
	}
	cases := []struct {
		name           string
		status, reason string
		expired        bool
		want           deposit.Status
	}{
		{"a claim before expiresAt goes back to awaiting_transfer", "unmatched", "amount_mismatch", false, deposit.StatusAwaitingTransfer},
		{"a claim after expiresAt goes back to expired", "unmatched", "amount_mismatch", true, deposit.StatusExpired},
		{"a late transfer goes back to expired", "late", "late", true, deposit.StatusExpired},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			user, _ := d.User(t, "Rejected")
			dep := mustCreate(t, d, user, hundredUSDT)
			if c.expired {
				exec(t, d, "UPDATE deposits SET expires_at = now() - interval '1 minute', created_at = now() - interval '31 minutes' WHERE id = $1", dep.ID)
			}
			id, tx := attached(t, dep.ID, c.status, c.reason)
			if err := settle(id, deposit.MoveSettleReject); err != nil {
				t.Fatalf("reject: %v", err)
			}
			if got := read(t, d, dep.ID); got.Status != c.want || got.TxID != nil || got.CreditedAmount != 0 {
				t.Fatalf("deposit after reject: %+v; want %s, no transaction, nothing credited", got, c.want)
			}
			if n := count(t, d, `SELECT count(*) FROM deposits WHERE id = $1 AND review_reason IS NULL AND review_received_minor IS NULL
				AND review_opened_at IS NULL AND confirmations = 0`, dep.ID); n != 1 {
				t.Fatal("the review was not cleared")
			}
			if n := count(t, d, `SELECT count(*) FROM chain_transfers WHERE id = $1 AND status = 'unmatched' AND needs_review
				AND deposit_id IS NULL AND reason = 'rejected'`, id); n != 1 {
				t.Fatal("the transfer is not unmatched, detached and waiting for review")
			}
			if n := count(t, d, `SELECT count(*) FROM chain_transfer_settlements WHERE transfer_id = $1 AND decision = 'reject'
				AND deposit_id = $2 AND operator = 'ops'`, id, dep.ID); n != 1 {
				t.Fatalf("%d audit records of the rejection", n)
			}
			if n := count(t, d, "SELECT count(*) FROM outbox_events WHERE type = $1 AND payload->'data'->>'id' = $2",
				"deposit."+string(c.want), dep.ID.String()); n != 1 {
				t.Fatalf("%d deposit.%s events", n, c.want)
			}
			if n := count(t, d, "SELECT count(*) FROM ledger_entries WHERE source_id = $1", dep.ID.String()); n != 0 {
				t.Fatal("a rejected transfer was credited")
			}

			// Rejected again: nothing is attached any more.
			if err := settle(id, deposit.MoveSettleReject); !errors.Is(err, deposit.ErrNoDeposit) {
				t.Fatalf("a second reject = %v; want ErrNoDeposit", err)
			}
			// The same deposit cannot take it back; another deposit can.
			if err := claim(user, dep.ID, tx); !errors.Is(err, deposit.ErrTransferTaken) {
				t.Fatalf("the rejected deposit's claim = %v; want ErrTransferTaken", err)
			}
			other, _ := d.User(t, "Other")
			od := mustCreate(t, d, other, hundredUSDT)
			exec(t, d, "UPDATE chain_transfers SET block_time = now() WHERE id = $1", id)
			if err := claim(other, od.ID, tx); err != nil {
				t.Fatalf("another deposit's claim: %v", err)
			}
			// And the final settlement is still once.
			if err := settle(id, deposit.MoveSettleRefund); err != nil {
				t.Fatalf("refund after a rejection: %v", err)
			}
			if err := settle(id, deposit.MoveSettleRefund); !errors.Is(err, deposit.ErrNotForReview) {
				t.Fatalf("a second refund = %v; want ErrNotForReview", err)
			}
			if err := settle(id, deposit.MoveSettleReject); !errors.Is(err, deposit.ErrNotForReview) {
				t.Fatalf("a reject of a settled transfer = %v; want ErrNotForReview", err)
			}
			if got := read(t, d, od.ID); got.Status != deposit.StatusRefunded {
				t.Fatalf("the other deposit is %s; want refunded", got.Status)
			}
		})
	}

	t.Run("a transfer nobody claimed cannot be rejected", func(t *testing.T) {
		exec(t, d, `INSERT INTO chain_transfers (network, tx_id, token, from_address, to_address, amount_raw, amount_minor,
			block_time, block_number, status, reason, needs_review) VALUES ('TRC20', 'loose', 'USDT-contract', 'payer', $1, '5', 5, now(), 10, 'unmatched', 'no_reservation', true)`,
			tron.DevTreasuryAddress)
		id := transferID(t, d, "loose")
		if err := settle(id, deposit.MoveSettleReject); !errors.Is(err, deposit.ErrNoDeposit) {
			t.Fatalf("reject = %v; want ErrNoDeposit", err)
		}
		if n := count(t, d, "SELECT count(*) FROM chain_transfer_settlements WHERE transfer_id = $1", id); n != 0 {
			t.Fatal("a refused reject left an audit record")
		}
	})
}
