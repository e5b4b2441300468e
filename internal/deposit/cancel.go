package deposit

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/gen/db"
	"creativeapi/internal/store"
)

// Cancel makes MoveCancel: the user cancels their deposit depositID while
// it awaits its transfer (before expiresAt), in one statement
// (DepositCancel) that also frees its amount, with its deposit.cancelled
// event. store.ErrNotFound: no such deposit of the user; a *Refusal: the
// deposit is in another state. It answers the deposit as the API shows
// it, so handlers never see a database row.
func Cancel(ctx context.Context, q store.Tx, userID, depositID uuid.UUID, now time.Time) (api.AccountDeposit, error) {
	d, err := q.DepositCancel(ctx, db.DepositCancelParams{ID: depositID, UserID: userID})
	if err == nil {
		return Body(d, now), WriteEvents(ctx, q, []db.Deposit{d}, now)
	}
	if !errors.Is(err, store.ErrNotFound) {
		return api.AccountDeposit{}, err
	}
	row, err := q.DepositGetByUser(ctx, db.DepositGetByUserParams{ID: depositID, UserID: userID})
	if err != nil {
		return api.AccountDeposit{}, err
	}
	from := EffectiveStatus(Status(row.Deposit.Status), row.Deposit.ExpiresAt, row.DbNow)
	return api.AccountDeposit{}, &Refusal{Move: MoveCancel, From: string(from), To: string(StatusCancelled)}
}
