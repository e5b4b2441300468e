package deposit

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"

	"creativeapi/gen/api"
	"creativeapi/gen/db"
	"creativeapi/internal/cursor"
	"creativeapi/internal/store"
)

// This file is the transfers as operators read and settle them (the
// operator API): every transfer to the treasury, with its settlement audit
// records.

// TransferFilter narrows the operators' list of transfers; nil fields do
// not narrow it.
type TransferFilter struct {
	Status      *TransferStatus
	NeedsReview *bool
}

// OperatorTransfers reads one page of transfers by id, after the transfer
// numbered after (0 for the first page); next is the position the next
// page continues from (0 on the last page).
func OperatorTransfers(ctx context.Context, q *db.Queries, f TransferFilter, after int64, limit int) (items []api.OperatorTransfer, next int64, err error) {
	params := db.OperatorTransfersListParams{NeedsReview: f.NeedsReview, RowLimit: cursor.Over(limit), AfterID: after}
	if f.Status != nil {
		st := string(*f.Status)
		params.Status = &st
	}
	rows, err := q.OperatorTransfersList(ctx, params)
	if err != nil {
		return nil, 0, err
	}
	rows, more := cursor.Trim(rows, limit)
	if more {
		next = rows[len(rows)-1].ID
	}
	items, err = operatorTransfers(ctx, q, rows)
	return items, next, err
}

// OperatorTransfer is one transfer by its public id, or store.ErrNotFound.
func OperatorTransfer(ctx context.Context, q *db.Queries, id uuid.UUID) (api.OperatorTransfer, error) {
	t, err := q.ChainTransferGet(ctx, id)
	if err != nil {
		return api.OperatorTransfer{}, err
	}
	items, err := operatorTransfers(ctx, q, []db.ChainTransfer{t})
	if err != nil {
		return api.OperatorTransfer{}, err
	}
	return items[0], nil
}

// SettleByOperator settles the transfer with public id by move (SettleTx,
// the code of the transfers settle command too) in q, the audit record
// naming operator, and returns the transfer as settled. Its refusals are
// SettleTx's, and store.ErrNotFound for an unknown transfer.
//
// refundTxID, with MoveSettleRefund only (else ErrRefundTxOnlyForRefund),
// is the transaction that sent the transfer back (SettleRefundTx).
func SettleByOperator(ctx context.Context, q store.Tx, id uuid.UUID, m Move, operator, note string, refundTxID *string) (api.OperatorTransfer, error) {
	t, err := q.ChainTransferGet(ctx, id)
	if err != nil {
		return api.OperatorTransfer{}, err
	}
	err = settle(ctx, q, t.ID, m, operator, note, refundTxID)
	if err != nil {
		return api.OperatorTransfer{}, err
	}
	return OperatorTransfer(ctx, q.Queries, id)
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
	claimRows, err := q.ChainTransferClaims(ctx, ids)
	if err != nil {
		return nil, err
	}
	claims := make(map[int64][]api.TransferClaim, len(claimRows))
	for _, c := range claimRows {
		closed := nullable.NewNullNullable[time.Time]()
		if c.ClosedAt != nil {
			closed = nullable.NewNullableWithValue(c.ClosedAt.UTC())
		}
		claims[c.TransferID] = append(claims[c.TransferID], api.TransferClaim{
			DepositId: c.DepositID, UserId: c.UserID, Email: c.Email, CreatedAt: c.CreatedAt.UTC(), ClosedAt: closed})
	}
	var depositIDs []uuid.UUID
	for _, t := range ts {
		if t.DepositID != nil {
			depositIDs = append(depositIDs, *t.DepositID)
		}
	}
	refundTo := map[uuid.UUID]string{}
	if len(depositIDs) > 0 {
		rows, err := q.DepositRefundAddresses(ctx, depositIDs)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			refundTo[r.ID] = *r.RefundAddress
		}
	}
	out := make([]api.OperatorTransfer, len(ts))
	for i, t := range ts {
		o := api.OperatorTransfer{
			Id: t.PublicID, TransactionId: t.TxID, AmountRaw: t.AmountRaw, From: t.FromAddress, BlockTime: t.BlockTime,
			Status: api.TransferStatus(t.Status), NeedsReview: t.NeedsReview,
			Amount: nullable.NewNullNullable[api.NullableMoney](), Reason: nullable.NewNullNullable[string](),
			DepositId: nullable.NewNullNullable[uuid.UUID](), Settlements: byTransfer[t.ID],
			RefundAddress: nullable.NewNullNullable[string](),
		}
		if t.AmountMinor != nil {
			o.Amount = nullable.NewNullableWithValue(USDT(*t.AmountMinor))
		}
		if t.Reason != nil && *t.Reason != "" {
			o.Reason = nullable.NewNullableWithValue(*t.Reason)
		}
		if t.DepositID != nil {
			o.DepositId = nullable.NewNullableWithValue(*t.DepositID)
			if addr, ok := refundTo[*t.DepositID]; ok {
				o.RefundAddress = nullable.NewNullableWithValue(addr)
			}
		}
		o.Claims = claims[t.ID]
		if o.Claims == nil {
			o.Claims = []api.TransferClaim{}
		}
		if o.Settlements == nil {
			o.Settlements = []api.TransferSettlement{}
		}
		out[i] = o
	}
	return out, nil
}
