package deposit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/events"
	"creativeapi/internal/money"
	"creativeapi/internal/store"
	"creativeapi/internal/tron"
)

// This file is what a payer does about money that arrived wrong without an
// operator (docs/deposits.md, "Top-ups" and "Refund addresses"): pay the
// rest of a short transfer, or say where a refund goes.

// ReasonAmountMismatch is the review reason of a transfer of another
// amount than requested, claimed by the payer or attached by its
// fingerprint (deposits.review_reason); it is also the reason of a
// transfer the watcher attached by its fingerprint for review.
const ReasonAmountMismatch = "amount_mismatch"

// TopUp makes MoveTopUp: for the user's deposit depositID, under review for
// a transfer the watcher attached by its fingerprint, short by more than
// tol, it reserves a top-up (a
// deposit of its own, DepositTopUp) of the shortfall plus a free suffix,
// open for s.TTL and reserved for s.MonitoringWindow after, and the
// deposit shows it, with its deposit.top_up_requested event. While a
// top-up is open it answers the deposit as it is (asking twice reserves
// nothing more). store.ErrNotFound: no such deposit of the user; a
// *Refusal: the deposit takes no top-up; ErrCapacityExhausted: no suffix
// of the shortfall is free.
func TopUp(ctx context.Context, q store.Tx, s Settings, userID, depositID uuid.UUID, tol Tolerance, now time.Time) (db.Deposit, error) {
	for range freeTries {
		row, err := q.DepositGetByUser(ctx, db.DepositGetByUserParams{ID: depositID, UserID: userID})
		if err != nil {
			return db.Deposit{}, err
		}
		d := row.Deposit
		from := EffectiveStatus(Status(d.Status), d.ExpiresAt, row.DbNow)
		byFingerprint := false
		if d.TransferTxID != nil {
			ts, err := q.ChainTransfersByTx(ctx, db.ChainTransfersByTxParams{Network: Network, TxID: *d.TransferTxID})
			if err != nil {
				return db.Deposit{}, err
			}
			byFingerprint = attachedByFingerprint(ts, d.ID)
		}
		if !TakesTopUp(from, d.ReviewReason, d.RequestedAmountMinor, d.ReviewReceivedMinor, byFingerprint, tol) {
			return db.Deposit{}, &Refusal{Move: MoveTopUp, From: string(from), To: string(StatusUnderReview)}
		}
		if d.TopUpExpiresAt != nil && d.TopUpExpiresAt.After(row.DbNow) {
			return d, nil
		}
		up, err := q.DepositTopUp(ctx, db.DepositTopUpParams{
			ID: depositID, UserID: userID, Ttl: interval(s.TTL), ReserveFor: interval(s.TTL + s.MonitoringWindow),
		})
		if err == nil {
			body := Body(up, now)
			return up, events.Write(ctx, q.Next(), events.Event{
				Type: events.DepositTopUpRequested, UserID: up.UserID, Timestamp: now, Data: body,
			})
		}
		if !errors.Is(err, store.ErrNotFound) {
			return db.Deposit{}, err
		}
		// No row: the deposit moved meanwhile (read it again), or the
		// suffix picked was taken concurrently, or none is free.
	}
	return db.Deposit{}, ErrCapacityExhausted
}

// TakesTopUp reports whether a deposit in effective status from, under
// review for reason with requestedMinor asked and receivedMinor received,
// may get a top-up: a transfer the watcher attached by its fingerprint
// (byFingerprint) short by more than tol allows (a shorter one the policy
// credits; a late one is the exact amount). A claimed transfer never does:
// a claimant could otherwise top a stranger's payment up to their own
// amount and be credited both with no operator.
func TakesTopUp(from Status, reason *string, requestedMinor int64, receivedMinor *int64, byFingerprint bool, tol Tolerance) bool {
	return CheckDeposit(MoveTopUp, from, StatusUnderReview) == nil && byFingerprint &&
		reason != nil && *reason == ReasonAmountMismatch && receivedMinor != nil &&
		*receivedMinor < requestedMinor && !tol.Accepts(requestedMinor, *receivedMinor)
}

// attachedByFingerprint reports whether one of ts, a transaction's
// transfers, is attached to deposit id by the watcher for its fingerprint
// and waits for review (Judge: unmatched, ReasonAmountMismatch).
func attachedByFingerprint(ts []db.ChainTransfer, id uuid.UUID) bool {
	for _, t := range ts {
		if t.DepositID != nil && *t.DepositID == id && TransferStatus(t.Status) == TransferUnmatched &&
			t.Reason != nil && *t.Reason == ReasonAmountMismatch && t.NeedsReview {
			return true
		}
	}
	return false
}

// CreditTopUp is the watcher's credit of a top-up topUpID paid on time by
// confirming transfer transferID (txID, amountMinor), in q: MovePayTopUp
// for the top-up and MoveCreditTopUp for the deposit it completes, which
// is credited with both transfers and gets the one ledger entry
// (DepositCreditTopUp); MoveMarkCredited for the top-up's transfer, and
// MoveSettlePolicy for the deposit's transfer attached by its fingerprint, now credited, its
// audit record naming PolicyOperator. When an operator settled the deposit
// meanwhile, the top-up is credited alone with its own entry. The events
// are the deposit's credited one.
func CreditTopUp(ctx context.Context, q store.Tx, transferID int64, topUpID uuid.UUID, txID string, amountMinor int64) (CreditOutcome, error) {
	if txID == "" || amountMinor <= 0 {
		return 0, ErrInvalidCredit
	}
	credited, err := q.DepositCreditTopUp(ctx, db.DepositCreditTopUpParams{ID: topUpID, TxID: txID, AmountMinor: amountMinor})
	if errors.Is(err, store.ErrNotFound) {
		row, err := q.DepositGet(ctx, topUpID)
		switch {
		case err != nil:
			return 0, err
		case Status(row.Deposit.Status) == StatusCredited:
			return AlreadyCredited, nil
		case row.Deposit.RequestedAmountMinor != amountMinor:
			return 0, ErrAmountMismatch
		}
		return 0, ErrNotCreditable
	}
	if err != nil {
		return 0, err
	}
	n, err := q.ChainTransferCredited(ctx, transferID)
	if err == nil && n == 0 {
		err = errNotConfirming
	}
	if err != nil {
		return 0, err
	}
	row, err := q.DepositGet(ctx, credited)
	if err != nil {
		return 0, err
	}
	d := row.Deposit
	if d.ID != topUpID {
		// The deposit took the top-up in: its transfer is settled.
		ts, err := q.ChainTransfersByTx(ctx, db.ChainTransfersByTxParams{Network: Network, TxID: *d.TransferTxID})
		if err != nil {
			return 0, err
		}
		for _, t := range ts {
			if t.DepositID == nil || *t.DepositID != d.ID || !TransferStatus(t.Status).NeedsReview() {
				continue
			}
			if err := CheckTransfer(MoveSettlePolicy, TransferStatus(t.Status), TransferCredited); err != nil {
				return 0, err
			}
			note := fmt.Sprintf("paid in full by top-up transaction %s of %s: %s credited in all",
				txID, money.USDT.Format(amountMinor), money.USDT.Format(d.CreditedAmountMinor))
			if _, err := q.ChainTransferSettle(ctx, db.ChainTransferSettleParams{
				ID: t.ID, Status: string(TransferCredited), Decision: string(DecisionCredit), Operator: PolicyOperator, Note: note,
			}); err != nil {
				return 0, err
			}
		}
	}
	return Credited, WriteEvents(ctx, q, []db.Deposit{d}, row.DbNow)
}

// ErrRefundAddress: the refund address is not a TRON base58check address.
var ErrRefundAddress = errors.New("not a TRON address (base58check, starting with T)")

// ErrRefundAddressUnfit: the refund address is a TRON address no refund may
// go to: the treasury (the money would come back as a new transfer), the
// USDT contract or the zero address (it would be lost).
var ErrRefundAddressUnfit = errors.New("not an address a refund may go to (the treasury, the USDT contract or the zero address)")

// CheckRefundAddress returns nil when address may receive a refund from
// treasury of token contract, else ErrRefundAddress or
// ErrRefundAddressUnfit.
func CheckRefundAddress(address, treasury, contract string) error {
	if err := tron.ValidateAddress(address); err != nil {
		return fmt.Errorf("%w: %v", ErrRefundAddress, err)
	}
	if address == treasury || address == contract || address == tron.ZeroAddress {
		return ErrRefundAddressUnfit
	}
	return nil
}

// SetRefundAddress stores where a refund of the user's deposit depositID,
// under review, goes (DepositRefundAddressSet). ErrRefundAddress: address
// is not a TRON address; ErrRefundAddressUnfit: it is treasury, contract
// or the zero address (CheckRefundAddress); store.ErrNotFound: no such
// deposit of the user; a *Refusal (as for MoveRefund, which the address is
// for): the deposit is not under review.
func SetRefundAddress(ctx context.Context, q store.Tx, userID, depositID uuid.UUID, address, treasury, contract string) (db.Deposit, error) {
	if err := CheckRefundAddress(address, treasury, contract); err != nil {
		return db.Deposit{}, err
	}
	d, err := q.DepositRefundAddressSet(ctx, db.DepositRefundAddressSetParams{ID: depositID, UserID: userID, Address: &address})
	if !errors.Is(err, store.ErrNotFound) {
		return d, err
	}
	row, err := q.DepositGetByUser(ctx, db.DepositGetByUserParams{ID: depositID, UserID: userID})
	if err != nil {
		return db.Deposit{}, err
	}
	from := EffectiveStatus(Status(row.Deposit.Status), row.Deposit.ExpiresAt, row.DbNow)
	return db.Deposit{}, &Refusal{Move: MoveRefund, From: string(from), To: string(StatusRefunded)}
}
