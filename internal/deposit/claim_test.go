package deposit_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/deposit"
	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
	"creativeapi/internal/tron"
)

// TestClaim_RefusesWhatCannotBeTheCallersTransfer runs a claim against
// each kind of transfer and deposit the rule refuses, and the one it takes.
func TestClaim_RefusesWhatCannotBeTheCallersTransfer(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	ctx := context.Background()
	const window = time.Hour
	n := 0
	// transfer records a transfer of tx to the treasury in status, with
	// amount minor (0: none) and block time at, for deposit dep (Nil: none).
	transfer := func(t *testing.T, tx, status string, minor int64, at time.Time, to string, dep uuid.UUID, needsReview bool) {
		var amount *int64
		if minor > 0 {
			amount = &minor
		}
		var depID *uuid.UUID
		if dep != uuid.Nil {
			depID = &dep
		}
		exec(t, d, `INSERT INTO chain_transfers (network, tx_id, token, from_address, to_address, amount_raw, amount_minor,
			block_time, block_number, status, deposit_id, needs_review) VALUES ('TRC20', $1, 'USDT-contract', 'payer', $2, '1', $3, $4, 10, $5, $6, $7)`,
			tx, to, amount, at, status, depID, needsReview)
	}
	newUser := func(t *testing.T, d *testenv.DB) uuid.UUID {
		id, _ := d.User(t, "Claimer")
		return id
	}
	claim := func(user, dep uuid.UUID, tx string) (db.Deposit, error) {
		var out db.Deposit
		err := d.Store.InTx(ctx, func(q store.Tx) error {
			var err error
			out, err = deposit.Claim(ctx, q, user, dep, tx, window, time.Now())
			return err
		})
		return out, err
	}
	cases := []struct {
		name string
		// setup puts the deposit and the transfer tx in place.
		setup func(t *testing.T, dep db.Deposit, tx string)
		// asOther claims as another user.
		asOther bool
		want    error
	}{
		{"a transaction never seen is unknown", func(*testing.T, db.Deposit, string) {}, false, deposit.ErrTransferUnknown},
		{"a vanished transfer is unknown", func(t *testing.T, dep db.Deposit, tx string) {
			transfer(t, tx, "vanished", 5, time.Now(), tron.DevTreasuryAddress, uuid.Nil, false)
		}, false, deposit.ErrTransferUnknown},
		{"a transfer paying another deposit is taken", func(t *testing.T, dep db.Deposit, tx string) {
			other := mustCreate(t, d, newUser(t, d), hundredUSDT)
			transfer(t, tx, "confirming", other.RequestedAmountMinor, time.Now(), tron.DevTreasuryAddress, other.ID, false)
		}, false, deposit.ErrTransferTaken},
		{"a transfer claimed for another deposit is taken", func(t *testing.T, dep db.Deposit, tx string) {
			other := mustCreate(t, d, newUser(t, d), hundredUSDT)
			transfer(t, tx, "unmatched", 5, time.Now(), tron.DevTreasuryAddress, other.ID, true)
		}, false, deposit.ErrTransferTaken},
		{"a refunded transfer is taken", func(t *testing.T, dep db.Deposit, tx string) {
			transfer(t, tx, "refunded", 5, time.Now(), tron.DevTreasuryAddress, uuid.Nil, false)
		}, false, deposit.ErrTransferTaken},
		{"a failed transfer cannot pay", func(t *testing.T, dep db.Deposit, tx string) {
			transfer(t, tx, "failed", 5, time.Now(), tron.DevTreasuryAddress, uuid.Nil, false)
		}, false, deposit.ErrTransferUnfit},
		{"a transfer without a countable amount cannot pay", func(t *testing.T, dep db.Deposit, tx string) {
			transfer(t, tx, "unmatched", 0, time.Now(), tron.DevTreasuryAddress, uuid.Nil, true)
		}, false, deposit.ErrTransferUnfit},
		{"a transfer before the deposit cannot pay it", func(t *testing.T, dep db.Deposit, tx string) {
			transfer(t, tx, "unmatched", 5, dep.CreatedAt.Add(-time.Second), tron.DevTreasuryAddress, uuid.Nil, true)
		}, false, deposit.ErrTransferUnfit},
		{"a transfer after the monitoring window cannot pay it", func(t *testing.T, dep db.Deposit, tx string) {
			transfer(t, tx, "unmatched", 5, dep.ExpiresAt.Add(window+time.Second), tron.DevTreasuryAddress, uuid.Nil, true)
		}, false, deposit.ErrTransferUnfit},
		{"a transfer to another address cannot pay it", func(t *testing.T, dep db.Deposit, tx string) {
			transfer(t, tx, "unmatched", 5, time.Now(), "T-elsewhere", uuid.Nil, true)
		}, false, deposit.ErrTransferUnfit},
		{"another user's deposit does not exist", func(t *testing.T, dep db.Deposit, tx string) {
			transfer(t, tx, "unmatched", 5, time.Now(), tron.DevTreasuryAddress, uuid.Nil, true)
		}, true, store.ErrNotFound},
		{"a credited deposit cannot be claimed", func(t *testing.T, dep db.Deposit, tx string) {
			exec(t, d, "UPDATE deposits SET status = 'credited', transfer_tx_id = 'paid', credited_amount_minor = requested_amount_minor, reserved = false WHERE id = $1", dep.ID)
			transfer(t, tx, "unmatched", 5, time.Now(), tron.DevTreasuryAddress, uuid.Nil, true)
		}, false, &deposit.Refusal{}},
		{"an expired deposit takes a transfer inside the window", func(t *testing.T, dep db.Deposit, tx string) {
			exec(t, d, "UPDATE deposits SET status = 'expired', expires_at = now() - interval '1 minute' WHERE id = $1", dep.ID)
			transfer(t, tx, "unmatched", 5, time.Now(), tron.DevTreasuryAddress, uuid.Nil, true)
		}, false, nil},
		{"an awaiting deposit takes an unmatched transfer", func(t *testing.T, dep db.Deposit, tx string) {
			transfer(t, tx, "unmatched", 5, time.Now(), tron.DevTreasuryAddress, uuid.Nil, true)
		}, false, nil},
	}
	for _, c := range cases {
		n++
		tx := fmt.Sprintf("%064x", n)
		t.Run(c.name, func(t *testing.T) {
			user := newUser(t, d)
			dep := mustCreate(t, d, user, hundredUSDT)
			c.setup(t, dep, tx)
			if c.asOther {
				user = newUser(t, d)
			}
			got, err := claim(user, dep.ID, tx)
			var r *deposit.Refusal
			switch {
			case c.want == nil && err != nil:
				t.Fatalf("claim: %v", err)
			case c.want == nil:
				if got.Status != string(deposit.StatusUnderReview) || *got.ReviewReason != "amount_mismatch" ||
					*got.ReviewReceivedMinor != 5 || *got.TransferTxID != tx {
					t.Fatalf("claimed deposit = %+v", got)
				}
				if n := count(t, d, "SELECT count(*) FROM chain_transfers WHERE tx_id = $1 AND deposit_id = $2 AND status = 'unmatched' AND needs_review", tx, dep.ID); n != 1 {
					t.Fatalf("the transfer is not attached (%d)", n)
				}
				if n := count(t, d, "SELECT count(*) FROM outbox_events WHERE type = 'deposit.under_review' AND payload->'data'->>'id' = $1", dep.ID.String()); n != 1 {
					t.Fatalf("%d deposit.under_review events", n)
				}
			case errors.As(c.want, &r):
				if !errors.As(err, &r) {
					t.Fatalf("claim = %v; want a refusal", err)
				}
			case !errors.Is(err, c.want):
				t.Fatalf("claim = %v; want %v", err, c.want)
			}
			if c.want != nil && read(t, d, dep.ID).Status == deposit.StatusUnderReview {
				t.Fatal("a refused claim moved the deposit")
			}
		})
	}
}
