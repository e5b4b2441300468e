package chainwatch_test

import (
	"context"
	"errors"
	"testing"

	"creativeapi/internal/deposit"
	"creativeapi/internal/devchain"
	"creativeapi/internal/store"
)

func (b *bundle) transferID(t *testing.T, status string) int64 {
	t.Helper()
	var id int64
	if err := b.d.Pool.QueryRow(context.Background(), "SELECT id FROM chain_transfers WHERE status = $1", status).Scan(&id); err != nil {
		t.Fatalf("find the %s transfer: %v", status, err)
	}
	return id
}

func TestSettle_ALateTransferIsCreditedByAnOperatorOnce(t *testing.T) {
	t.Parallel()
	w, b := setup(t)
	dep := b.deposit(t, hundredUSDT)
	b.exec(t, "UPDATE deposits SET status = 'expired', expires_at = now() - interval '1 minute' WHERE id = $1", dep.ID)
	b.pay(t, dep.RequestedAmountMinor)
	b.chain.Mine(devchain.DefaultSolidLag)
	poll(t, w)
	id := b.transferID(t, "late")
	ctx := context.Background()

	if err := deposit.Settle(ctx, b.d.Store, id, deposit.MoveSettleCredit, "", "paid late"); !errors.Is(err, deposit.ErrSettleInput) {
		t.Fatalf("without an operator: %v; want refused", err)
	}
	if err := deposit.Settle(ctx, b.d.Store, id, deposit.MoveSettleCredit, "ops-ana", "customer paid 3 minutes late; ticket 42"); err != nil {
		t.Fatalf("settle: %v", err)
	}
	if s := b.state(t, dep.ID); s.Status != "credited" || s.Credited != dep.RequestedAmountMinor {
		t.Fatalf("deposit: %+v; want credited", s)
	}
	if err := deposit.Settle(ctx, b.d.Store, id, deposit.MoveSettleCredit, "ops-ana", "again"); !errors.Is(err, deposit.ErrNotForReview) {
		t.Fatalf("second settle: %v; want not for review", err)
	}
	if err := deposit.Settle(ctx, b.d.Store, id, deposit.MoveSettleRefund, "ops-bo", "and refund?"); !errors.Is(err, deposit.ErrNotForReview) {
		t.Fatalf("refund after credit: %v; want not for review", err)
	}
	if sum, n := b.balance(t); sum != dep.RequestedAmountMinor || n != 1 {
		t.Fatalf("balance %d in %d entries; want one credit", sum, n)
	}
	var operator, note, decision string
	if err := b.d.Pool.QueryRow(ctx, "SELECT operator, note, decision FROM chain_transfer_settlements WHERE transfer_id = $1", id).
		Scan(&operator, &note, &decision); err != nil || operator != "ops-ana" || decision != "credit" {
		t.Fatalf("audit record: %s %s %q, %v", operator, decision, note, err)
	}
	if tr := b.transfers(t); tr[0].Status != "credited" || tr[0].NeedsReview {
		t.Fatalf("transfer: %+v", tr[0])
	}
	t.Run("the watcher does not credit it again", func(t *testing.T) {
		b.chain.Mine(devchain.DefaultSolidLag + required)
		poll(t, w)
		if _, n := b.balance(t); n != 1 {
			t.Fatalf("%d ledger entries", n)
		}
	})
}

func TestSettle_AnUnmatchedTransferCanOnlyBeRefunded(t *testing.T) {
	t.Parallel()
	w, b := setup(t)
	b.pay(t, 123_456_789)
	b.chain.Mine(devchain.DefaultSolidLag) // an unmatched transfer is recorded once final
	poll(t, w)
	id := b.transferID(t, "unmatched")
	ctx := context.Background()
	if err := deposit.Settle(ctx, b.d.Store, id, deposit.MoveSettleCredit, "ops", "credit?"); !errors.Is(err, deposit.ErrNoDeposit) {
		t.Fatalf("credit of an unmatched transfer: %v; want refused", err)
	}
	if err := deposit.Settle(ctx, b.d.Store, id, deposit.MoveSettleRefund, "ops", "sent back in tx abc"); err != nil {
		t.Fatalf("refund: %v", err)
	}
	if tr := b.transfers(t); tr[0].Status != "refunded" || tr[0].NeedsReview {
		t.Fatalf("transfer: %+v", tr[0])
	}
	if err := deposit.Settle(ctx, b.d.Store, 999_999, deposit.MoveSettleRefund, "ops", "x"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown transfer: %v; want not found", err)
	}
}

func TestSettle_AConfirmingTransferIsNotForAnOperator(t *testing.T) {
	t.Parallel()
	w, b := setup(t)
	dep := b.deposit(t, hundredUSDT)
	b.pay(t, dep.RequestedAmountMinor)
	poll(t, w)
	err := deposit.Settle(context.Background(), b.d.Store, b.transferID(t, string(deposit.TransferConfirming)), deposit.MoveSettleRefund, "ops", "x")
	if !errors.Is(err, deposit.ErrNotForReview) {
		t.Fatalf("settle: %v; want not for review", err)
	}
}

func TestSettle_RefundingALateTransferRefundsItsDeposit(t *testing.T) {
	t.Parallel()
	w, b := setup(t)
	dep := b.deposit(t, hundredUSDT)
	b.exec(t, "UPDATE deposits SET status = 'expired', expires_at = now() - interval '1 minute' WHERE id = $1", dep.ID)
	b.pay(t, dep.RequestedAmountMinor)
	b.chain.Mine(devchain.DefaultSolidLag)
	poll(t, w)
	ctx := context.Background()
	if err := deposit.Settle(ctx, b.d.Store, b.transferID(t, "late"), deposit.MoveSettleRefund, "ops-bo", "sent back in tx def"); err != nil {
		t.Fatalf("refund: %v", err)
	}
	if s := b.state(t, dep.ID); s.Status != "refunded" || s.Credited != 0 {
		t.Fatalf("deposit: %+v; want refunded, nothing credited", s)
	}
	var events int
	if err := b.d.Pool.QueryRow(ctx, "SELECT count(*) FROM outbox_events WHERE type = 'deposit.refunded'").Scan(&events); err != nil || events != 1 {
		t.Fatalf("%d deposit.refunded events, %v; want 1", events, err)
	}
	if sum, n := b.balance(t); sum != 0 || n != 0 {
		t.Fatalf("balance %d in %d entries; want nothing", sum, n)
	}
}
