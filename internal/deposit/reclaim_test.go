package deposit_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/internal/deposit"
	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
	"creativeapi/internal/tron"
)

// errRollBack ends a transaction that only probes whether a move is possible.
var errRollBack = errors.New("roll back")

// TestRejectedClaim_AttachesTheTransferToTheNextClaim: a wrong claim and
// the right payer's claim of one transfer both wait (contested); the
// operator rejects the wrong one, which attaches the transfer to the right
// payer's claim, and the operator's credit credits their deposit with the
// amount received. The rejected deposit cannot claim it again.
func TestRejectedClaim_AttachesTheTransferToTheNextClaim(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	ctx := context.Background()
	const window = time.Hour
	claim := func(user, dep uuid.UUID, tx string) error {
		return d.Store.InTx(ctx, func(q store.Tx) error {
			_, err := deposit.Claim(ctx, q, user, dep, tx, window, time.Now())
			return err
		})
	}
	wrongUser, _ := d.User(t, "Wrong")
	rightUser, _ := d.User(t, "Right")
	wrong := mustCreate(t, d, wrongUser, hundredUSDT)
	right := mustCreate(t, d, rightUser, hundredUSDT)
	tx := fmt.Sprintf("%064x", 4401)
	exec(t, d, `INSERT INTO chain_transfers (network, tx_id, token, from_address, to_address, amount_raw, amount_minor,
		block_time, block_number, status, reason, needs_review) VALUES ('TRC20', $1, 'USDT-contract', 'payer', $2, '1', 90000000, now(), 10, 'unmatched', 'no_reservation', true)`,
		tx, tron.DevTreasuryAddress)
	id := transferID(t, d, tx)

	if err := claim(wrongUser, wrong.ID, tx); err != nil {
		t.Fatalf("the wrong claim: %v", err)
	}
	if err := claim(rightUser, right.ID, tx); err != nil {
		t.Fatalf("the right claim while the wrong one holds it = %v; want a second claim", err)
	}
	if err := deposit.Settle(ctx, d.Store, id, deposit.MoveSettleReject, "ops", "not this payer's"); err != nil {
		t.Fatalf("reject: %v", err)
	}
	if n := count(t, d, "SELECT count(*) FROM chain_transfers WHERE id = $1 AND deposit_id = $2", id, right.ID); n != 1 {
		t.Fatal("the reject did not attach the transfer to the next claim")
	}
	if err := claim(wrongUser, wrong.ID, tx); !errors.Is(err, deposit.ErrTransferTaken) {
		t.Fatalf("the rejected deposit's claim again = %v; want ErrTransferTaken", err)
	}
	if err := deposit.Settle(ctx, d.Store, id, deposit.MoveSettleCredit, "ops", "paid short"); err != nil {
		t.Fatalf("credit: %v", err)
	}
	if got := read(t, d, right.ID); got.Status != deposit.StatusCredited || got.CreditedAmount != 90000000 {
		t.Fatalf("the right deposit: %+v; want credited with the 90 USDT received", got)
	}
	if got := read(t, d, wrong.ID); got.Status != deposit.StatusAwaitingTransfer || got.CreditedAmount != 0 {
		t.Fatalf("the wrong deposit: %+v; want awaiting_transfer, nothing credited", got)
	}
}

// TestSettlements_NoTransferEndsUnclaimableAndUnsettled runs random
// sequences of claims, rejects, credits and refunds over a few deposits and
// transfers, then checks every transfer: settled (credited or refunded),
// attached to a deposit under review with it (an operator can settle it),
// or claimable by a new deposit of its time.
func TestSettlements_NoTransferEndsUnclaimableAndUnsettled(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	ctx := context.Background()
	const window = time.Hour
	r := rand.New(rand.NewPCG(44, 3))
	claim := func(user, dep uuid.UUID, tx string) error {
		return d.Store.InTx(ctx, func(q store.Tx) error {
			_, err := deposit.Claim(ctx, q, user, dep, tx, window, time.Now())
			return err
		})
	}
	moves := []deposit.Move{deposit.MoveSettleReject, deposit.MoveSettleCredit, deposit.MoveSettleRefund}
	for run := range 12 {
		users := make([]uuid.UUID, 3)
		deps := make([]uuid.UUID, 3)
		for i := range users {
			users[i], _ = d.User(t, fmt.Sprintf("P%d-%d", run, i))
			deps[i] = mustCreate(t, d, users[i], hundredUSDT).ID
		}
		txs := make([]string, 2)
		ids := make([]int64, 2)
		for i := range txs {
			txs[i] = fmt.Sprintf("%064x", 100*run+i+1)
			exec(t, d, `INSERT INTO chain_transfers (network, tx_id, token, from_address, to_address, amount_raw, amount_minor,
				block_time, block_number, status, reason, needs_review) VALUES ('TRC20', $1, 'USDT-contract', 'payer', $2, '1', 50000000, now(), 10, 'unmatched', 'no_reservation', true)`,
				txs[i], tron.DevTreasuryAddress)
			ids[i] = transferID(t, d, txs[i])
		}
		var trace []string
		for range 20 {
			j := r.IntN(len(txs))
			if r.IntN(2) == 0 {
				i := r.IntN(len(deps))
				err := claim(users[i], deps[i], txs[j])
				trace = append(trace, fmt.Sprintf("claim(d%d,t%d)=%v", i, j, err))
				continue
			}
			m := moves[r.IntN(len(moves))]
			err := deposit.Settle(ctx, d.Store, ids[j], m, "ops", "property")
			trace = append(trace, fmt.Sprintf("%s(t%d)=%v", m, j, err))
		}
		for j, id := range ids {
			var status string
			var needsReview bool
			var dep *uuid.UUID
			if err := d.Pool.QueryRow(ctx, "SELECT status, needs_review, deposit_id FROM chain_transfers WHERE id = $1", id).
				Scan(&status, &needsReview, &dep); err != nil {
				t.Fatal(err)
			}
			switch {
			case !needsReview && (status == string(deposit.TransferCredited) || status == string(deposit.TransferRefunded)):
				continue // settled
			case dep != nil:
				if n := count(t, d, "SELECT count(*) FROM deposits WHERE id = $1 AND status = 'under_review' AND transfer_tx_id = $2", *dep, txs[j]); n != 1 {
					t.Fatalf("run %d: t%d is attached to a deposit not under review with it\n%v", run, j, trace)
				}
				continue
			}
			// Unsettled and free: a new deposit's claim takes it (rolled back).
			u, _ := d.User(t, fmt.Sprintf("Probe%d-%d", run, j))
			probe := mustCreate(t, d, u, hundredUSDT)
			err := d.Store.InTx(ctx, func(q store.Tx) error {
				if _, err := deposit.Claim(ctx, q, u, probe.ID, txs[j], window, time.Now()); err != nil {
					return err
				}
				return errRollBack
			})
			if !errors.Is(err, errRollBack) {
				t.Fatalf("run %d: t%d (%s) is unsettled and unclaimable: %v\n%v", run, j, status, err, trace)
			}
		}
	}
}
