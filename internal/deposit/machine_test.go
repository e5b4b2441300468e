package deposit_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"creativeapi/gen/db"
	"creativeapi/internal/deposit"
	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
	"creativeapi/internal/tron"
)

type depositMove struct {
	m        deposit.Move
	from, to deposit.Status
}

type transferMove struct {
	m        deposit.Move
	from, to deposit.TransferStatus
}

// allowedDepositMoves is every deposit move the ledger makes, written out
// by hand (docs/deposits.md, "States"): the table must allow exactly these.
var allowedDepositMoves = []depositMove{
	{deposit.MoveMatch, deposit.StatusAwaitingTransfer, deposit.StatusConfirming},
	{deposit.MoveMatch, deposit.StatusExpired, deposit.StatusConfirming},
	{deposit.MoveCount, deposit.StatusConfirming, deposit.StatusConfirming},
	{deposit.MoveRevert, deposit.StatusConfirming, deposit.StatusAwaitingTransfer},
	{deposit.MoveRevert, deposit.StatusConfirming, deposit.StatusExpired},
	{deposit.MoveCredit, deposit.StatusAwaitingTransfer, deposit.StatusCredited},
	{deposit.MoveCredit, deposit.StatusConfirming, deposit.StatusCredited},
	{deposit.MoveCreditLate, deposit.StatusAwaitingTransfer, deposit.StatusCredited},
	{deposit.MoveCreditLate, deposit.StatusConfirming, deposit.StatusCredited},
	{deposit.MoveCreditLate, deposit.StatusExpired, deposit.StatusCredited},
	{deposit.MoveCreditLate, deposit.StatusUnderReview, deposit.StatusCredited},
	{deposit.MoveExpire, deposit.StatusAwaitingTransfer, deposit.StatusExpired},
	{deposit.MoveAttachLate, deposit.StatusAwaitingTransfer, deposit.StatusUnderReview},
	{deposit.MoveAttachLate, deposit.StatusExpired, deposit.StatusUnderReview},
	{deposit.MoveRefund, deposit.StatusUnderReview, deposit.StatusRefunded},
	{deposit.MoveClaim, deposit.StatusAwaitingTransfer, deposit.StatusUnderReview},
	{deposit.MoveClaim, deposit.StatusExpired, deposit.StatusUnderReview},
	{deposit.MoveReject, deposit.StatusUnderReview, deposit.StatusAwaitingTransfer},
	{deposit.MoveReject, deposit.StatusUnderReview, deposit.StatusExpired},
	{deposit.MoveCreditPolicy, deposit.StatusConfirming, deposit.StatusCredited},
	{deposit.MoveLoseClaim, deposit.StatusUnderReview, deposit.StatusAwaitingTransfer},
	{deposit.MoveLoseClaim, deposit.StatusUnderReview, deposit.StatusExpired},
	{deposit.MoveAttachMismatch, deposit.StatusAwaitingTransfer, deposit.StatusUnderReview},
	{deposit.MoveAttachMismatch, deposit.StatusExpired, deposit.StatusUnderReview},
	{deposit.MoveCancel, deposit.StatusAwaitingTransfer, deposit.StatusCancelled},
	{deposit.MoveTopUp, deposit.StatusUnderReview, deposit.StatusUnderReview},
	{deposit.MovePayTopUp, deposit.StatusAwaitingTransfer, deposit.StatusCredited},
	{deposit.MovePayTopUp, deposit.StatusConfirming, deposit.StatusCredited},
	{deposit.MoveCreditTopUp, deposit.StatusUnderReview, deposit.StatusCredited},
}

// allowedTransferMoves is every transfer move, written out by hand.
var allowedTransferMoves = []transferMove{
	{deposit.MoveRecord, deposit.TransferUnseen, deposit.TransferConfirming},
	{deposit.MoveRecord, deposit.TransferUnseen, deposit.TransferLate},
	{deposit.MoveRecord, deposit.TransferUnseen, deposit.TransferUnmatched},
	{deposit.MoveRecord, deposit.TransferUnseen, deposit.TransferFailed},
	{deposit.MoveRecord, deposit.TransferVanished, deposit.TransferConfirming},
	{deposit.MoveRecord, deposit.TransferVanished, deposit.TransferLate},
	{deposit.MoveRecord, deposit.TransferVanished, deposit.TransferUnmatched},
	{deposit.MoveRecord, deposit.TransferVanished, deposit.TransferFailed},
	{deposit.MoveRecount, deposit.TransferConfirming, deposit.TransferConfirming},
	{deposit.MoveEnd, deposit.TransferConfirming, deposit.TransferFailed},
	{deposit.MoveEnd, deposit.TransferConfirming, deposit.TransferVanished},
	{deposit.MoveEnd, deposit.TransferConfirming, deposit.TransferUnmatched},
	{deposit.MoveMarkCredited, deposit.TransferConfirming, deposit.TransferCredited},
	{deposit.MoveSettleCredit, deposit.TransferLate, deposit.TransferCredited},
	{deposit.MoveSettleCredit, deposit.TransferUnmatched, deposit.TransferCredited},
	{deposit.MoveSettleRefund, deposit.TransferLate, deposit.TransferRefunded},
	{deposit.MoveSettleRefund, deposit.TransferUnmatched, deposit.TransferRefunded},
	{deposit.MoveSettleReject, deposit.TransferLate, deposit.TransferUnmatched},
	{deposit.MoveSettleReject, deposit.TransferUnmatched, deposit.TransferUnmatched},
	{deposit.MoveSettlePolicy, deposit.TransferLate, deposit.TransferCredited},
	{deposit.MoveSettlePolicy, deposit.TransferUnmatched, deposit.TransferCredited},
}

var (
	depositMoves = []deposit.Move{deposit.MoveMatch, deposit.MoveCount, deposit.MoveRevert, deposit.MoveCredit,
		deposit.MoveCreditLate, deposit.MoveExpire, deposit.MoveAttachLate, deposit.MoveRefund, deposit.MoveClaim, deposit.MoveReject,
		deposit.MoveCreditPolicy, deposit.MoveCancel, deposit.MoveTopUp, deposit.MovePayTopUp, deposit.MoveCreditTopUp,
		deposit.MoveLoseClaim, deposit.MoveAttachMismatch}
	transferMoves = []deposit.Move{deposit.MoveRecord, deposit.MoveRecount, deposit.MoveEnd, deposit.MoveMarkCredited,
		deposit.MoveSettleCredit, deposit.MoveSettleRefund, deposit.MoveSettleReject, deposit.MoveSettlePolicy}
	// everyTransferState is the stored states and the unseen one.
	everyTransferState = append([]deposit.TransferStatus{deposit.TransferUnseen}, deposit.TransferStatuses...)
)

// TestCheckDeposit_AllowsExactlyTheListedMoves checks every move from
// every state to every state: allowed exactly when listed, refused with
// a *Refusal otherwise (also for a status the table does not know).
func TestCheckDeposit_AllowsExactlyTheListedMoves(t *testing.T) {
	t.Parallel()
	if len(deposit.DepositMoves) != len(depositMoves) {
		t.Fatalf("the table has %d deposit moves; the test knows %d", len(deposit.DepositMoves), len(depositMoves))
	}
	states := append(slices.Clone(deposit.Statuses), "paid")
	for _, m := range append(depositMoves, "teleport") {
		for _, from := range states {
			for _, to := range states {
				want := slices.Contains(allowedDepositMoves, depositMove{m, from, to})
				t.Run(fmt.Sprintf("%s %s to %s", m, from, to), func(t *testing.T) {
					err := deposit.CheckDeposit(m, from, to)
					var r *deposit.Refusal
					switch {
					case want && err != nil:
						t.Fatalf("refused: %v", err)
					case !want && !errors.As(err, &r):
						t.Fatalf("allowed (%v); want a refusal", err)
					}
					tos, err := deposit.DecideDeposit(m, from)
					if (err == nil) != slices.ContainsFunc(allowedDepositMoves, func(a depositMove) bool { return a.m == m && a.from == from }) ||
						want && !slices.Contains(tos, to) {
						t.Fatalf("DecideDeposit = %v, %v", tos, err)
					}
				})
			}
		}
	}
}

// TestCheckTransfer_AllowsExactlyTheListedMoves is the same for transfers.
func TestCheckTransfer_AllowsExactlyTheListedMoves(t *testing.T) {
	t.Parallel()
	if len(deposit.TransferMoves) != len(transferMoves) {
		t.Fatalf("the table has %d transfer moves; the test knows %d", len(deposit.TransferMoves), len(transferMoves))
	}
	states := append(slices.Clone(everyTransferState), "bounced")
	for _, m := range append(transferMoves, "teleport") {
		for _, from := range states {
			for _, to := range states {
				want := slices.Contains(allowedTransferMoves, transferMove{m, from, to})
				t.Run(fmt.Sprintf("%s %q to %q", m, from, to), func(t *testing.T) {
					err := deposit.CheckTransfer(m, from, to)
					var r *deposit.Refusal
					switch {
					case want && err != nil:
						t.Fatalf("refused: %v", err)
					case !want && !errors.As(err, &r):
						t.Fatalf("allowed (%v); want a refusal", err)
					}
					tos, err := deposit.DecideTransfer(m, from)
					if (err == nil) != slices.ContainsFunc(allowedTransferMoves, func(a transferMove) bool { return a.m == m && a.from == from }) ||
						want && !slices.Contains(tos, to) {
						t.Fatalf("DecideTransfer = %v, %v", tos, err)
					}
				})
			}
		}
	}
}

func TestTransferStatus_LateAndUnmatchedNeedReview(t *testing.T) {
	t.Parallel()
	for _, s := range everyTransferState {
		if got, want := s.NeedsReview(), s == deposit.TransferLate || s == deposit.TransferUnmatched; got != want {
			t.Errorf("%q.NeedsReview() = %v, want %v", s, got, want)
		}
	}
}

// ledgerRow is a deposit's or transfer's state as stored.
type ledgerRow struct {
	status        string
	confirmations int32
	block         int64
	// attached: the transfer names a deposit.
	attached bool
	// topUp: the deposit's top-up amount (0: none).
	topUp int64
}

// TestMachineIsOneRuleInSQLAndGo runs each move's statement from every
// state, on a row made to satisfy every other condition of the move, and
// holds what the statement did to the table: it moves exactly the rows the
// table allows, to a state the table lists.
func TestMachineIsOneRuleInSQLAndGo(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	ctx := context.Background()
	inTx := func(fn func(q store.Tx) error) error { return d.Store.InTx(ctx, fn) }
	readDeposit := func(id uuid.UUID) ledgerRow {
		var r ledgerRow
		if err := d.Pool.QueryRow(ctx, "SELECT status, confirmations, coalesce(top_up_amount_minor, 0) FROM deposits WHERE id = $1", id).Scan(&r.status, &r.confirmations, &r.topUp); err != nil {
			t.Fatal(err)
		}
		return r
	}
	readTransfer := func(tx string) (ledgerRow, bool) {
		var r ledgerRow
		var block *int64
		err := d.Pool.QueryRow(ctx, "SELECT status, block_number, deposit_id IS NOT NULL FROM chain_transfers WHERE tx_id = $1", tx).Scan(&r.status, &block, &r.attached)
		if errors.Is(err, pgx.ErrNoRows) {
			return r, false
		}
		if err != nil {
			t.Fatal(err)
		}
		if block != nil {
			r.block = *block
		}
		return r, true
	}
	n := 0
	// newDeposit makes an open deposit of its own user, then puts it in
	// status from: a confirming or credited one is paid by transaction
	// tx, whose confirming transfer record exists in every case.
	newDeposit := func(t *testing.T, from deposit.Status, tx string) db.Deposit {
		n++
		user, _ := d.User(t, fmt.Sprintf("Mover %d", n))
		dep := mustCreate(t, d, user, hundredUSDT)
		var paid *string
		if from != deposit.StatusAwaitingTransfer && from != deposit.StatusExpired {
			paid = &tx
		}
		exec(t, d, `UPDATE deposits SET status = $2, transfer_tx_id = $3,
			review_reason = CASE WHEN $2 = 'under_review' THEN 'late' END,
			review_received_minor = CASE WHEN $2 = 'under_review' THEN requested_amount_minor END,
			review_opened_at = CASE WHEN $2 = 'under_review' THEN now() END,
			cancelled_at = CASE WHEN $2 = 'cancelled' THEN now() END WHERE id = $1`, dep.ID, string(from), paid)
		exec(t, d, `INSERT INTO chain_transfers (network, tx_id, token, from_address, to_address, amount_raw, amount_minor,
			block_time, block_number, status, deposit_id) VALUES ('TRC20', $1, 'USDT-contract', 'payer', $2, $3::text, $3::bigint, now(), 10, 'confirming', $4)`,
			tx, tron.DevTreasuryAddress, fmt.Sprint(dep.RequestedAmountMinor), dep.ID)
		dep.Status = string(from)
		return dep
	}

	for _, m := range depositMoves {
		rule := deposit.DepositMoves[m]
		for _, from := range deposit.Statuses {
			t.Run(fmt.Sprintf("deposit %s from %s", m, from), func(t *testing.T) {
				tx := fmt.Sprintf("tx-d-%s-%s", m, from)
				dep := newDeposit(t, from, tx)
				before := readDeposit(dep.ID)
				var err error
				switch m {
				case deposit.MoveMatch, deposit.MoveAttachLate, deposit.MoveAttachMismatch:
					status, reason := deposit.TransferConfirming, ""
					switch m {
					case deposit.MoveAttachLate:
						status = deposit.TransferLate
					case deposit.MoveAttachMismatch:
						status, reason = deposit.TransferUnmatched, deposit.ReasonAmountMismatch
					}
					err = inTx(func(q store.Tx) error {
						return deposit.Record(ctx, q, 20, []deposit.Transfer{{
							TxID: tx + "-new", Token: "USDT-contract", From: "payer", To: tron.DevTreasuryAddress,
							AmountRaw: "1", AmountMinor: dep.RequestedAmountMinor, BlockTime: time.Now(), Block: 12,
							Status: status, Reason: reason, DepositID: dep.ID,
						}}, time.Now())
					})
				case deposit.MoveLoseClaim:
					// Another deposit's claim of the same transaction won.
					exec(t, d, `INSERT INTO chain_transfers (network, tx_id, token, from_address, to_address, amount_raw, amount_minor,
						block_time, block_number, status, reason) VALUES ('TRC20', $1, 'USDT-contract', 'sender', $2, '5', 5, now(), 11, 'credited', 'test')`,
						tx, tron.DevTreasuryAddress)
					var won int64
					if err := d.Pool.QueryRow(ctx, "SELECT id FROM chain_transfers WHERE tx_id = $1 AND from_address = 'sender'", tx).Scan(&won); err != nil {
						t.Fatal(err)
					}
					exec(t, d, "INSERT INTO deposit_claims (transfer_id, deposit_id, user_id) VALUES ($1, $2, $3)", won, dep.ID, dep.UserID)
					_, err = d.Store.Q.DepositClaimsLose(ctx, won)
				case deposit.MoveRefund:
					exec(t, d, "UPDATE chain_transfers SET status = 'late', needs_review = true WHERE tx_id = $1", tx)
					_, err = d.Store.Q.ChainTransferSettle(ctx, db.ChainTransferSettleParams{
						ID: transferID(t, d, tx), Status: string(deposit.TransferRefunded), Decision: string(deposit.DecisionRefund), Operator: "ops", Note: "test",
					})
				case deposit.MoveReject:
					exec(t, d, "UPDATE chain_transfers SET status = 'unmatched', needs_review = true WHERE tx_id = $1", tx)
					_, err = d.Store.Q.ChainTransferReject(ctx, db.ChainTransferRejectParams{ID: transferID(t, d, tx), Operator: "ops", Note: "test"})
				case deposit.MoveClaim:
					exec(t, d, `INSERT INTO chain_transfers (network, tx_id, token, from_address, to_address, amount_raw, amount_minor,
						block_time, block_number, status, reason, needs_review) VALUES ('TRC20', $1, 'USDT-contract', 'payer', $2, '5', 5, now(), 11, 'unmatched', 'test', true)`,
						tx+"-claim", tron.DevTreasuryAddress)
					err = inTx(func(q store.Tx) error {
						_, err := deposit.Claim(ctx, q, dep.UserID, dep.ID, tx+"-claim", time.Hour, time.Now())
						return err
					})
					var r *deposit.Refusal
					if errors.As(err, &r) {
						err = nil
					}
				case deposit.MoveCreditPolicy:
					// DepositCredit's fingerprint rule: what arrived, on a
					// deposit confirming with the transaction.
					_, err = d.Store.Q.DepositCredit(ctx, db.DepositCreditParams{
						ID: dep.ID, TxID: tx, AmountMinor: dep.RequestedAmountMinor - 100, Fingerprint: true,
					})
					if errors.Is(err, store.ErrNotFound) {
						err = nil
					}
				case deposit.MoveCancel:
					err = inTx(func(q store.Tx) error {
						_, err := deposit.Cancel(ctx, q, dep.UserID, dep.ID, time.Now())
						return err
					})
					var r *deposit.Refusal
					if errors.As(err, &r) {
						err = nil
					}
				case deposit.MoveTopUp:
					// Short by 5 USDT of 100: beyond the tolerance.
					exec(t, d, `UPDATE deposits SET review_reason = 'amount_mismatch', review_received_minor = requested_amount_minor - 5000000
						WHERE id = $1 AND status = 'under_review'`, dep.ID)
					// Attached by its fingerprint: the one kind a top-up completes.
					exec(t, d, "UPDATE chain_transfers SET status = 'unmatched', reason = 'amount_mismatch', needs_review = true WHERE tx_id = $1", tx)
					err = inTx(func(q store.Tx) error {
						_, err := deposit.TopUp(ctx, q, settings(), dep.UserID, dep.ID, deposit.DefaultTolerance(), time.Now())
						return err
					})
					var r *deposit.Refusal
					if errors.As(err, &r) {
						err = nil
					}
				case deposit.MovePayTopUp:
					// The deposit is the top-up of another under review.
					parent := newDeposit(t, deposit.StatusUnderReview, tx+"-parent")
					exec(t, d, "UPDATE deposits SET top_up_of = $2 WHERE id = $1", dep.ID, parent.ID)
					err = inTx(func(q store.Tx) error {
						_, err := deposit.CreditTopUp(ctx, q, transferID(t, d, tx), dep.ID, tx, dep.RequestedAmountMinor)
						return err
					})
				case deposit.MoveCreditTopUp:
					// The deposit gets a confirming top-up, which is paid.
					topUp := mustCreate(t, d, dep.UserID, hundredUSDT)
					exec(t, d, "UPDATE deposits SET top_up_of = $2, status = 'confirming', transfer_tx_id = $3 WHERE id = $1", topUp.ID, dep.ID, tx+"-top-up")
					exec(t, d, `INSERT INTO chain_transfers (network, tx_id, token, from_address, to_address, amount_raw, amount_minor,
						block_time, block_number, status, deposit_id) VALUES ('TRC20', $1, 'USDT-contract', 'payer', $2, $3::text, $3::bigint, now(), 10, 'confirming', $4)`,
						tx+"-top-up", tron.DevTreasuryAddress, fmt.Sprint(topUp.RequestedAmountMinor), topUp.ID)
					err = inTx(func(q store.Tx) error {
						_, err := deposit.CreditTopUp(ctx, q, transferID(t, d, tx+"-top-up"), topUp.ID, tx+"-top-up", topUp.RequestedAmountMinor)
						return err
					})
				case deposit.MoveCount:
					err = inTx(func(q store.Tx) error {
						id := transferID(t, d, tx)
						return deposit.Recount(ctx, q, []deposit.Count{{TransferID: id, Block: 10, Confirmations: 2}}, time.Now())
					})
				case deposit.MoveRevert:
					err = inTx(func(q store.Tx) error {
						_, err := deposit.End(ctx, q, []deposit.Ending{{TransferID: transferID(t, d, tx), Status: deposit.TransferFailed, Reason: "test"}}, time.Now())
						return err
					})
				case deposit.MoveCredit, deposit.MoveCreditLate:
					credit := deposit.Credit
					if m == deposit.MoveCreditLate {
						credit = deposit.CreditLate
					}
					_, err = credit(ctx, store.Tx{Queries: d.Store.Q}, dep.ID, tx, dep.RequestedAmountMinor)
				case deposit.MoveExpire:
					exec(t, d, "UPDATE deposits SET expires_at = now() - interval '1 second' WHERE id = $1", dep.ID)
					err = deposit.Sweep(ctx, d.Store, slog.New(slog.NewTextHandler(io.Discard, nil)))
				}
				if err != nil && !errors.Is(err, deposit.ErrNotCreditable) {
					t.Fatalf("%s: %v", m, err)
				}
				after := readDeposit(dep.ID)
				moved := after != before
				allowed := slices.Contains(rule.From, from)
				switch {
				case moved != allowed:
					t.Fatalf("%s from %s: the statement moved it %v (%+v to %+v); the table allows it %v", m, from, moved, before, after, allowed)
				case moved && !slices.Contains(rule.To, deposit.Status(after.status)):
					t.Fatalf("%s from %s led to %s; the table allows %v", m, from, after.status, rule.To)
				}
			})
		}
	}

	for _, m := range transferMoves {
		rule := deposit.TransferMoves[m]
		for _, from := range everyTransferState {
			t.Run(fmt.Sprintf("transfer %s from %q", m, from), func(t *testing.T) {
				tx := fmt.Sprintf("tx-t-%s-%s", m, from)
				dep := newDeposit(t, deposit.StatusAwaitingTransfer, tx+"-other")
				if from != deposit.TransferUnseen {
					exec(t, d, `INSERT INTO chain_transfers (network, tx_id, token, from_address, to_address, amount_raw, amount_minor,
						block_time, block_number, status, deposit_id, needs_review)
						VALUES ('TRC20', $1, 'USDT-contract', 'payer', $2, $3::text, $3::bigint, now(), 10, $4, $5, $6)`,
						tx, tron.DevTreasuryAddress, fmt.Sprint(dep.RequestedAmountMinor), string(from), dep.ID, from.NeedsReview())
				}
				before, existed := readTransfer(tx)
				to := deposit.TransferUnmatched
				if from == to {
					to = deposit.TransferLate
				}
				var err error
				switch m {
				case deposit.MoveRecord:
					err = inTx(func(q store.Tx) error {
						return deposit.Record(ctx, q, 20, []deposit.Transfer{{
							TxID: tx, Token: "USDT-contract", From: "payer", To: tron.DevTreasuryAddress,
							AmountRaw: fmt.Sprint(dep.RequestedAmountMinor), BlockTime: time.Now(), Block: 10,
							Status: to, Reason: "test",
						}}, time.Now())
					})
				case deposit.MoveRecount:
					if existed {
						err = inTx(func(q store.Tx) error {
							return deposit.Recount(ctx, q, []deposit.Count{{TransferID: transferID(t, d, tx), Block: 11, Confirmations: 1}}, time.Now())
						})
					}
				case deposit.MoveEnd:
					end := deposit.TransferFailed
					if from == end {
						end = deposit.TransferVanished
					}
					if existed {
						err = inTx(func(q store.Tx) error {
							_, err := deposit.End(ctx, q, []deposit.Ending{{TransferID: transferID(t, d, tx), Status: end, Reason: "test"}}, time.Now())
							return err
						})
					}
				case deposit.MoveMarkCredited:
					if existed {
						_, err = d.Store.Q.ChainTransferCredited(ctx, transferID(t, d, tx))
					}
				case deposit.MoveSettleReject:
					if existed {
						_, err = d.Store.Q.ChainTransferReject(ctx, db.ChainTransferRejectParams{ID: transferID(t, d, tx), Operator: "ops", Note: "test"})
					}
				case deposit.MoveSettleCredit, deposit.MoveSettleRefund, deposit.MoveSettlePolicy:
					decision := deposit.DecisionOf(m)
					if m == deposit.MoveSettlePolicy {
						decision = deposit.DecisionCredit
					}
					if existed {
						_, err = d.Store.Q.ChainTransferSettle(ctx, db.ChainTransferSettleParams{
							ID: transferID(t, d, tx), Status: string(rule.To[0]), Decision: string(decision), Operator: "ops", Note: "test",
						})
						if errors.Is(err, store.ErrNotFound) {
							err = nil
						}
					}
				}
				if err != nil {
					t.Fatalf("%s: %v", m, err)
				}
				after, exists := readTransfer(tx)
				moved := exists && (!existed || after != before)
				allowed := slices.Contains(rule.From, from)
				switch {
				case moved != allowed:
					t.Fatalf("%s from %q: the statement moved it %v (%+v to %+v); the table allows it %v", m, from, moved, before, after, allowed)
				case moved && !slices.Contains(rule.To, deposit.TransferStatus(after.status)):
					t.Fatalf("%s from %q led to %s; the table allows %v", m, from, after.status, rule.To)
				}
			})
		}
	}
}

func transferID(t *testing.T, d *testenv.DB, tx string) int64 {
	t.Helper()
	var id int64
	if err := d.Pool.QueryRow(context.Background(), "SELECT id FROM chain_transfers WHERE tx_id = $1", tx).Scan(&id); err != nil {
		t.Fatalf("transfer %s: %v", tx, err)
	}
	return id
}
