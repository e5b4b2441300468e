package deposit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/money"
	"creativeapi/internal/store"
)

// The functions of this file are the ledger's moves (DepositMoves,
// TransferMoves): each makes its moves with the one statement its rule
// names, in the caller's transaction q, and writes the events of the
// deposits it moved there. The chain watcher and operators call them; no
// other code changes a deposit's or a transfer's status.

// Transfer is a transfer to the treasury as the watcher recorded it.
type Transfer struct {
	TxID, Token, From, To string
	// AmountRaw is the value as the chain API sent it; AmountMinor is it in
	// minor units, or 0 when it cannot pay a deposit.
	AmountRaw   string
	AmountMinor int64
	BlockTime   time.Time
	Block       int64
	// Status is the judgement (Judge); Reason says why it pays nothing.
	Status TransferStatus
	Reason string
	// DepositID is the deposit a confirming or late transfer is for.
	DepositID uuid.UUID
}

// Receipt is what the node says of a transfer's transaction.
type Receipt struct {
	Succeeded bool
	// Result is the node's result when it did not succeed.
	Result string
}

// Judge is what a new transfer is recorded as (docs/deposits.md, "Matching
// a transfer"): failed when its receipt failed, unmatched with notCountable
// as the reason when it cannot pay a deposit (a non-empty reason), else
// Match's verdict against c, the deposit reserving its amount (nil: none).
// A confirming verdict takes c, so a second transfer of the same amount
// judged against it finds it paid.
//
// A late or unmatched transfer is recorded only once its block is final
// (solidified): nothing re-reads it, and an operator may credit it (a late
// one to its deposit, an unmatched one to the deposit a payer claimed it
// for), so one a fork could still remove is not judged yet: Judge returns
// TransferUnseen, and the watcher reads it again. The property test found
// both: a transfer forked away after it was recorded could be credited.
//
// A transfer no deposit reserves the amount of is judged by its
// fingerprint when fp, the one deposit it carries the fingerprint of
// (Fingerprint), is set: confirming for it with ReasonFingerprint when the
// shortfall is within the tolerance, else unmatched with
// ReasonAmountMismatch and attached to it (MoveAttachMismatch), once final.
func Judge(r Receipt, notCountable string, c *Candidate, fp *Fingerprinted, blockTime time.Time, txID string, final bool) (TransferStatus, string, uuid.UUID) {
	switch {
	case !r.Succeeded:
		return TransferFailed, "receipt " + r.Result, uuid.Nil
	case notCountable != "" && !final:
		return TransferUnseen, "", uuid.Nil
	case notCountable != "":
		return TransferUnmatched, notCountable, uuid.Nil
	}
	v, reason := Match(c, blockTime)
	if v == TransferUnmatched && reason == ReasonNoReservation && fp != nil && fp.Deposit.TxID == nil {
		switch {
		case fp.Verdict == TransferConfirming:
			fp.Deposit.TxID = &txID
			return TransferConfirming, ReasonFingerprint, fp.Deposit.ID
		case !final:
			return TransferUnseen, "", uuid.Nil
		}
		fp.Deposit.TxID = &txID
		return TransferUnmatched, ReasonAmountMismatch, fp.Deposit.ID
	}
	switch v {
	case TransferConfirming:
		c.TxID = &txID
		return v, "", c.ID
	case TransferLate:
		if !final {
			return TransferUnseen, "", uuid.Nil
		}
		if reason == ReasonCancelled {
			return v, reason, uuid.Nil
		}
		// Attached to the deposit (MoveAttachLate), which it takes too.
		c.TxID = &txID
		return v, "", c.ID
	case TransferUnmatched:
		if !final {
			return TransferUnseen, "", uuid.Nil
		}
	}
	return v, reason, uuid.Nil
}

// Record makes MoveRecord for each of ts, MoveMatch for the deposits the
// confirming ones pay, MoveAttachLate for those the late ones are for and
// MoveAttachMismatch for those an unmatched one carries the fingerprint of,
// in one statement (ChainTransfersRecord), with
// the deposits' events. A transfer recorded before is left alone unless it
// had vanished. head is the chain's head block, for the confirmations.
func Record(ctx context.Context, q store.Tx, head int64, ts []Transfer, now time.Time) error {
	p := db.ChainTransfersRecordParams{Network: Network, HeadBlock: head}
	for _, t := range ts {
		if err := CheckTransfer(MoveRecord, TransferUnseen, t.Status); err != nil {
			return err
		}
		p.TxIds = append(p.TxIds, t.TxID)
		p.Tokens = append(p.Tokens, t.Token)
		p.FromAddresses = append(p.FromAddresses, t.From)
		p.ToAddresses = append(p.ToAddresses, t.To)
		p.AmountRaws = append(p.AmountRaws, t.AmountRaw)
		p.AmountMinors = append(p.AmountMinors, t.AmountMinor)
		p.BlockTimes = append(p.BlockTimes, t.BlockTime)
		p.BlockNumbers = append(p.BlockNumbers, t.Block)
		p.Statuses = append(p.Statuses, string(t.Status))
		p.Reasons = append(p.Reasons, t.Reason)
		p.DepositIds = append(p.DepositIds, t.DepositID)
	}
	deps, err := q.ChainTransfersRecord(ctx, p)
	if err != nil {
		return err
	}
	return WriteEvents(ctx, q, deps, now)
}

// Count is a confirming transfer's block as read again, and the
// confirmations its deposit has.
type Count struct {
	TransferID    int64
	Block         int64
	Confirmations int32
}

// Recount makes MoveRecount and MoveCount for each of cs in one statement
// (ChainConfirmationsSet), with the events of the deposits whose
// confirmations changed.
func Recount(ctx context.Context, q store.Tx, cs []Count, now time.Time) error {
	var p db.ChainConfirmationsSetParams
	for _, c := range cs {
		p.TransferIds = append(p.TransferIds, c.TransferID)
		p.BlockNumbers = append(p.BlockNumbers, c.Block)
		p.Confirmations = append(p.Confirmations, c.Confirmations)
	}
	deps, err := q.ChainConfirmationsSet(ctx, p)
	if err != nil {
		return err
	}
	return WriteEvents(ctx, q, deps, now)
}

// Ending is how a confirming transfer ends without paying: failed,
// vanished, or unmatched (for an operator), and why.
type Ending struct {
	TransferID int64
	Status     TransferStatus
	Reason     string
}

// End makes MoveEnd for each of es and MoveRevert for their deposits, in
// one statement (ChainTransfersRevert), with the deposits' events, and
// returns the deposits it put back.
func End(ctx context.Context, q store.Tx, es []Ending, now time.Time) ([]db.Deposit, error) {
	var p db.ChainTransfersRevertParams
	for _, e := range es {
		if err := CheckTransfer(MoveEnd, TransferConfirming, e.Status); err != nil {
			return nil, err
		}
		p.TransferIds = append(p.TransferIds, e.TransferID)
		p.Statuses = append(p.Statuses, string(e.Status))
		p.Reasons = append(p.Reasons, e.Reason)
	}
	deps, err := q.ChainTransfersRevert(ctx, p)
	if err != nil {
		return nil, err
	}
	return deps, WriteEvents(ctx, q, deps, now)
}

// errNotConfirming: MarkCredited found the transfer no longer confirming.
var errNotConfirming = errors.New("deposit: the transfer is not confirming")

// CreditTransfer makes MoveCredit for the deposit confirming transfer
// transferID pays and MoveMarkCredited for the transfer, in q. Only the
// Credited outcome changed anything; any other leaves q to be rolled back
// by the caller.
func CreditTransfer(ctx context.Context, q store.Tx, transferID int64, depositID uuid.UUID, txID string, amountMinor int64) (CreditOutcome, error) {
	outcome, err := Credit(ctx, q, depositID, txID, amountMinor)
	if err != nil || outcome != Credited {
		return outcome, err
	}
	// Sent at once, not with COMMIT: its row count is the check that the
	// transfer was still confirming.
	n, err := q.ChainTransferCredited(ctx, transferID)
	if err == nil && n == 0 {
		err = errNotConfirming
	}
	return outcome, err
}

// CreditByFingerprint makes MoveCreditPolicy for the deposit confirming
// transfer transferID carries the fingerprint of, short by no more than the
// tolerance (Judge recorded it with ReasonFingerprint), and MoveMarkCredited
// for the transfer, in q: the deposit is credited with the amount received
// and keeps its review (amount_mismatch, the amount, the transaction), and
// the audit record names PolicyOperator.
func CreditByFingerprint(ctx context.Context, q store.Tx, transferID int64, depositID uuid.UUID, txID string, amountMinor int64) (CreditOutcome, error) {
	row, err := q.DepositGet(ctx, depositID)
	if err != nil {
		return 0, err
	}
	if err := CheckDeposit(MoveCreditPolicy, Status(row.Deposit.Status), StatusCredited); err != nil {
		if Status(row.Deposit.Status) == StatusCredited {
			return AlreadyCredited, nil
		}
		return 0, ErrNotCreditable
	}
	outcome, err := credit(ctx, q, depositID, txID, amountMinor, creditFingerprint)
	if err != nil || outcome != Credited {
		return outcome, err
	}
	n, err := q.ChainTransferCredited(ctx, transferID)
	if err == nil && n == 0 {
		err = errNotConfirming
	}
	if err != nil {
		return 0, err
	}
	note := fmt.Sprintf("received %s of %s requested, carrying the deposit's matching suffix: within the shortfall tolerance (DEPOSIT_SHORTFALL_TOLERANCE)",
		money.USDT.Format(amountMinor), money.USDT.Format(row.Deposit.RequestedAmountMinor))
	return Credited, q.ChainTransferPolicyAudit(ctx, db.ChainTransferPolicyAuditParams{TransferID: transferID, Note: note, DepositID: &depositID})
}

// The refusals of Settle.
var (
	ErrNotForReview = errors.New("the transfer is not waiting for review (already settled, or not late or unmatched)")
	ErrNoDeposit    = errors.New("no deposit is attached to the transfer (late or claimed): it can only be refunded")
	ErrSettleInput  = errors.New("a settlement needs an operator name and a note")
)

// Settle settles transfer id by move m (MoveSettleCredit,
// MoveSettleRefund or MoveSettleReject), recording who did it and why in
// the settlement audit table, in one transaction: the credit
// (MoveCreditLate, for MoveSettleCredit), the audit record and the
// transfer's new status commit together, and only a transfer waiting for
// review is settled, once (rejected, it waits for review again).
func Settle(ctx context.Context, st *store.Store, id int64, m Move, operator, note string) error {
	return st.InTx(ctx, func(q store.Tx) error { return SettleTx(ctx, q, id, m, operator, note) })
}

// SettleTx is Settle in the caller's transaction q (the operator API runs
// it in the transaction that stores its answer under the Idempotency-Key).
func SettleTx(ctx context.Context, q store.Tx, id int64, m Move, operator, note string) error {
	return settle(ctx, q, id, m, operator, note, nil)
}

// ErrRefundTxOnlyForRefund: a refund transaction was named for another
// settlement than a refund.
var ErrRefundTxOnlyForRefund = errors.New("a refund transaction goes with a refund only")

// SettleRefundTx is SettleTx of MoveSettleRefund that records refundTxID,
// the transaction that sent the transfer back, on the refunded deposit
// (the payer sees it as review.refund.transactionId).
func SettleRefundTx(ctx context.Context, q store.Tx, id int64, operator, note, refundTxID string) error {
	return settle(ctx, q, id, MoveSettleRefund, operator, note, &refundTxID)
}

func settle(ctx context.Context, q store.Tx, id int64, m Move, operator, note string, refundTxID *string) error {
	if refundTxID != nil && m != MoveSettleRefund {
		return ErrRefundTxOnlyForRefund
	}
	operator, note = strings.TrimSpace(operator), strings.TrimSpace(note)
	if operator == "" || note == "" {
		return ErrSettleInput
	}
	rule, ok := TransferMoves[m]
	if !ok || rule.By != ByOperator {
		return fmt.Errorf("%q is not a settlement", m)
	}
	to, decision := rule.To[0], DecisionOf(m)
	t, err := q.ChainTransferLock(ctx, id)
	if err != nil {
		return err
	}
	from := TransferStatus(t.Status)
	if !t.NeedsReview || !from.NeedsReview() {
		return ErrNotForReview
	}
	if err := CheckTransfer(m, from, to); err != nil {
		return ErrNoDeposit
	}
	if m == MoveSettleReject {
		return reject(ctx, q, t, operator, note)
	}
	if m == MoveSettleCredit {
		if t.DepositID == nil || t.AmountMinor == nil {
			return ErrNoDeposit
		}
		outcome, err := CreditLate(ctx, q, *t.DepositID, t.TxID, *t.AmountMinor)
		if err != nil {
			return err
		}
		if outcome != Credited {
			return fmt.Errorf("the deposit was not credited: %s", outcome)
		}
	}
	_, err = q.ChainTransferSettle(ctx, db.ChainTransferSettleParams{ID: id, Status: string(to), Decision: string(decision), Operator: operator, Note: note, RefundTxID: refundTxID})
	if errors.Is(err, store.ErrNotFound) {
		return ErrNotForReview
	}
	if err != nil {
		return err
	}
	// The other deposits that claimed it lose their claims (MoveLoseClaim).
	lost, err := q.DepositClaimsLose(ctx, id)
	if err != nil {
		return err
	}
	if err := WriteEvents(ctx, q, lost, time.Now()); err != nil {
		return err
	}
	if m != MoveSettleRefund || t.DepositID == nil {
		return nil
	}
	// The statement refunded the deposit under review, if one is attached.
	row, err := q.DepositGet(ctx, *t.DepositID)
	if err != nil || Status(row.Deposit.Status) != StatusRefunded {
		return err
	}
	return WriteEvents(ctx, q, []db.Deposit{row.Deposit}, row.DbNow)
}

// reject makes MoveSettleReject for transfer t, locked and waiting for
// review, and MoveReject for the deposit under review with it, in one
// statement (ChainTransferReject), with the deposit's event.
func reject(ctx context.Context, q store.Tx, t db.ChainTransfer, operator, note string) error {
	if t.DepositID == nil {
		return ErrNoDeposit
	}
	deps, err := q.ChainTransferReject(ctx, db.ChainTransferRejectParams{ID: t.ID, Operator: operator, Note: note})
	if err != nil || len(deps) == 0 {
		return err
	}
	return WriteEvents(ctx, q, deps, time.Now())
}
