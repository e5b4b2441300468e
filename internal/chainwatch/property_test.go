package chainwatch_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/internal/deposit"
	"creativeapi/internal/devchain"
	"creativeapi/internal/store"
	"creativeapi/internal/tron"
)

// payment is a transfer the test sent to the treasury.
type payment struct {
	amount  int64
	block   int64
	removed bool
}

// ledgerModel is what the property test knows of the chain it drives.
type ledgerModel struct {
	payments map[string]*payment
	order    []string
	head     int64
	deposits []uuid.UUID
}

// TestLedger_RandomHistoriesKeepMoneyExact drives the watcher through
// random sequences of deposits, on-time, late, short and stray payments,
// forks (a transaction forgotten before its block is solidified, and
// remembered again), failed receipts, payers' claims (right or wrong),
// operator settlements (credit, refund, reject), sweeps and rescans, and
// after every step holds: the ledger's sum = the sum of the credited
// deposits' credited amounts = the sum of the amounts their transactions
// actually paid; one ledger entry per credited deposit; no transaction
// credits twice; no forgotten transaction is credited; no transfer
// rejected for a deposit is credited to it. The histories together must
// have made claims, rejections and credits of claimed transfers, or the
// test proves nothing of them.
func TestLedger_RandomHistoriesKeepMoneyExact(t *testing.T) {
	t.Parallel()
	var claims, rejects, claimedCredits atomic.Int64
	t.Cleanup(func() {
		if !t.Failed() && (claims.Load() == 0 || rejects.Load() == 0 || claimedCredits.Load() == 0) {
			t.Errorf("the histories made %d claims, %d rejections, %d credits of a claimed transfer; want some of each",
				claims.Load(), rejects.Load(), claimedCredits.Load())
		}
	})
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			t.Parallel()
			c, r, cc := runLedgerHistory(t, seed, 100)
			claims.Add(c)
			rejects.Add(r)
			claimedCredits.Add(cc)
		})
	}
}

// runLedgerHistory runs one random history and answers how many claims,
// rejections and credits of a claimed transfer it made.
func runLedgerHistory(t *testing.T, seed uint64, steps int) (claims, rejects, claimedCredits int64) {
	w, b := setup(t)
	rnd := rand.New(rand.NewPCG(seed, 29))
	m := &ledgerModel{payments: map[string]*payment{}, head: 1}
	ctx := context.Background()
	pay := func(amount int64) {
		tx := b.chain.Pay(devchain.Payment{To: tron.DevTreasuryAddress, Value: itoa(amount)})
		m.head = b.chain.Mine(1)
		m.payments[tx] = &payment{amount: amount, block: m.head}
		m.order = append(m.order, tx)
	}
	// awaiting picks a deposit still waiting for its transfer.
	awaiting := func() (uuid.UUID, int64, bool) {
		var id uuid.UUID
		var amount int64
		err := b.d.Pool.QueryRow(ctx, `SELECT id, requested_amount_minor FROM deposits
			WHERE status = 'awaiting_transfer' AND transfer_tx_id IS NULL AND expires_at > now() AND reserved
			ORDER BY id OFFSET $1 LIMIT 1`, rnd.IntN(3)).Scan(&id, &amount)
		return id, amount, err == nil
	}
	var log []string
	for step := range steps {
		var did string
		switch k := rnd.IntN(14); k {
		case 0, 1:
			dep := b.deposit(t, int64(10+10*rnd.IntN(3))*1_000_000)
			m.deposits = append(m.deposits, dep.ID)
			did = "create"
		case 2, 3:
			if _, amount, ok := awaiting(); ok {
				pay(amount)
				did = "pay on time"
			}
		case 4:
			if id, amount, ok := awaiting(); ok {
				b.exec(t, "UPDATE deposits SET expires_at = now() - interval '1 second', created_at = now() - interval '1 minute' WHERE id = $1", id)
				pay(amount)
				did = "pay late"
			}
		case 5:
			if _, amount, ok := awaiting(); ok {
				pay(amount - 500_000)
				did = "pay short"
			} else {
				pay(int64(1 + rnd.IntN(50_000_000)))
				did = "pay stray"
			}
		case 6:
			m.head = b.chain.Mine(1 + rnd.IntN(devchain.DefaultSolidLag+required))
			did = "mine"
		case 7, 8:
			if _, err := w.Poll(ctx); err != nil {
				t.Fatalf("step %d: poll: %v", step, err)
			}
			did = "poll"
		case 9:
			// A fork: a transaction not yet solidified is forgotten, or a
			// forgotten one comes back.
			solid := m.head - devchain.DefaultSolidLag
			for _, tx := range m.order {
				p := m.payments[tx]
				if p.block > solid && rnd.IntN(2) == 0 {
					if p.removed {
						b.chain.Remember(tx)
					} else {
						b.chain.Forget(tx)
					}
					p.removed = !p.removed
					did = "fork " + tx[:6]
					break
				}
			}
		case 10:
			var id int64
			var claimed bool
			if err := b.d.Pool.QueryRow(ctx, `SELECT id, status = 'unmatched' AND deposit_id IS NOT NULL FROM chain_transfers WHERE needs_review
				ORDER BY deposit_id IS NOT NULL DESC, id OFFSET $1 LIMIT 1`, rnd.IntN(2)).Scan(&id, &claimed); err == nil {
				mv := []deposit.Move{deposit.MoveSettleCredit, deposit.MoveSettleRefund, deposit.MoveSettleReject}[rnd.IntN(3)]
				err := deposit.Settle(ctx, b.d.Store, id, mv, "ops", "property test")
				if err != nil && !errors.Is(err, deposit.ErrNoDeposit) && !errors.Is(err, deposit.ErrNotForReview) &&
					!errors.Is(err, deposit.ErrNotCreditable) && !errors.Is(err, store.ErrConflict) {
					t.Fatalf("step %d: settle %d by %s: %v", step, id, mv, err)
				}
				switch {
				case err == nil && mv == deposit.MoveSettleReject:
					rejects++
				case err == nil && mv == deposit.MoveSettleCredit && claimed:
					claimedCredits++
				}
				did = fmt.Sprintf("settle %d %s (%v)", id, mv, err)
			}
		case 12, 13:
			// A payer names an unmatched transfer as theirs, rightly (a
			// short payment for their deposit) or not (any other).
			var dep, user uuid.UUID
			var tx string
			if err := b.d.Pool.QueryRow(ctx, `SELECT d.id, d.user_id, t.tx_id
				FROM (SELECT * FROM deposits WHERE status IN ('awaiting_transfer', 'expired') AND transfer_tx_id IS NULL ORDER BY id OFFSET $1 LIMIT 1) d,
				     (SELECT * FROM chain_transfers WHERE status = 'unmatched' AND needs_review AND deposit_id IS NULL
				      AND amount_minor IS NOT NULL ORDER BY id OFFSET $2 LIMIT 1) t`, rnd.IntN(3), rnd.IntN(2)).Scan(&dep, &user, &tx); err == nil {
				err := b.d.Store.InTx(ctx, func(q store.Tx) error {
					_, err := deposit.Claim(ctx, q, user, dep, tx, 24*time.Hour, deposit.DefaultTolerance(), time.Now())
					return err
				})
				var r *deposit.Refusal
				if err != nil && !errors.Is(err, deposit.ErrTransferTaken) && !errors.Is(err, deposit.ErrTransferUnfit) && !errors.As(err, &r) {
					t.Fatalf("step %d: claim %s for %s: %v", step, tx[:6], dep, err)
				}
				if err == nil {
					claims++
				}
				did = fmt.Sprintf("claim %s (%v)", tx[:6], err)
			}
		case 11:
			if rnd.IntN(2) == 0 {
				if _, err := w.Rescan(ctx, time.Now().Add(-24*time.Hour)); err != nil {
					t.Fatalf("step %d: rescan: %v", step, err)
				}
				did = "rescan"
			} else {
				if err := deposit.Sweep(ctx, b.d.Store, logger()); err != nil {
					t.Fatal(err)
				}
				did = "sweep"
			}
		}
		if did != "" {
			log = append(log, did)
		}
		m.check(t, b, step, log)
	}
	var credited, review, refunded int
	if err := b.d.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'credited'), count(*) FILTER (WHERE status = 'under_review'),
		count(*) FILTER (WHERE status = 'refunded') FROM deposits`).Scan(&credited, &review, &refunded); err != nil {
		t.Fatal(err)
	}
	t.Logf("seed %d: %d steps, %d deposits credited, %d under review, %d refunded, %d claims, %d rejections: %v",
		seed, steps, credited, review, refunded, claims, rejects, log)
	return claims, rejects, claimedCredits
}

// check holds the invariants of the ledger.
func (m *ledgerModel) check(t *testing.T, b *bundle, step int, log []string) {
	t.Helper()
	ctx := context.Background()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("step %d, after %v: %s", step, log, fmt.Sprintf(format, args...))
	}
	sum, entries := b.balance(t)
	rows, err := b.d.Pool.Query(ctx, "SELECT transfer_tx_id, credited_amount_minor FROM deposits WHERE status = 'credited'")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var credited, paid int64
	n := 0
	seen := map[string]bool{}
	for rows.Next() {
		var tx *string
		var amount int64
		if err := rows.Scan(&tx, &amount); err != nil {
			t.Fatal(err)
		}
		n++
		credited += amount
		switch {
		case tx == nil:
			fail("a credited deposit names no transaction")
		case seen[*tx]:
			fail("transaction %s credited twice", *tx)
		case m.payments[*tx] == nil:
			fail("transaction %s was never paid", *tx)
		case m.payments[*tx].removed:
			fail("transaction %s is credited but forked away", *tx)
		}
		seen[*tx] = true
		paid += m.payments[*tx].amount
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if sum != credited || credited != paid || entries != n {
		fail("ledger %d in %d entries; credited deposits %d in %d; their transactions paid %d", sum, entries, credited, n, paid)
	}
	var twice int
	if err := b.d.Pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT tx_id FROM chain_transfers WHERE status = 'credited'
		GROUP BY tx_id HAVING count(*) > 1) x`).Scan(&twice); err != nil || twice != 0 {
		fail("%d transactions recorded as credited twice (%v)", twice, err)
	}
	var rejected int
	if err := b.d.Pool.QueryRow(ctx, `SELECT count(*) FROM chain_transfer_settlements s
		JOIN chain_transfers t ON t.id = s.transfer_id JOIN deposits d ON d.id = s.deposit_id
		WHERE s.decision = 'reject' AND (d.transfer_tx_id = t.tx_id OR t.deposit_id = d.id)`).Scan(&rejected); err != nil || rejected != 0 {
		fail("%d transfers rejected for a deposit are attached to it or paid it again (%v)", rejected, err)
	}
}
