package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"

	"creativeapi/gen/api"
	"creativeapi/gen/db"
	"creativeapi/internal/cursor"
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
	params := db.OperatorTransfersListParams{NeedsReview: r.Params.NeedsReview, RowLimit: cursor.Over(limit), AfterID: after}
	if r.Params.Status != nil {
		st := string(*r.Params.Status)
		params.Status = &st
	}
	rows, err := s.store.Q.OperatorTransfersList(ctx, params)
	if err != nil {
		return nil, err
	}
	rows, more := cursor.Trim(rows, limit)
	next := nextCursor(operatorTransferCursor, 0)
	if more {
		next = nextCursor(operatorTransferCursor, rows[len(rows)-1].ID)
	}
	items, err := operatorTransfers(ctx, s.store.Q, rows)
	if err != nil {
		return nil, err
	}
	return api.ListOperatorTransfers200JSONResponse{Items: items, NextCursor: next}, nil
}

// GetOperatorTransfer answers one transfer with its settlement audit
// records, for operators.
func (s *Server) GetOperatorTransfer(ctx context.Context, r api.GetOperatorTransferRequestObject) (api.GetOperatorTransferResponseObject, error) {
	t, err := s.store.Q.ChainTransferGet(ctx, uuid.UUID(r.TransferId))
	if err != nil {
		return nil, err // store.ErrNotFound: 404
	}
	items, err := operatorTransfers(ctx, s.store.Q, []db.ChainTransfer{t})
	if err != nil {
		return nil, err
	}
	return api.GetOperatorTransfer200JSONResponse(items[0]), nil
}

// operatorTransfers is ts as operators read them, with their settlement
// audit records (one query for all of them, through q).
func operatorTransfers(ctx context.Context, q *db.Queries, ts []db.ChainTransfer) ([]api.OperatorTransfer, error) {
	ids := make([]int64, len(ts))
	for i, t := range ts {
		ids[i] = t.ID
	}
	settlements, err := q.ChainTransferSettlements(ctx, ids)
	if err != nil {
		return nil, err
	}
	byTransfer := make(map[int64][]api.TransferSettlement, len(settlements))
	for _, st := range settlements {
		op := api.SettlementOperator{Id: nullable.NewNullNullable[uuid.UUID](), Name: st.Operator}
		if st.UserID != nil {
			op.Id = nullable.NewNullableWithValue(*st.UserID)
		}
		dep := nullable.NewNullNullable[uuid.UUID]()
		if st.DepositID != nil {
			dep = nullable.NewNullableWithValue(*st.DepositID)
		}
		byTransfer[st.TransferID] = append(byTransfer[st.TransferID], api.TransferSettlement{
			Operator: op, Decision: api.TransferSettlementDecision(st.Decision), Note: st.Note, CreatedAt: st.CreatedAt, DepositId: dep})
	}
	out := make([]api.OperatorTransfer, len(ts))
	for i, t := range ts {
		o := api.OperatorTransfer{
			Id: t.PublicID, TransactionId: t.TxID, AmountRaw: t.AmountRaw, From: t.FromAddress, BlockTime: t.BlockTime,
			Status: api.TransferStatus(t.Status), NeedsReview: t.NeedsReview,
			Amount: nullable.NewNullNullable[api.NullableMoney](), Reason: nullable.NewNullNullable[string](),
			DepositId: nullable.NewNullNullable[uuid.UUID](), Settlements: byTransfer[t.ID],
		}
		if t.AmountMinor != nil {
			o.Amount = nullable.NewNullableWithValue(deposit.USDT(*t.AmountMinor))
		}
		if t.Reason != nil && *t.Reason != "" {
			o.Reason = nullable.NewNullableWithValue(*t.Reason)
		}
		if t.DepositID != nil {
			o.DepositId = nullable.NewNullableWithValue(*t.DepositID)
		}
		if o.Settlements == nil {
			o.Settlements = []api.TransferSettlement{}
		}
		out[i] = o
	}
	return out, nil
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
	stillOperator := func(ctx context.Context, _ *db.Queries) error { return operatorOnly(ctx) }
	return s.command(ctx, r.Params.IdempotencyKey, stillOperator,
		func(ctx context.Context, q store.Tx) (idempotency.Response, error) {
			t, err := q.ChainTransferGet(ctx, uuid.UUID(r.TransferId))
			if err != nil {
				return idempotency.Response{}, err // store.ErrNotFound: 404
			}
			err = deposit.SettleTx(ctx, q, t.ID, move, caller.Email, r.Body.Note)
			switch {
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
			t, err = q.ChainTransferGet(ctx, t.PublicID)
			if err != nil {
				return idempotency.Response{}, err
			}
			items, err := operatorTransfers(ctx, q.Queries, []db.ChainTransfer{t})
			if err != nil {
				return idempotency.Response{}, err
			}
			return idempotency.JSON(http.StatusOK, items[0], "")
		})
}

func (r rawJSON) VisitSettleOperatorTransferResponse(w http.ResponseWriter) error { return r.write(w) }
