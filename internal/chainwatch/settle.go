package chainwatch

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"creativeapi/gen/db"
	"creativeapi/internal/deposit"
	"creativeapi/internal/store"
)

// Settlement is how an operator settles a transfer waiting for review.
type Settlement string

// The settlements (docs/deposits.md, "Late and unmatched transfers").
const (
	// SettleCredit credits a late transfer to the deposit it was for,
	// exactly once and with exactly its requested amount.
	SettleCredit Settlement = "credited"
	// SettleRefund records that the treasury sent a late or unmatched
	// transfer back to its sender.
	SettleRefund Settlement = "refunded"
)

// The refusals of Settle.
var (
	ErrNotForReview = errors.New("the transfer is not waiting for review (already settled, or not late or unmatched)")
	ErrNoDeposit    = errors.New("only a late transfer names the deposit to credit; an unmatched one can only be refunded")
	ErrSettleInput  = errors.New("a settlement needs an operator name and a note")
)

// Settle settles transfer id as s, recording who did it and why in the
// settlement audit table, in one transaction: the credit (if any), the
// audit record and the transfer's new status commit together, and the
// unique transfer id of the audit record makes it once only.
func Settle(ctx context.Context, st *store.Store, id int64, s Settlement, operator, note string) error {
	operator, note = strings.TrimSpace(operator), strings.TrimSpace(note)
	if operator == "" || note == "" {
		return ErrSettleInput
	}
	if s != SettleCredit && s != SettleRefund {
		return fmt.Errorf("unknown settlement %q", s)
	}
	return st.InTx(ctx, func(q store.Tx) error {
		t, err := q.ChainTransferLock(ctx, id)
		if err != nil {
			return err
		}
		if !t.NeedsReview {
			return ErrNotForReview
		}
		if s == SettleCredit {
			if t.Status != string(deposit.Late) || t.DepositID == nil || t.AmountMinor == nil {
				return ErrNoDeposit
			}
			outcome, err := deposit.CreditLate(ctx, q, *t.DepositID, t.TxID, *t.AmountMinor)
			if err != nil {
				return err
			}
			if outcome != deposit.Credited {
				return fmt.Errorf("the deposit was not credited: %s", outcome)
			}
		}
		return q.ChainTransferSettle(ctx, db.ChainTransferSettleParams{ID: id, Action: string(s), Operator: operator, Note: note})
	})
}
