package deposit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"creativeapi/internal/deposit"
	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
	"creativeapi/internal/tron"
)

// TestClaim_WithinTheShortfallToleranceIsCreditedAtOnceByPolicy: a claimed
// transfer short by no more than the tolerance, or above the requested
// amount, credits the deposit with the amount received in the claim's
// transaction, its settlement naming the policy; one short by more stays
// under review for an operator (docs/deposits.md, "The shortfall tolerance").
func TestClaim_WithinTheShortfallToleranceIsCreditedAtOnceByPolicy(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	ctx := context.Background()
	n := 0
	for name, c := range map[string]struct {
		// short is how much less than requested was sent (negative: more).
		short      int64
		wantStatus deposit.Status
	}{
		"short by exactly the cap of 1 USDT":  {1_000_000, deposit.StatusCredited},
		"short by a network fee of 0.35 USDT": {350_000, deposit.StatusCredited},
		"overpaid by 5 USDT":                  {-5_000_000, deposit.StatusCredited},
		"short by 1 USDT and one micro-USDT":  {1_000_001, deposit.StatusUnderReview},
	} {
		n++
		tx := fmt.Sprintf("%064x", 5100+n)
		t.Run(name, func(t *testing.T) {
			user, _ := d.User(t, "Payer "+name)
			dep := mustCreate(t, d, user, hundredUSDT)
			received := dep.RequestedAmountMinor - c.short
			exec(t, d, `INSERT INTO chain_transfers (network, tx_id, token, from_address, to_address, amount_raw, amount_minor,
				block_time, block_number, status, reason, needs_review) VALUES ('TRC20', $1, 'USDT-contract', 'payer', $2, $3::text, $3::bigint, now(), 10, 'unmatched', 'no_reservation', true)`,
				tx, tron.DevTreasuryAddress, fmt.Sprint(received))
			var got deposit.Status
			err := d.Store.InTx(ctx, func(q store.Tx) error {
				out, err := deposit.Claim(ctx, q, user, dep.ID, tx, time.Hour, deposit.DefaultTolerance(), time.Now())
				got = deposit.Status(out.Status)
				return err
			})
			if err != nil || got != c.wantStatus {
				t.Fatalf("claim = %s, %v; want %s", got, err, c.wantStatus)
			}
			stored := read(t, d, dep.ID)
			settledByPolicy := count(t, d, `SELECT count(*) FROM chain_transfer_settlements s JOIN chain_transfers t ON t.id = s.transfer_id
				WHERE t.tx_id = $1 AND s.operator = 'policy' AND s.decision = 'credit' AND s.deposit_id = $2`, tx, dep.ID)
			events := count(t, d, `SELECT count(*) FROM outbox_events WHERE type = 'deposit.credited' AND payload->'data'->>'id' = $1`, dep.ID.String())
			if c.wantStatus == deposit.StatusCredited {
				if stored.CreditedAmount != received || settledByPolicy != 1 || events != 1 ||
					count(t, d, "SELECT count(*) FROM chain_transfers WHERE tx_id = $1 AND status = 'credited' AND NOT needs_review", tx) != 1 ||
					count(t, d, "SELECT count(*) FROM ledger_entries WHERE source_id = $1 AND amount_minor = $2", dep.ID.String(), received) != 1 {
					t.Fatalf("credited %d (want %d), policy settlements %d, credited events %d", stored.CreditedAmount, received, settledByPolicy, events)
				}
				return
			}
			if stored.CreditedAmount != 0 || settledByPolicy != 0 {
				t.Fatalf("beyond the tolerance: %+v, policy settlements %d", stored, settledByPolicy)
			}
		})
	}
}
