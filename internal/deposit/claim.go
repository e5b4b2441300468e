package deposit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/money"
	"creativeapi/internal/store"
)

// The refusals of Claim besides store.ErrNotFound (no such deposit of the
// user) and a *Refusal (the deposit cannot be claimed in its state).
var (
	// ErrTransferUnknown: no transfer to the treasury of that transaction
	// was recorded (yet), or it vanished in a fork; the payer may retry.
	ErrTransferUnknown = errors.New("no transfer of this transaction was recorded (yet)")
	// ErrTransferTaken: the transfer pays or was claimed for a deposit, or
	// an operator settled it.
	ErrTransferTaken = errors.New("the transfer belongs to a deposit or was settled")
	// ErrTransferUnfit: the transfer can pay no deposit (it failed, has no
	// countable amount, or went to another address) or none of this one's
	// time (its block is before the deposit or after its monitoring window).
	ErrTransferUnfit = errors.New("the transfer cannot pay this deposit")
)

// Claim makes MoveClaim: the user names transaction txID as the one that
// paid their deposit depositID, with another amount than requested. The
// unmatched transfer is attached to the deposit, which goes under review
// (reason amount_mismatch, with the amount received), in one statement
// (DepositClaim), with the deposit's event. window is the monitoring
// window: how long after expiresAt a transfer may still be claimed. A
// transfer tol accepts is credited at once, in the same transaction
// (creditByPolicy): the deposit comes back credited.
func Claim(ctx context.Context, q store.Tx, userID, depositID uuid.UUID, txID string, window time.Duration, tol Tolerance, now time.Time) (db.Deposit, error) {
	ts, err := q.ChainTransfersByTx(ctx, db.ChainTransfersByTxParams{Network: Network, TxID: txID})
	if err != nil {
		return db.Deposit{}, err
	}
	var transferID int64
	if t := claimable(ts); t != nil {
		transferID = t.ID
	}
	d, err := q.DepositClaim(ctx, db.DepositClaimParams{
		TransferID: transferID, DepositID: depositID, UserID: userID, WindowSeconds: int64(window / time.Second),
	})
	if err == nil && d.ReviewReceivedMinor != nil && tol.Accepts(d.RequestedAmountMinor, *d.ReviewReceivedMinor) {
		return creditByPolicy(ctx, q, transferID, d)
	}
	if err == nil {
		return d, WriteEvents(ctx, q, []db.Deposit{d}, now)
	}
	if !errors.Is(err, store.ErrNotFound) {
		return db.Deposit{}, err
	}
	// Nothing moved: say why, deposit first (404, then its state).
	row, err := q.DepositGetByUser(ctx, db.DepositGetByUserParams{ID: depositID, UserID: userID})
	if err != nil {
		return db.Deposit{}, err
	}
	from := EffectiveStatus(Status(row.Deposit.Status), row.Deposit.ExpiresAt, row.DbNow)
	if err := CheckDeposit(MoveClaim, from, StatusUnderReview); err != nil || row.Deposit.TransferTxID != nil {
		return db.Deposit{}, &Refusal{Move: MoveClaim, From: string(from), To: string(StatusUnderReview)}
	}
	t := claimable(ts)
	switch {
	case t == nil && !anyStatusBut(ts, TransferVanished):
		return db.Deposit{}, ErrTransferUnknown
	case t == nil && anyStatusBut(ts, TransferVanished, TransferFailed):
		return db.Deposit{}, ErrTransferTaken
	case t == nil:
		return db.Deposit{}, ErrTransferUnfit // it failed
	case t.AmountMinor == nil || t.ToAddress != row.Deposit.Address ||
		t.BlockTime.Before(row.Deposit.CreatedAt) || t.BlockTime.After(row.Deposit.ExpiresAt.Add(window)):
		return db.Deposit{}, ErrTransferUnfit
	}
	// The transfer looked claimable: a concurrent claim took it first.
	return db.Deposit{}, ErrTransferTaken
}

// claimable is the first of a transaction's transfers that no deposit has
// and no operator settled, or nil.
func claimable(ts []db.ChainTransfer) *db.ChainTransfer {
	for i := range ts {
		if TransferStatus(ts[i].Status) == TransferUnmatched && ts[i].NeedsReview && ts[i].DepositID == nil {
			return &ts[i]
		}
	}
	return nil
}

// anyStatusBut reports whether one of ts is in a status other than but.
func anyStatusBut(ts []db.ChainTransfer, but ...TransferStatus) bool {
	for _, t := range ts {
		if !slices.Contains(but, TransferStatus(t.Status)) {
			return true
		}
	}
	return false
}

// PolicyOperator is the operator the settlement audit record names when
// the shortfall tolerance, not a person, credited a claimed transfer.
const PolicyOperator = "policy"

// errPolicyNotCredited: the policy's credit changed nothing, which the
// claim it follows in the same transaction rules out.
var errPolicyNotCredited = errors.New("deposit: the policy credit changed nothing")

// creditByPolicy makes MoveCreditPolicy for deposit d, just claimed (under
// review, locked by the claim's statement) with transfer transferID, and
// MoveSettlePolicy for the transfer: the deposit is credited with the
// amount received (DepositCredit, as an operator's credit), and the
// transfer is settled with an audit record naming PolicyOperator
// (ChainTransferSettle), with the deposit's credited event. The claim's
// under_review event is not written: the deposit never rests there.
func creditByPolicy(ctx context.Context, q store.Tx, transferID int64, d db.Deposit) (db.Deposit, error) {
	if err := CheckDeposit(MoveCreditPolicy, Status(d.Status), StatusCredited); err != nil {
		return db.Deposit{}, err
	}
	received := *d.ReviewReceivedMinor
	outcome, err := CreditLate(ctx, q, d.ID, *d.TransferTxID, received)
	if err != nil {
		return db.Deposit{}, err
	}
	if outcome != Credited {
		return db.Deposit{}, fmt.Errorf("%w: %s", errPolicyNotCredited, outcome)
	}
	note := fmt.Sprintf("received %s of %s requested: within the shortfall tolerance (DEPOSIT_SHORTFALL_TOLERANCE)",
		money.USDT.Format(received), money.USDT.Format(d.RequestedAmountMinor))
	if received >= d.RequestedAmountMinor {
		note = fmt.Sprintf("received %s of %s requested: an overpayment is credited as received",
			money.USDT.Format(received), money.USDT.Format(d.RequestedAmountMinor))
	}
	if _, err := q.ChainTransferSettle(ctx, db.ChainTransferSettleParams{
		ID: transferID, Status: string(TransferCredited), Decision: string(DecisionCredit), Operator: PolicyOperator, Note: note,
	}); err != nil {
		return db.Deposit{}, err
	}
	row, err := q.DepositGet(ctx, d.ID)
	return row.Deposit, err
}
