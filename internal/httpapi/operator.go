package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/deposit"
	"creativeapi/internal/idempotency"
	"creativeapi/internal/problem"
	"creativeapi/internal/requestctx"
	"creativeapi/internal/store"
)

// operatorOnly refuses a caller who is not a platform operator with the
// 404 of a path that does not exist. The gate answers it for every
// operation marked x-operator-only, right after authentication (admit);
// the settlement's replay rule asks it again, as every keyed command's
// rule does. The flag rides on the session lookup: it costs no query.
func operatorOnly(ctx context.Context) error {
	caller, ok := requestctx.CallerFrom(ctx)
	if !ok || !caller.Operator {
		return store.ErrNotFound
	}
	return nil
}

// ListOperatorTransfers pages the transfers to the treasury by id, narrowed
// by status and needsReview, for operators.
func (s *Server) ListOperatorTransfers(ctx context.Context, r api.ListOperatorTransfersRequestObject) (api.ListOperatorTransfersResponseObject, error) {
	limit, after, err := page(operatorTransferCursor, r.Params.Limit, r.Params.Cursor)
	if err != nil {
		return nil, err
	}
	f := deposit.TransferFilter{NeedsReview: r.Params.NeedsReview}
	if r.Params.Status != nil {
		st := deposit.TransferStatus(*r.Params.Status)
		f.Status = &st
	}
	items, next, err := deposit.OperatorTransfers(ctx, s.store.Q, f, after, limit)
	if err != nil {
		return nil, err
	}
	return api.ListOperatorTransfers200JSONResponse{Body: api.OperatorTransferList{Items: items, NextCursor: nextCursor(operatorTransferCursor, next)}}, nil
}

// GetOperatorTransfer answers one transfer with its settlement audit
// records, for operators.
func (s *Server) GetOperatorTransfer(ctx context.Context, r api.GetOperatorTransferRequestObject) (api.GetOperatorTransferResponseObject, error) {
	t, err := deposit.OperatorTransfer(ctx, s.store.Q, uuid.UUID(r.TransferId))
	if err != nil {
		return nil, err // store.ErrNotFound: 404
	}
	return api.GetOperatorTransfer200JSONResponse{Body: t}, nil
}

// SettleOperatorTransfer settles a transfer waiting for review by the
// operator's decision (deposit.SettleTx, the code of the transfers settle
// command), under the caller's Idempotency-Key. The audit record names the
// operator by their email, which GetOperatorTransfer resolves to the user.
// Its 409s are not stored under the key: they depend on the transfer's state.
func (s *Server) SettleOperatorTransfer(ctx context.Context, r api.SettleOperatorTransferRequestObject) (api.SettleOperatorTransferResponseObject, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	move, ok := deposit.Settlements[deposit.Decision(r.Body.Decision)]
	if !ok {
		return nil, problem.Invalid([]problem.FieldError{{Field: "decision", Code: problem.InvalidValue, Message: "must be credit, refund or reject"}})
	}
	// A stored settlement goes back only to a caller still an operator.
	stillOperator := func(ctx context.Context) error { return operatorOnly(ctx) }
	return s.command(ctx, r.Params.IdempotencyKey, stillOperator,
		func(ctx context.Context, q store.Tx) (idempotency.Response, error) {
			var refundTx *string
			if r.Body.RefundTransactionId != nil {
				tx := strings.ToLower(*r.Body.RefundTransactionId)
				refundTx = &tx
			}
			t, err := deposit.SettleByOperator(ctx, q, uuid.UUID(r.TransferId), move, caller.Email, r.Body.Note, refundTx)
			switch {
			case errors.Is(err, deposit.ErrRefundTxOnlyForRefund):
				return idempotency.Response{}, problem.Invalid([]problem.FieldError{{Field: "refundTransactionId", Code: problem.InvalidValue,
					Message: "goes with the refund decision only"}})
			case errors.Is(err, deposit.ErrNotForReview):
				return idempotency.Response{}, problem.New(http.StatusConflict, problem.InvalidTransition,
					"The transfer is not waiting for review (already settled, or not late or unmatched).")
			case errors.Is(err, deposit.ErrNoDeposit):
				return idempotency.Response{}, problem.New(http.StatusConflict, problem.InvalidTransition,
					"No deposit is attached to this transfer: it can only be refunded.")
			case errors.Is(err, deposit.ErrSettleInput):
				return idempotency.Response{}, problem.Invalid([]problem.FieldError{{Field: "note", Code: problem.InvalidValue,
					Message: "must not be blank"}})
			case err != nil:
				return idempotency.Response{}, err // store.ErrNotFound: 404
			}
			return idempotency.JSON(http.StatusOK, t, "")
		})
}

func (r rawJSON) VisitSettleOperatorTransferResponse(w http.ResponseWriter) error { return r.write(w) }
