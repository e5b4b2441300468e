package deposit

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/store"
)

// CreditOutcome tells what a Credit call did.
type CreditOutcome int

// The outcomes of Credit. Only Credited changed anything.
const (
	// Credited: the deposit is now credited and its ledger entry written.
	Credited CreditOutcome = iota + 1
	// AlreadyCredited: the deposit was credited before; nothing changed.
	AlreadyCredited
	// TransferAlreadyUsed: the transaction already credited another
	// deposit; nothing changed.
	TransferAlreadyUsed
)

func (o CreditOutcome) String() string {
	switch o {
	case Credited:
		return "credited"
	case AlreadyCredited:
		return "already credited"
	case TransferAlreadyUsed:
		return "transfer already used"
	}
	return "unknown"
}

// The errors of Credit besides database ones (store.ErrNotFound for an
// unknown deposit).
var (
	// ErrNotCreditable: the deposit expired without a seen transfer, or was
	// matched to another transaction; it needs a person, not the watcher.
	ErrNotCreditable = errors.New("deposit: not creditable")
	// ErrInvalidCredit: an empty transaction id or a non-positive amount.
	ErrInvalidCredit = errors.New("deposit: credit needs a transaction id and a positive amount")
	// ErrAmountMismatch: the transfer's amount is not the deposit's
	// requested amount; a short (or long) transfer never credits.
	ErrAmountMismatch = errors.New("deposit: the transferred amount is not the requested amount")
)

// Credit is the chain watcher's one way to pay a deposit: it moves the
// deposit to credited with transfer txID and amountMinor, releases its
// reserved amount and appends the ledger entry ('deposit', id), all in one
// statement on q, followed by its deposit.credited event (docs/events.md):
// q must be the caller's transaction for the event to commit with it. It credits only an
// open deposit, and only when amountMinor is exactly the requested amount
// (ErrAmountMismatch otherwise). It is exactly once: calling it again for
// the same deposit, or with a transaction that already paid a deposit,
// changes nothing and says so in the outcome. Under a race between two
// deposits claiming one transaction the loser gets store.ErrConflict from
// the unique transaction id.
func Credit(ctx context.Context, q store.Tx, depositID uuid.UUID, txID string, amountMinor int64) (CreditOutcome, error) {
	return credit(ctx, q, depositID, txID, amountMinor, creditExact)
}

// creditKind is which of DepositCredit's rules a credit applies.
type creditKind int

const (
	// creditExact: an open deposit, exactly the requested amount.
	creditExact creditKind = iota
	// creditLate: an operator's credit, also of a deposit under review
	// with the amount received.
	creditLate
	// creditFingerprint: the policy's credit of a confirming deposit with
	// the amount received (CreditByFingerprint).
	creditFingerprint
)

// CreditLate is Credit for an operator settling a transfer that arrived
// after the deposit expired (docs/deposits.md, "Late and unmatched
// transfers"): the deposit may be expired, and is credited exactly once,
// with exactly its requested amount, like any other; a deposit under review
// may instead be credited exactly the amount received (a claimed transfer
// of another amount).
func CreditLate(ctx context.Context, q store.Tx, depositID uuid.UUID, txID string, amountMinor int64) (CreditOutcome, error) {
	return credit(ctx, q, depositID, txID, amountMinor, creditLate)
}

func credit(ctx context.Context, q store.Tx, depositID uuid.UUID, txID string, amountMinor int64, kind creditKind) (CreditOutcome, error) {
	if txID == "" || amountMinor <= 0 {
		return 0, ErrInvalidCredit
	}
	late := kind == creditLate
	_, err := q.DepositCredit(ctx, db.DepositCreditParams{ID: depositID, TxID: txID, AmountMinor: amountMinor, Late: late, Fingerprint: kind == creditFingerprint})
	if err == nil {
		row, err := q.DepositGet(ctx, depositID)
		if err != nil {
			return 0, err
		}
		if err := WriteEvents(ctx, q, []db.Deposit{row.Deposit}, row.DbNow); err != nil {
			return 0, err
		}
		return Credited, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return 0, err
	}
	// Nothing changed: read why.
	row, err := q.DepositGet(ctx, depositID)
	if err != nil {
		return 0, err
	}
	d := row.Deposit
	switch {
	case Status(d.Status) == StatusCredited:
		return AlreadyCredited, nil
	case d.RequestedAmountMinor != amountMinor && kind != creditFingerprint &&
		!(late && Status(d.Status) == StatusUnderReview && d.ReviewReceivedMinor != nil && *d.ReviewReceivedMinor == amountMinor):
		return 0, ErrAmountMismatch
	case d.TransferTxID != nil && *d.TransferTxID != txID:
		return 0, ErrNotCreditable
	case IsOpen(EffectiveStatus(Status(d.Status), d.ExpiresAt, row.DbNow)) || late:
		// Creditable and unmatched or matched to txID: the statement
		// refused only because txID paid another deposit.
		return TransferAlreadyUsed, nil
	}
	return 0, ErrNotCreditable
}
