package deposit

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/db"
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
	// ErrTooManyClaims: the user holds MaxOpenClaims open claims, or made
	// MaxDailyClaims in the last day.
	ErrTooManyClaims = errors.New("too many claims")
)

// The claim limits (docs/deposits.md, "The payer's claim"): a claim costs
// an operator's time, and naming public transaction ids costs nothing.
const (
	// MaxOpenClaims is how many claims a user holds open at once.
	MaxOpenClaims = 3
	// MaxDailyClaims is how many claims a user makes in a day (24 hours).
	MaxDailyClaims = 10
)

// Claim makes MoveClaim: the user names transaction txID as the one that
// paid their deposit depositID, with another amount than requested. The
// claim is recorded and the deposit goes under review (reason
// amount_mismatch, with the amount received), in one statement
// (DepositClaim), with the deposit's event. A claim never credits, whatever
// the amount: a transaction id is public, so naming one proves nothing, and
// an operator decides. Several deposits may claim one transfer; once a
// second does, each claimant's review is contested. window is the
// monitoring window: how long after expiresAt a transfer may still be
// claimed. The user's claims take turns (DepositClaimLock), so
// MaxOpenClaims and MaxDailyClaims are exact.
func Claim(ctx context.Context, q store.Tx, userID, depositID uuid.UUID, txID string, window time.Duration, now time.Time) (db.Deposit, error) {
	if err := q.DepositClaimLock(ctx, userID); err != nil {
		return db.Deposit{}, err
	}
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
		MaxOpen: MaxOpenClaims, MaxDaily: MaxDailyClaims,
	})
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
	counts, err := q.DepositClaimCounts(ctx, userID)
	if err != nil {
		return db.Deposit{}, err
	}
	if counts.Open >= MaxOpenClaims || counts.Today >= MaxDailyClaims {
		return db.Deposit{}, ErrTooManyClaims
	}
	// The transfer looked claimable: the watcher attached it by its
	// fingerprint, or an operator rejected it for this deposit.
	return db.Deposit{}, ErrTransferTaken
}

// claimable is the first of a transaction's transfers that no operator
// settled and that is unmatched (attached to no deposit, or to a claim's:
// DepositClaim tells), or nil.
func claimable(ts []db.ChainTransfer) *db.ChainTransfer {
	for i := range ts {
		if TransferStatus(ts[i].Status) == TransferUnmatched && ts[i].NeedsReview {
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
// the shortfall tolerance, not a person, credited a transfer.
const PolicyOperator = "policy"
