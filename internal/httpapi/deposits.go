package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/deposit"
	"creativeapi/internal/gate"
	"creativeapi/internal/idempotency"
	"creativeapi/internal/money"
	"creativeapi/internal/problem"
	"creativeapi/internal/requestctx"
	"creativeapi/internal/store"
)

// depositsPath is the collection of the caller's deposits; a deposit's
// Location is depositsPath/{id}.
const depositsPath = "/api/v1/me/balance/deposits"

// capacityRetryAfter is the Retry-After, in seconds, of
// deposit_capacity_exhausted: suffixes free up as deposits expire or are
// credited, so a minute later is a fair first retry.
const capacityRetryAfter = 60

// depositBodyChecks reports the amount rules beyond the schema (whole
// cents, configured bounds) together with the schema's own errors.
func (s *Server) depositBodyChecks() map[string]gate.BodyCheck {
	bounds := s.cfg.DepositBounds()
	return map[string]gate.BodyCheck{"createAccountDeposit": func(body any) []problem.FieldError {
		req, _ := body.(map[string]any)
		amount, ok := req["amount"].(map[string]any)
		if !ok {
			return nil // not an object: the schema reports it
		}
		// A member of the wrong type stays empty; the schema's error for it
		// comes first and is the one kept.
		minor, _ := amount["amountMinor"].(string)
		currency, _ := amount["currency"].(string)
		scale := -1.0
		if n, ok := amount["scale"].(json.Number); ok {
			if f, err := n.Float64(); err == nil {
				scale = f
			}
		}
		if scale != math.Trunc(scale) || math.Abs(scale) > 1e6 {
			scale = -1
		}
		_, errs := deposit.CheckRequest(minor, currency, int(scale), bounds)
		return errs
	}}
}

func (s *Server) depositSettings() deposit.Settings {
	return deposit.Settings{
		Address: s.cfg.TreasuryAddress, Confirmations: s.cfg.DepositConfirmations,
		TTL: s.cfg.DepositTTL, MonitoringWindow: s.cfg.DepositMonitoringWindow,
		MaxOpenPerUser: s.cfg.DepositMaxOpenPerUser,
	}
}

// CreateAccountDeposit opens a deposit request under the caller's
// Idempotency-Key: the limit check, the reservation of the requested
// amount and the stored answer commit in one transaction. What depends on
// the configuration (the treasury, the bounds) is checked only when the
// command runs: an answer stored under the key comes back first, whatever
// the configuration says today.
func (s *Server) CreateAccountDeposit(ctx context.Context, r api.CreateAccountDepositRequestObject) (api.CreateAccountDepositResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	amount := r.Body.Amount
	out, err := s.command(ctx, r.Params.IdempotencyKey, nil,
		func(ctx context.Context, q store.Tx) (idempotency.Response, error) {
			if s.cfg.TreasuryAddress == "" {
				return idempotency.Response{}, problem.New(http.StatusServiceUnavailable, problem.DepositsUnavailable, "Deposits are not available on this server.")
			}
			base, errs := deposit.CheckRequest(amount.AmountMinor, string(amount.Currency), int(amount.Scale), s.cfg.DepositBounds())
			if errs != nil {
				// The gate ran the same check; this only guards against drift.
				return idempotency.Response{}, problem.Invalid(errs)
			}
			d, err := deposit.Create(ctx, q, s.depositSettings(), caller.UserID, base)
			switch {
			case errors.Is(err, deposit.ErrTooManyOpen):
				return idempotency.Response{}, problem.New(http.StatusConflict, problem.TooManyOpenDeposits,
					"You already have %d open deposit requests. Pay or let one expire first.", s.cfg.DepositMaxOpenPerUser)
			case errors.Is(err, deposit.ErrCapacityExhausted):
				return idempotency.Response{}, &problem.Error{
					Status: http.StatusServiceUnavailable, Code: problem.DepositCapacityExhausted, RetryAfter: capacityRetryAfter,
					Detail: fmt.Sprintf("Every matching suffix for %s is taken. Try again later or choose another amount.", money.USDT.Format(base)),
				}
			case err != nil:
				return idempotency.Response{}, err
			}
			return idempotency.JSON(http.StatusCreated, deposit.Body(d, d.CreatedAt), depositsPath+"/"+d.ID.String())
		})
	if err != nil {
		return nil, err
	}
	if !out.replayed && out.Status == http.StatusCreated {
		s.metrics.DepositCreated()
	}
	return out, nil
}

// ListAccountDeposits pages the caller's deposits, newest first.
func (s *Server) ListAccountDeposits(ctx context.Context, r api.ListAccountDepositsRequestObject) (api.ListAccountDepositsResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	size, after, err := page(depositCursor, r.Params.Limit, r.Params.Cursor)
	if err != nil {
		return nil, err
	}
	items, next, err := deposit.List(ctx, s.store.Q, caller.UserID, after, size)
	if err != nil {
		return nil, err
	}
	return api.ListAccountDeposits200JSONResponse{Body: api.AccountDepositList{Items: items, NextCursor: nextCursor(depositCursor, next)}}, nil
}

// GetAccountDeposit answers one of the caller's deposits; anyone else's
// does not exist for them.
func (s *Server) GetAccountDeposit(ctx context.Context, r api.GetAccountDepositRequestObject) (api.GetAccountDepositResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	d, err := deposit.Get(ctx, s.store.Q, caller.UserID, uuid.UUID(r.DepositId))
	if err != nil {
		return nil, err // store.ErrNotFound is the Problem writer's 404
	}
	return api.GetAccountDeposit200JSONResponse{Body: d}, nil
}

// GetAccountBalance answers the sum of the caller's ledger entries.
func (s *Server) GetAccountBalance(ctx context.Context, _ api.GetAccountBalanceRequestObject) (api.GetAccountBalanceResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	balance, err := deposit.Balance(ctx, s.store.Q, caller.UserID)
	if err != nil {
		return nil, err
	}
	return api.GetAccountBalance200JSONResponse{Body: api.AccountBalance{Available: balance}}, nil
}

// claimRetryAfter is the Retry-After, in seconds, of transfer_unknown: the
// watcher reads the chain every few seconds and waits for a block to be
// final (about a minute on TRON) before it records a late or short transfer.
const claimRetryAfter = 60

// ClaimAccountDeposit records the caller's claim of the transfer they name
// for their deposit, which goes under review (deposit.Claim), under the caller's
// Idempotency-Key. Its 409s are not stored under the key: they change as
// the watcher reads on and the deposit moves.
func (s *Server) ClaimAccountDeposit(ctx context.Context, r api.ClaimAccountDepositRequestObject) (api.ClaimAccountDepositResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	txID := strings.ToLower(r.Body.TransactionId)
	return s.command(ctx, r.Params.IdempotencyKey, nil,
		func(ctx context.Context, q store.Tx) (idempotency.Response, error) {
			now := time.Now()
			d, err := deposit.Claim(ctx, q, caller.UserID, uuid.UUID(r.DepositId), txID, s.cfg.DepositMonitoringWindow, now)
			var refusal *deposit.Refusal
			switch {
			case errors.As(err, &refusal):
				return idempotency.Response{}, problem.New(http.StatusConflict, problem.InvalidTransition,
					"A deposit that is %s cannot be claimed: only one awaiting its transfer or expired can.", refusal.From)
			case errors.Is(err, deposit.ErrTransferUnknown):
				return idempotency.Response{}, &problem.Error{Status: http.StatusConflict, Code: problem.TransferUnknown, RetryAfter: claimRetryAfter,
					Detail: "No transfer to the treasury with this transaction id was seen yet. Retry in a minute."}
			case errors.Is(err, deposit.ErrTransferTaken):
				return idempotency.Response{}, problem.New(http.StatusConflict, problem.TransferTaken,
					"This transfer already belongs to a deposit or was settled.")
			case errors.Is(err, deposit.ErrTooManyClaims):
				return idempotency.Response{}, problem.New(http.StatusConflict, problem.TooManyClaims,
					"You hold %d open claims, or made %d in the last day: wait for an operator to settle one.", deposit.MaxOpenClaims, deposit.MaxDailyClaims)
			case errors.Is(err, deposit.ErrTransferUnfit):
				return idempotency.Response{}, problem.Invalid([]problem.FieldError{{Field: "transactionId", Code: problem.InvalidValue,
					Message: "this transfer cannot pay this deposit: it failed, is not USDT to the deposit's address, or came before the deposit or after its monitoring window"}})
			case err != nil:
				return idempotency.Response{}, err // store.ErrNotFound: 404
			}
			return idempotency.JSON(http.StatusOK, deposit.Body(d, now), "")
		})
}

// CancelAccountDeposit cancels the caller's deposit awaiting its transfer
// (deposit.Cancel); in any other state it is 409 invalid_transition.
func (s *Server) CancelAccountDeposit(ctx context.Context, r api.CancelAccountDepositRequestObject) (api.CancelAccountDepositResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	now := time.Now()
	var d api.AccountDeposit
	err := s.store.InTx(ctx, func(q store.Tx) error {
		var err error
		d, err = deposit.Cancel(ctx, q, caller.UserID, uuid.UUID(r.DepositId), now)
		return err
	})
	var refusal *deposit.Refusal
	switch {
	case errors.As(err, &refusal):
		return nil, problem.New(http.StatusConflict, problem.InvalidTransition,
			"A deposit that is %s cannot be cancelled; only one awaiting its transfer can.", refusal.From)
	case err != nil:
		return nil, err // store.ErrNotFound: 404
	}
	return api.CancelAccountDeposit200JSONResponse{Body: d}, nil
}

// ListLedgerEntries pages the caller's ledger entries, newest first: the
// entries the balance sums.
func (s *Server) ListLedgerEntries(ctx context.Context, r api.ListLedgerEntriesRequestObject) (api.ListLedgerEntriesResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	size, after, err := page(ledgerEntryCursor, r.Params.Limit, r.Params.Cursor)
	if err != nil {
		return nil, err
	}
	items, next, err := deposit.Entries(ctx, s.store.Q, caller.UserID, after, size)
	if err != nil {
		return nil, err
	}
	return api.ListLedgerEntries200JSONResponse{Body: api.LedgerEntryList{Items: items, NextCursor: nextCursor(ledgerEntryCursor, next)}}, nil
}

// TopUpAccountDeposit reserves the rest of a short claimed transfer for
// the caller's deposit under review (deposit.TopUp), under the caller's
// Idempotency-Key. Its 409s are not stored under the key: they change as
// the deposit moves.
func (s *Server) TopUpAccountDeposit(ctx context.Context, r api.TopUpAccountDepositRequestObject) (api.TopUpAccountDepositResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	return s.command(ctx, r.Params.IdempotencyKey, nil,
		func(ctx context.Context, q store.Tx) (idempotency.Response, error) {
			now := time.Now()
			d, err := deposit.TopUp(ctx, q, s.depositSettings(), caller.UserID, uuid.UUID(r.DepositId), s.cfg.DepositShortfallTolerance, now)
			var refusal *deposit.Refusal
			switch {
			case errors.As(err, &refusal):
				return idempotency.Response{}, problem.New(http.StatusConflict, problem.InvalidTransition,
					"A deposit that is %s takes no top-up; only one under review for a short transfer that carried its matching suffix does (never a claimed one).", refusal.From)
			case errors.Is(err, deposit.ErrCapacityExhausted):
				return idempotency.Response{}, &problem.Error{
					Status: http.StatusServiceUnavailable, Code: problem.DepositCapacityExhausted, RetryAfter: capacityRetryAfter,
					Detail: "Every matching suffix for the rest of this deposit is taken. Try again later.",
				}
			case err != nil:
				return idempotency.Response{}, err // store.ErrNotFound: 404
			}
			return idempotency.JSON(http.StatusOK, deposit.Body(d, now), "")
		})
}

func (r rawJSON) VisitTopUpAccountDepositResponse(w http.ResponseWriter) error { return r.write(w) }

// PutAccountDepositRefundAddress stores where a refund of the caller's
// deposit under review goes (deposit.SetRefundAddress).
func (s *Server) PutAccountDepositRefundAddress(ctx context.Context, r api.PutAccountDepositRefundAddressRequestObject) (api.PutAccountDepositRefundAddressResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	now := time.Now()
	var d api.AccountDeposit
	err := s.store.InTx(ctx, func(q store.Tx) error {
		row, err := deposit.SetRefundAddress(ctx, q, caller.UserID, uuid.UUID(r.DepositId), r.Body.Address, s.cfg.TreasuryAddress, s.cfg.TronUSDTContract)
		d = deposit.Body(row, now)
		return err
	})
	var refusal *deposit.Refusal
	switch {
	case errors.Is(err, deposit.ErrRefundAddress):
		return nil, problem.Invalid([]problem.FieldError{{Field: "address", Code: problem.InvalidValue,
			Message: "must be a TRON address (base58check, starting with T)"}})
	case errors.Is(err, deposit.ErrRefundAddressUnfit):
		return nil, problem.Invalid([]problem.FieldError{{Field: "address", Code: problem.InvalidValue,
			Message: "must not be the treasury, the USDT contract or the zero address: a refund sent there comes back or is lost"}})
	case errors.As(err, &refusal):
		return nil, problem.New(http.StatusConflict, problem.InvalidTransition,
			"A deposit that is %s takes no refund address; only one under review does.", refusal.From)
	case err != nil:
		return nil, err // store.ErrNotFound: 404
	}
	return api.PutAccountDepositRefundAddress200JSONResponse{Body: d}, nil
}
