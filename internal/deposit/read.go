package deposit

import (
	"context"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/gen/db"
	"creativeapi/internal/cursor"
	"creativeapi/internal/money"
)

// The reads of a user's deposits and balance, as the API shows them: the
// handlers read deposits through here, never the queries themselves.

// List is one page of user's deposits, newest first, after the position
// after (the zero position: from the newest); next is the position the
// next page continues from, zero on the last page.
func List(ctx context.Context, q *db.Queries, user uuid.UUID, after cursor.TimeID, limit int) (items []api.AccountDeposit, next cursor.TimeID, err error) {
	params := db.DepositListByUserParams{UserID: user, RowLimit: cursor.Over(limit)}
	if after != (cursor.TimeID{}) {
		params.CursorCreatedAt, params.CursorID = &after.At, &after.ID
	}
	rows, err := q.DepositListByUser(ctx, params)
	if err != nil {
		return nil, cursor.TimeID{}, err
	}
	rows, more := cursor.Trim(rows, limit)
	if more {
		last := rows[len(rows)-1].Deposit
		next = cursor.TimeID{At: last.CreatedAt, ID: last.ID}
	}
	items = make([]api.AccountDeposit, len(rows))
	for i, row := range rows {
		items[i] = Body(row.Deposit, row.DbNow)
	}
	return items, next, nil
}

// Get is one of user's deposits; anyone else's is store.ErrNotFound.
func Get(ctx context.Context, q *db.Queries, user, id uuid.UUID) (api.AccountDeposit, error) {
	row, err := q.DepositGetByUser(ctx, db.DepositGetByUserParams{ID: id, UserID: user})
	if err != nil {
		return api.AccountDeposit{}, err
	}
	return Body(row.Deposit, row.DbNow), nil
}

// Balance is the sum of user's ledger entries in USDT.
func Balance(ctx context.Context, q *db.Queries, user uuid.UUID) (api.Money, error) {
	balance, err := q.LedgerBalance(ctx, db.LedgerBalanceParams{UserID: user, Currency: money.USDT.Code})
	if err != nil {
		return api.Money{}, err
	}
	return USDT(balance), nil
}

// EntryKindDepositCredit is the kind of the ledger entry of a credited
// deposit (ledger_entries.source_type 'deposit').
const EntryKindDepositCredit = "deposit_credit"

// Entries is one page of user's ledger entries, newest first, after the
// position after (the zero position: from the newest), as List pages
// deposits. Balance is the sum of every entry's amount.
func Entries(ctx context.Context, q *db.Queries, user uuid.UUID, after cursor.TimeID, limit int) (items []api.LedgerEntry, next cursor.TimeID, err error) {
	params := db.LedgerEntryListByUserParams{UserID: user, RowLimit: int32(limit) + 1}
	if after != (cursor.TimeID{}) {
		params.CursorCreatedAt, params.CursorID = &after.At, &after.ID
	}
	rows, err := q.LedgerEntryListByUser(ctx, params)
	if err != nil {
		return nil, cursor.TimeID{}, err
	}
	if len(rows) > limit {
		rows = rows[:limit]
		last := rows[limit-1]
		next = cursor.TimeID{At: last.CreatedAt, ID: last.PublicID}
	}
	items = make([]api.LedgerEntry, len(rows))
	for i, r := range rows {
		e := api.LedgerEntry{
			Id: r.PublicID, Amount: USDT(r.AmountMinor), Kind: api.LedgerEntryKind(EntryKindDepositCredit),
			TransactionIds: []string{}, CreatedAt: r.CreatedAt,
		}
		switch {
		case r.TopUpOf != nil:
			// A top-up credited alone (its deposit was settled before it
			// arrived) is shown as part of the deposit it was for.
			e.DepositId.Set(*r.TopUpOf)
		case r.DepositID != nil:
			e.DepositId.Set(*r.DepositID)
		default:
			e.DepositId.SetNull()
		}
		if r.TransferTxID != nil {
			e.TransactionIds = append(e.TransactionIds, *r.TransferTxID)
		}
		e.TransactionIds = append(e.TransactionIds, r.TopUpTxIds...)
		items[i] = e
	}
	return items, next, nil
}
