package chainwatch_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/db"
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
	users    []uuid.UUID
}

// TestLedger_RandomHistoriesKeepMoneyExact drives the watcher through
// random sequences of deposits, on-time, late, short and stray payments,
// forks (a transaction forgotten before its block is solidified, and
// remembered again), failed receipts, payers' claims (right or wrong),
// operator settlements (credit, refund, reject), payers' cancels (and
// payments after them), payers' top-ups of short payments (paid on time,
// or never), sweeps and rescans, and after every step holds: the ledger's
// sum = the sum of the credited deposits' credited amounts = the sum of
// the amounts their transactions actually paid (a deposit completed by a
// top-up holds both; its top-up is credited with 0); one ledger entry per
// credited deposit holding money, none for a top-up taken in; no transaction
// credits twice; no forgotten transaction is credited; no transfer
// rejected for a deposit is credited to it; every recorded transfer is
// credited to exactly one deposit, refunded, waiting for an operator, or
// still in the watcher's hands (confirming, failed, vanished); a cancelled
// deposit holds no transfer and no credit; and money moves to a person
// only on proof (checkProof): no user's balance includes a transfer that neither
// matched their deposit exactly, nor carried its fingerprint, nor was
// credited to them by an operator. Several users make deposits, and claim
// their own transfers and strangers'. The histories together must have
// made claims, rejections, credits of claimed transfers by an operator,
// credits by the shortfall policy of transfers carrying a fingerprint,
// cancels and deposits completed by a top-up, or the test proves nothing
// of them.
func TestLedger_RandomHistoriesKeepMoneyExact(t *testing.T) {
	t.Parallel()
	var total counts
	var mu sync.Mutex
	t.Cleanup(func() {
		if !t.Failed() && (total.claims == 0 || total.rejects == 0 || total.claimedCredits == 0 || total.policyCredits == 0 || total.cancels == 0 ||
			total.topUps == 0 || total.topUpCredits == 0) {
			t.Errorf("the histories made %+v; want some of each", total)
		}
	})
	for seed := range uint64(10) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			t.Parallel()
			c := runLedgerHistory(t, seed, 180)
			mu.Lock()
			defer mu.Unlock()
			total.claims += c.claims
			total.rejects += c.rejects
			total.claimedCredits += c.claimedCredits
			total.policyCredits += c.policyCredits
			total.cancels += c.cancels
			total.topUps += c.topUps
			total.topUpCredits += c.topUpCredits
		})
	}
}

// counts is what a history did of the moves the test must see made.
type counts struct {
	claims, rejects, claimedCredits, policyCredits, cancels int64
	topUps, topUpCredits                                    int64
}

// runLedgerHistory runs one random history and answers how many claims,
// rejections, credits of a claimed transfer and cancels it made.
func runLedgerHistory(t *testing.T, seed uint64, steps int) (n counts) {
	w, b := setup(t)
	rnd := rand.New(rand.NewPCG(seed, 29))
	m := &ledgerModel{payments: map[string]*payment{}, head: 1, users: []uuid.UUID{b.user}}
	for _, name := range []string{"Claiming Claire", "Thieving Theo"} {
		u, _ := b.d.User(t, name)
		m.users = append(m.users, u)
	}
	settings := deposit.Settings{Address: tron.DevTreasuryAddress, Confirmations: required,
		TTL: 30 * time.Minute, MonitoringWindow: 24 * time.Hour, MaxOpenPerUser: 1000}
	ctx := context.Background()
	pay := func(amount int64) {
		tx := b.chain.Pay(devchain.Payment{To: tron.DevTreasuryAddress, Value: itoa(amount)})
		m.head = b.chain.Mine(1)
		m.payments[tx] = &payment{amount: amount, block: m.head}
		m.order = append(m.order, tx)
	}
	// awaiting picks a deposit still waiting for its transfer (a payer's,
	// not a top-up, which the top-up step pays).
	awaiting := func() (uuid.UUID, int64, bool) {
		var id uuid.UUID
		var amount int64
		err := b.d.Pool.QueryRow(ctx, `SELECT id, requested_amount_minor FROM deposits
			WHERE status = 'awaiting_transfer' AND transfer_tx_id IS NULL AND expires_at > now() AND reserved AND top_up_of IS NULL
			ORDER BY id OFFSET $1 LIMIT 1`, rnd.IntN(3)).Scan(&id, &amount)
		return id, amount, err == nil
	}
	// topUp is a payer short beyond the tolerance asking for a top-up of
	// deposit dep, and mostly paying it on time (or never).
	topUp := func(step int, dep, user uuid.UUID) string {
		var amount *int64
		err := b.d.Store.InTx(ctx, func(q store.Tx) error {
			d, err := deposit.TopUp(ctx, q, settings, user, dep, deposit.DefaultTolerance(), time.Now())
			amount = d.TopUpAmountMinor
			return err
		})
		var r *deposit.Refusal
		if err != nil && !errors.As(err, &r) && !errors.Is(err, deposit.ErrCapacityExhausted) {
			t.Fatalf("step %d: top-up of %s: %v", step, dep, err)
		}
		did := fmt.Sprintf("top-up %s (%v)", dep, err)
		if err == nil && amount != nil {
			n.topUps++
			if rnd.IntN(4) != 0 {
				pay(*amount)
				did += fmt.Sprintf(", paid %d", *amount)
				// Mostly, the chain moves on and the watcher reads
				// it at once; else later steps decide (an operator
				// may settle the deposit first).
				if rnd.IntN(3) != 0 {
					m.head = b.chain.Mine(devchain.DefaultSolidLag + required)
					if _, err := w.Poll(ctx); err != nil {
						t.Fatalf("step %d: poll: %v", step, err)
					}
					did += ", mined and polled"
				}
			}
		}
		return did
	}
	var log []string
	for step := range steps {
		var did string
		switch k := rnd.IntN(19); k {
		case 0, 1:
			user := m.users[rnd.IntN(len(m.users))]
			var dep db.Deposit
			if err := b.d.Store.InTx(ctx, func(q store.Tx) error {
				var err error
				dep, err = deposit.Create(ctx, q, settings, user, int64(10+10*rnd.IntN(3))*1_000_000)
				return err
			}); err != nil {
				t.Fatalf("step %d: create: %v", step, err)
			}
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
			if id, amount, ok := awaiting(); ok {
				// Short beyond the tolerance (0.5 USDT of 10 to 30) in
				// whole cents (it keeps the fingerprint: attached for
				// review) or not (unmatched, for a claim), by a fee in
				// whole cents inside it (credited by its fingerprint), or
				// by a fee of 0.5% (mostly breaking the fingerprint).
				short := []int64{500_000, 500_000, 500_001, 500_001, 50_000, amount / 200}[rnd.IntN(6)]
				pay(amount - short)
				did = fmt.Sprint("pay short by ", short)
				// Often the payer of a short payment the watcher attached
				// by its fingerprint fixes it at once.
				if short == 500_000 && rnd.IntN(3) != 0 {
					m.head = b.chain.Mine(devchain.DefaultSolidLag + 1)
					if _, err := w.Poll(ctx); err != nil {
						t.Fatalf("step %d: poll: %v", step, err)
					}
					var user uuid.UUID
					if err := b.d.Pool.QueryRow(ctx, "SELECT user_id FROM deposits WHERE id = $1 AND status = 'under_review'", id).Scan(&user); err == nil {
						did += ", " + topUp(step, id, user)
					}
				}
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
		case 10, 18:
			var id int64
			var claimed bool
			if err := b.d.Pool.QueryRow(ctx, `SELECT id, status = 'unmatched' AND deposit_id IS NOT NULL FROM chain_transfers WHERE needs_review
				ORDER BY status = 'unmatched' AND deposit_id IS NOT NULL DESC, deposit_id IS NOT NULL DESC, id OFFSET $1 LIMIT 1`, rnd.IntN(2)).Scan(&id, &claimed); err == nil {
				// A claimed transfer is credited more often than the others
				// are: claims beyond the tolerance are rarer since the
				// policy credits the rest and top-ups complete some, and
				// the test must see some.
				moves := []deposit.Move{deposit.MoveSettleCredit, deposit.MoveSettleRefund, deposit.MoveSettleReject}
				if claimed {
					moves = append(moves, deposit.MoveSettleCredit, deposit.MoveSettleCredit, deposit.MoveSettleCredit, deposit.MoveSettleCredit)
				}
				mv := moves[rnd.IntN(len(moves))]
				err := deposit.Settle(ctx, b.d.Store, id, mv, "ops", "property test")
				if err != nil && !errors.Is(err, deposit.ErrNoDeposit) && !errors.Is(err, deposit.ErrNotForReview) &&
					!errors.Is(err, deposit.ErrNotCreditable) && !errors.Is(err, store.ErrConflict) {
					t.Fatalf("step %d: settle %d by %s: %v", step, id, mv, err)
				}
				switch {
				case err == nil && mv == deposit.MoveSettleReject:
					n.rejects++
				case err == nil && mv == deposit.MoveSettleCredit && claimed:
					n.claimedCredits++
				}
				did = fmt.Sprintf("settle %d %s claimed=%v (%v)", id, mv, claimed, err)
			}
		case 12, 13, 16, 17:
			// A payer names an unmatched transfer as theirs, rightly (a
			// short payment for their deposit) or not (any other).
			var dep, user uuid.UUID
			var tx string
			query := `SELECT d.id, d.user_id, t.tx_id
				FROM (SELECT * FROM deposits WHERE status IN ('awaiting_transfer', 'expired') AND transfer_tx_id IS NULL AND top_up_of IS NULL
				      ORDER BY id OFFSET $1 LIMIT 1) d,
				     (SELECT * FROM chain_transfers WHERE status = 'unmatched' AND needs_review
				      AND (deposit_id IS NULL OR reason <> 'amount_mismatch')
				      AND amount_minor IS NOT NULL ORDER BY id OFFSET $2 LIMIT 1) t`
			if k >= 16 {
				// A fitting pair: a transfer after the deposit was made,
				// short beyond the tolerance, so it waits for an operator
				// or a top-up.
				query = `SELECT d.id, d.user_id, t.tx_id FROM deposits d
					JOIN chain_transfers t ON t.status = 'unmatched' AND t.needs_review AND t.deposit_id IS NULL
					     AND t.block_time >= d.created_at AND t.amount_minor < d.requested_amount_minor - 400000
					WHERE d.status IN ('awaiting_transfer', 'expired') AND d.transfer_tx_id IS NULL AND d.top_up_of IS NULL
					ORDER BY d.id, t.id OFFSET $1 / 2 + $2 LIMIT 1`
			}
			if err := b.d.Pool.QueryRow(ctx, query, rnd.IntN(3), rnd.IntN(2)).Scan(&dep, &user, &tx); err == nil {
				var status string
				err := b.d.Store.InTx(ctx, func(q store.Tx) error {
					d, err := deposit.Claim(ctx, q, user, dep, tx, 24*time.Hour, time.Now())
					status = d.Status
					return err
				})
				var r *deposit.Refusal
				if err != nil && !errors.Is(err, deposit.ErrTransferTaken) && !errors.Is(err, deposit.ErrTransferUnfit) &&
					!errors.Is(err, deposit.ErrTooManyClaims) && !errors.As(err, &r) {
					t.Fatalf("step %d: claim %s for %s: %v", step, tx[:6], dep, err)
				}
				if err == nil {
					n.claims++
				}
				if err == nil && deposit.Status(status) != deposit.StatusUnderReview {
					t.Fatalf("step %d: claim %s for %s: %s; a claim never credits", step, tx[:6], dep, status)
				}
				did = fmt.Sprintf("claim %s (%v)", tx[:6], err)
				// A claimed transfer never takes a top-up: a claimant could
				// top a stranger's payment up to their own amount.
				if err == nil {
					terr := b.d.Store.InTx(ctx, func(q store.Tx) error {
						_, err := deposit.TopUp(ctx, q, settings, user, dep, deposit.DefaultTolerance(), time.Now())
						return err
					})
					if !errors.As(terr, &r) {
						t.Fatalf("step %d: top-up of claimed %s: %v; want a refusal", step, dep, terr)
					}
				}
			}
		case 14:
			// The payer cancels a deposit awaiting its transfer, and
			// sometimes pays its amount all the same.
			// Rarely: a cancelled deposit takes no short payment, and
			// the claims and settlements need those.
			if id, amount, ok := awaiting(); ok && rnd.IntN(3) == 0 {
				var user uuid.UUID
				if err := b.d.Pool.QueryRow(ctx, "SELECT user_id FROM deposits WHERE id = $1", id).Scan(&user); err != nil {
					t.Fatal(err)
				}
				err := b.d.Store.InTx(ctx, func(q store.Tx) error {
					_, err := deposit.Cancel(ctx, q, user, id, time.Now())
					return err
				})
				var r *deposit.Refusal
				if err != nil && !errors.As(err, &r) {
					t.Fatalf("step %d: cancel %s: %v", step, id, err)
				}
				did = fmt.Sprintf("cancel %s (%v)", id, err)
				if err == nil {
					n.cancels++
					if rnd.IntN(2) == 0 {
						pay(amount)
						did += ", paid anyway"
					}
				}
			}
		case 15:
			// A payer asks for a top-up later.
			var dep, user uuid.UUID
			// Mostly one the watcher attached by its fingerprint, the
			// kind that takes one.
			if err := b.d.Pool.QueryRow(ctx, `SELECT id, user_id FROM deposits d
				WHERE status = 'under_review' AND review_reason = 'amount_mismatch' AND top_up_of IS NULL
				ORDER BY EXISTS (SELECT 1 FROM chain_transfers t WHERE t.deposit_id = d.id AND t.reason = 'amount_mismatch') DESC, id
				OFFSET $1 LIMIT 1`, rnd.IntN(3)/2).Scan(&dep, &user); err == nil {
				did = topUp(step, dep, user)
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
		count(*) FILTER (WHERE status = 'refunded'),
		count(*) FILTER (WHERE status = 'credited' AND EXISTS (SELECT 1 FROM deposits c
		    WHERE c.top_up_of = deposits.id AND c.status = 'credited' AND c.credited_amount_minor = 0))
		FROM deposits`).Scan(&credited, &review, &refunded, &n.topUpCredits); err != nil {
		t.Fatal(err)
	}
	if err := b.d.Pool.QueryRow(ctx, `SELECT count(*) FROM deposits WHERE status = 'credited' AND review_reason = 'amount_mismatch'`).
		Scan(&n.policyCredits); err != nil {
		t.Fatal(err)
	}
	t.Logf("seed %d: %d steps, %d deposits credited, %d under review, %d refunded, %+v: %v",
		seed, steps, credited, review, refunded, n, log)
	return n
}

// check holds the invariants of the ledger.
func (m *ledgerModel) check(t *testing.T, b *bundle, step int, log []string) {
	t.Helper()
	ctx := context.Background()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("step %d, after %v: %s", step, log, fmt.Sprintf(format, args...))
	}
	var sum int64
	var entries int
	if err := b.d.Pool.QueryRow(ctx, "SELECT coalesce(sum(amount_minor), 0), count(*) FROM ledger_entries").Scan(&sum, &entries); err != nil {
		t.Fatal(err)
	}
	rows, err := b.d.Pool.Query(ctx, "SELECT transfer_tx_id, credited_amount_minor FROM deposits WHERE status = 'credited'")
	// A top-up taken in by its deposit is credited with 0 and has no
	// entry: its money is in its deposit's.
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
		if amount > 0 {
			n++
		}
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
	m.checkProof(t, b, fail)
	var takenIn int
	if err := b.d.Pool.QueryRow(ctx, `SELECT count(*) FROM deposits c WHERE c.status = 'credited' AND c.credited_amount_minor = 0
		AND NOT (c.top_up_of IS NOT NULL AND EXISTS (SELECT 1 FROM deposits p WHERE p.id = c.top_up_of AND p.status = 'credited'))`).Scan(&takenIn); err != nil || takenIn != 0 {
		fail("%d deposits credited with nothing that are no top-up taken in by a credited deposit (%v)", takenIn, err)
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
	// Every transfer ends credited to exactly one deposit, refunded, or
	// waiting for an operator; confirming, failed and vanished ones are
	// still the watcher's.
	var stray int
	if err := b.d.Pool.QueryRow(ctx, `SELECT count(*) FROM chain_transfers t WHERE NOT (
		    (t.status = 'credited' AND NOT t.needs_review AND (SELECT count(*) FROM deposits d
		         WHERE d.status = 'credited' AND d.transfer_tx_id = t.tx_id) = 1)
		 OR (t.status = 'refunded' AND NOT t.needs_review)
		 OR (t.status IN ('late', 'unmatched') AND t.needs_review)
		 OR t.status IN ('confirming', 'failed', 'vanished'))`).Scan(&stray); err != nil || stray != 0 {
		fail("%d transfers neither credited to exactly one deposit, refunded, waiting for an operator, nor the watcher's (%v)", stray, err)
	}
	// A transfer that once matched a deposit and then failed, vanished or
	// could not credit it keeps its deposit_id for the record; none pays
	// or waits for a cancelled deposit.
	var cancelled int
	if err := b.d.Pool.QueryRow(ctx, `SELECT count(*) FROM deposits WHERE status = 'cancelled'
		AND (reserved OR transfer_tx_id IS NOT NULL OR credited_amount_minor <> 0
		     OR EXISTS (SELECT 1 FROM chain_transfers t WHERE t.deposit_id = deposits.id AND t.status IN ('confirming', 'credited', 'late')))`).Scan(&cancelled); err != nil || cancelled != 0 {
		fail("%d cancelled deposits hold a reservation, a transfer or a credit (%v)", cancelled, err)
	}
}

// checkProof holds that money moved to a person only on proof: every
// deposit holding a credit was paid by a transfer that matched it exactly
// (a top-up credited alone is its own deposit), carried its fingerprint
// (the last four digits of the amount are its suffix: credited by the
// policy, or completed by a top-up), or was credited to it by an operator
// (a settlement naming a person, not the policy).
func (m *ledgerModel) checkProof(t *testing.T, b *bundle, fail func(string, ...any)) {
	t.Helper()
	rows, err := b.d.Pool.Query(context.Background(), `SELECT d.id, d.user_id, d.transfer_tx_id, d.requested_amount_minor, d.suffix_minor,
		    EXISTS (SELECT 1 FROM chain_transfer_settlements s JOIN chain_transfers t ON t.id = s.transfer_id
		            WHERE t.tx_id = d.transfer_tx_id AND s.deposit_id = d.id AND s.decision = 'credit' AND s.operator <> 'policy')
		FROM deposits d WHERE d.status = 'credited' AND d.credited_amount_minor > 0`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, user uuid.UUID
		var tx string
		var requested int64
		var suffix int32
		var byOperator bool
		if err := rows.Scan(&id, &user, &tx, &requested, &suffix, &byOperator); err != nil {
			t.Fatal(err)
		}
		p := m.payments[tx]
		if p == nil {
			fail("deposit %s is credited with transaction %s, never paid", id, tx)
			return
		}
		if p.amount != requested && deposit.FingerprintOf(p.amount) != int64(suffix) && !byOperator {
			fail("user %s holds transfer %s of %d in deposit %s (requested %d, suffix %04d): no exact match, no fingerprint, no operator",
				user, tx, p.amount, id, requested, suffix)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}
