package chainwatch_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"creativeapi/internal/devchain"
	"creativeapi/internal/tron"
)

func TestPoll_AnOnTimeTransferConfirmsThenCreditsOnce(t *testing.T) {
	t.Parallel()
	w, b := setup(t)
	dep := b.deposit(t, hundredUSDT)
	tx := b.pay(t, dep.RequestedAmountMinor)

	res := poll(t, w)
	if res.Confirming != 1 {
		t.Fatalf("poll: %+v; want one confirming transfer", res)
	}
	s := b.state(t, dep.ID)
	if s.Status != "confirming" || s.Confirmations != 1 || s.TxID == nil || *s.TxID != tx {
		t.Fatalf("after the first block: %+v; want confirming, 1 confirmation, transaction %s", s, tx)
	}

	t.Run("confirmations count up to the required number and stop there", func(t *testing.T) {
		b.chain.Mine(1)
		poll(t, w)
		if s := b.state(t, dep.ID); s.Status != "confirming" || s.Confirmations != 2 {
			t.Fatalf("after two blocks: %+v", s)
		}
		b.chain.Mine(5)
		poll(t, w)
		if s := b.state(t, dep.ID); s.Status != "confirming" || s.Confirmations != required {
			t.Fatalf("after seven blocks, not solidified: %+v; want confirming with %d", s, required)
		}
	})

	t.Run("credited once its block is solidified", func(t *testing.T) {
		b.chain.Mine(devchain.DefaultSolidLag)
		if res := poll(t, w); res.Credited != 1 {
			t.Fatalf("poll: %+v; want one credit", res)
		}
		s := b.state(t, dep.ID)
		if s.Status != "credited" || s.Credited != dep.RequestedAmountMinor || s.Reserved || *s.TxID != tx {
			t.Fatalf("after solidification: %+v", s)
		}
		if sum, n := b.balance(t); sum != dep.RequestedAmountMinor || n != 1 {
			t.Fatalf("balance %d in %d entries; want %d in one", sum, n, dep.RequestedAmountMinor)
		}
		if tr := b.transfers(t); len(tr) != 1 || tr[0].Status != "credited" || tr[0].NeedsReview {
			t.Fatalf("transfers: %+v", tr)
		}
	})

	t.Run("polling again changes nothing", func(t *testing.T) {
		b.chain.Mine(3)
		if res := poll(t, w); res.New != 0 || res.Credited != 0 || res.Listed != 1 {
			t.Fatalf("poll: %+v; want the one transfer listed and nothing new", res)
		}
		if sum, n := b.balance(t); sum != dep.RequestedAmountMinor || n != 1 {
			t.Fatalf("balance %d in %d entries after another poll", sum, n)
		}
	})
}

func TestPoll_APayerOnTimeConfirmsEvenWhenSeenAfterExpiry(t *testing.T) {
	t.Parallel()
	w, b := setup(t)
	dep := b.deposit(t, hundredUSDT)
	tx := b.pay(t, dep.RequestedAmountMinor)
	// The watcher was down: the deposit expired (and was swept) at the
	// very time of the block that paid it.
	b.exec(t, "UPDATE deposits SET status = 'expired', expires_at = $2 WHERE id = $1", dep.ID, b.chain.BlockTime(tx))
	poll(t, w)
	if s := b.state(t, dep.ID); s.Status != "confirming" || s.Confirmations != 1 {
		t.Fatalf("deposit: %+v; want confirming", s)
	}
	b.chain.Mine(devchain.DefaultSolidLag + required)
	poll(t, w)
	if s := b.state(t, dep.ID); s.Status != "credited" {
		t.Fatalf("deposit: %+v; want credited", s)
	}
}

func TestPoll_ALateExactTransferPutsTheDepositUnderReview(t *testing.T) {
	t.Parallel()
	w, b := setup(t)
	dep := b.deposit(t, hundredUSDT)
	b.exec(t, "UPDATE deposits SET status = 'expired', expires_at = now() - interval '1 minute' WHERE id = $1", dep.ID)
	tx := b.pay(t, dep.RequestedAmountMinor)
	// Until its block is final, a fork could still remove it: it waits.
	if res := poll(t, w); res.Late != 0 || res.Pending != 1 {
		t.Fatalf("poll before the block is final: %+v; want it pending", res)
	}
	if s := b.state(t, dep.ID); s.Status != "expired" || s.TxID != nil {
		t.Fatalf("deposit: %+v; want it untouched while the block is not final", s)
	}
	b.chain.Mine(devchain.DefaultSolidLag)
	if res := poll(t, w); res.Late != 1 {
		t.Fatalf("poll: %+v; want one late transfer", res)
	}
	if s := b.state(t, dep.ID); s.Status != "under_review" || s.TxID == nil || *s.TxID != tx || s.Confirmations != 0 || s.Credited != 0 {
		t.Fatalf("deposit: %+v; want it under review with the transfer attached, nothing credited", s)
	}
	var reason string
	var received int64
	if err := b.d.Pool.QueryRow(context.Background(), "SELECT review_reason, review_received_minor FROM deposits WHERE id = $1", dep.ID).
		Scan(&reason, &received); err != nil || reason != "late" || received != dep.RequestedAmountMinor {
		t.Fatalf("review: %q %d, %v; want late, the amount received", reason, received, err)
	}
	tr := b.transfers(t)
	if len(tr) != 1 || tr[0].Status != "late" || !tr[0].NeedsReview || tr[0].DepositID == nil || *tr[0].DepositID != dep.ID {
		t.Fatalf("transfers: %+v; want one late transfer for review, naming the deposit", tr)
	}
	b.chain.Mine(devchain.DefaultSolidLag + required)
	poll(t, w)
	if sum, _ := b.balance(t); sum != 0 {
		t.Fatalf("balance %d; a late transfer credits only when an operator settles it", sum)
	}
}

func TestPoll_WhatPaysNoDepositIsRecordedAsUnmatched(t *testing.T) {
	t.Parallel()
	w, b := setup(t)
	dep := b.deposit(t, hundredUSDT)
	future := b.deposit(t, 2*hundredUSDT)
	b.exec(t, "UPDATE deposits SET created_at = now() + interval '1 minute' WHERE id = $1", future.ID)
	amount := itoa(dep.RequestedAmountMinor)

	tests := []struct {
		name   string
		pay    devchain.Payment
		reason string
	}{
		{"an amount no deposit reserves", devchain.Payment{Value: itoa(dep.RequestedAmountMinor + 1)}, "no_reservation"},
		{"a short transfer without the suffix", devchain.Payment{Value: itoa(dep.RequestedAmountMinor - 10_001)}, "no_reservation"},
		{"another token", devchain.Payment{Value: amount, Contract: "TXLAQ63Xg1NAzckPwKHvzw7CSEmLMEqcdj"}, "wrong_token"},
		{"not a transfer", devchain.Payment{Value: amount, Type: "Approval"}, "not_a_transfer"},
		{"a negative value", devchain.Payment{Value: "-" + amount}, "invalid_value"},
		{"a fractional value", devchain.Payment{Value: amount + ".5"}, "invalid_value"},
		{"an 80-digit value", devchain.Payment{Value: strings.Repeat("9", 80)}, "invalid_value"},
		{"zero", devchain.Payment{Value: "0"}, "invalid_value"},
		{"a block before the deposit was created", devchain.Payment{Value: itoa(future.RequestedAmountMinor)}, "before_deposit"},
	}
	// An API that ignores the contract filter shows the other token too.
	b.wrap = func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		q := r.URL.Query()
		q.Del("contract_address")
		r.URL.RawQuery = q.Encode()
		next.ServeHTTP(w, r)
	}
	for _, tt := range tests {
		tt.pay.To = tron.DevTreasuryAddress
		tt.pay.From = fmt.Sprintf("T%033d", len(tt.name)) // distinct senders keep the events apart
		b.chain.Pay(tt.pay)
	}
	b.chain.Mine(1)
	// Recorded only once final: nothing re-reads an unmatched transfer,
	// and a payer may claim it.
	if res := poll(t, w); res.Pending != len(tests) || res.New != 0 {
		t.Fatalf("poll before the block is final: %+v; want %d pending", res, len(tests))
	}
	b.chain.Mine(devchain.DefaultSolidLag)
	if res := poll(t, w); res.Unmatched != len(tests) {
		t.Fatalf("poll: %+v; want %d unmatched", res, len(tests))
	}
	reasons := map[string]int{}
	for _, tr := range b.transfers(t) {
		if tr.Status != "unmatched" || !tr.NeedsReview || tr.Reason == nil || tr.DepositID != nil {
			t.Fatalf("transfer %+v; want unmatched, for review, with a reason", tr)
		}
		reasons[*tr.Reason]++
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if reasons[tt.reason] == 0 {
				t.Fatalf("no transfer recorded with reason %s (got %v)", tt.reason, reasons)
			}
		})
	}
	b.chain.Mine(devchain.DefaultSolidLag + required)
	poll(t, w)
	for _, d := range []struct{ id, name string }{{dep.ID.String(), "the reserved deposit"}, {future.ID.String(), "the later deposit"}} {
		var status string
		_ = b.d.Pool.QueryRow(context.Background(), "SELECT status FROM deposits WHERE id = $1", d.id).Scan(&status)
		if status != "awaiting_transfer" {
			t.Fatalf("%s is %s; want awaiting_transfer", d.name, status)
		}
	}
	if sum, _ := b.balance(t); sum != 0 {
		t.Fatalf("balance %d; nothing should credit", sum)
	}
}

func TestPoll_ATransferNotToTheTreasuryIsIgnored(t *testing.T) {
	t.Parallel()
	w, b := setup(t)
	dep := b.deposit(t, hundredUSDT)
	b.pay(t, dep.RequestedAmountMinor)
	// The API answers with the right transfer re-addressed elsewhere.
	b.wrap = func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if !strings.Contains(r.URL.Path, "/transactions/trc20") {
			next.ServeHTTP(w, r)
			return
		}
		rec := &capture{header: http.Header{}}
		next.ServeHTTP(rec, r)
		body := strings.ReplaceAll(rec.body.String(), `"to":"`+tron.DevTreasuryAddress+`"`, `"to":"TKFLf8tkDxP8XWGWtuT8kVyhC8iGeWNo5X"`)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}
	res := poll(t, w)
	if res.Listed != 1 || res.New != 0 {
		t.Fatalf("poll: %+v; want the transfer listed and nothing recorded", res)
	}
	if s := b.state(t, dep.ID); s.Status != "awaiting_transfer" {
		t.Fatalf("deposit: %+v", s)
	}
}

func TestPoll_AFailedReceiptPaysNothing(t *testing.T) {
	t.Parallel()
	w, b := setup(t)
	dep := b.deposit(t, hundredUSDT)
	b.chain.Pay(devchain.Payment{To: tron.DevTreasuryAddress, Value: itoa(dep.RequestedAmountMinor), Result: "REVERT"})
	b.chain.Mine(devchain.DefaultSolidLag + required)
	if res := poll(t, w); res.Failed != 1 {
		t.Fatalf("poll: %+v; want one failed transfer", res)
	}
	if s := b.state(t, dep.ID); s.Status != "awaiting_transfer" || s.TxID != nil {
		t.Fatalf("deposit: %+v", s)
	}
	if tr := b.transfers(t); len(tr) != 1 || tr[0].Status != "failed" || tr[0].Reason == nil || *tr[0].Reason != "receipt REVERT" {
		t.Fatalf("transfers: %+v", tr)
	}
}

func TestPoll_ATransferThatFailsOrVanishesBeforeSolidifiedPutsTheDepositBack(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		expired bool
		undo    func(c *devchain.Chain, tx string)
		want    string
		status  string
	}{
		{"forked away", false, func(c *devchain.Chain, tx string) { c.Forget(tx) }, "awaiting_transfer", "vanished"},
		{"forked away after expiry", true, func(c *devchain.Chain, tx string) { c.Forget(tx) }, "expired", "vanished"},
		{"receipt turned to failure", false, func(c *devchain.Chain, tx string) { c.SetResult(tx, "OUT_OF_ENERGY") }, "awaiting_transfer", "failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w, b := setup(t)
			dep := b.deposit(t, hundredUSDT)
			tx := b.pay(t, dep.RequestedAmountMinor)
			poll(t, w)
			if tt.expired {
				b.exec(t, "UPDATE deposits SET expires_at = now() - interval '1 second' WHERE id = $1", dep.ID)
			}
			tt.undo(b.chain, tx)
			b.chain.Mine(1)
			if res := poll(t, w); res.Reverted != 1 {
				t.Fatalf("poll: %+v; want one reverted deposit", res)
			}
			if s := b.state(t, dep.ID); s.Status != tt.want || s.Confirmations != 0 || s.TxID != nil || !s.Reserved {
				t.Fatalf("deposit: %+v; want %s with no confirmations and no transaction", s, tt.want)
			}
			if tr := b.transfers(t); len(tr) != 1 || tr[0].Status != tt.status {
				t.Fatalf("transfers: %+v; want one %s", tr, tt.status)
			}
			b.chain.Mine(devchain.DefaultSolidLag + required)
			poll(t, w)
			if sum, _ := b.balance(t); sum != 0 {
				t.Fatalf("balance %d; want no credit", sum)
			}
		})
	}
}

func TestPoll_ATransferThatReturnsAfterAForkIsJudgedAgain(t *testing.T) {
	t.Parallel()
	w, b := setup(t)
	dep := b.deposit(t, hundredUSDT)
	tx := b.pay(t, dep.RequestedAmountMinor)
	poll(t, w)
	b.chain.Forget(tx)
	poll(t, w)
	b.chain.Remember(tx)
	poll(t, w)
	if s := b.state(t, dep.ID); s.Status != "confirming" || s.TxID == nil || *s.TxID != tx {
		t.Fatalf("deposit: %+v; want confirming again", s)
	}
	b.chain.Mine(devchain.DefaultSolidLag + required)
	poll(t, w)
	if sum, n := b.balance(t); sum != dep.RequestedAmountMinor || n != 1 {
		t.Fatalf("balance %d in %d entries", sum, n)
	}
}

func TestPoll_TwoTransfersOfOneAmountPayOnce(t *testing.T) {
	t.Parallel()
	w, b := setup(t)
	dep := b.deposit(t, hundredUSDT)
	first := b.pay(t, dep.RequestedAmountMinor)
	b.chain.Pay(devchain.Payment{To: tron.DevTreasuryAddress, Value: itoa(dep.RequestedAmountMinor), From: "TJRabPrwbZy45sbavfcjinPJC18kjpRTv8"})
	b.chain.Mine(devchain.DefaultSolidLag + required)
	poll(t, w)
	poll(t, w)
	if s := b.state(t, dep.ID); s.Status != "credited" || *s.TxID != first {
		t.Fatalf("deposit: %+v; want credited by the earlier transfer", s)
	}
	tr := b.transfers(t)
	if len(tr) != 2 || tr[1].Status != "unmatched" || *tr[1].Reason != "already_paid" {
		t.Fatalf("transfers: %+v; want the second unmatched as already paid", tr)
	}
	if sum, n := b.balance(t); sum != dep.RequestedAmountMinor || n != 1 {
		t.Fatalf("balance %d in %d entries", sum, n)
	}
}

func TestPoll_AfterDowntimeItReadsBackToItsPosition(t *testing.T) {
	t.Parallel()
	clock := time.Now().Add(-3 * time.Hour)
	w, b := setup(t)
	b.chain = devchain.New(devchain.Options{Contract: tron.MainnetUSDT, Now: func() time.Time { return clock }})
	h := b.chain.Handler()
	b.wrap = func(w http.ResponseWriter, r *http.Request, _ http.Handler) { h.ServeHTTP(w, r) }
	dep := b.deposit(t, hundredUSDT)
	b.exec(t, "UPDATE deposits SET created_at = now() - interval '4 hours', expires_at = now() + interval '1 hour' WHERE id = $1", dep.ID)

	// The watcher last polled three hours ago, then was down; the payment
	// came two hours ago.
	w.Now = func() time.Time { return clock }
	poll(t, w)
	clock = clock.Add(time.Hour)
	b.pay(t, dep.RequestedAmountMinor)
	clock = time.Now()
	w.Now = time.Now
	b.chain.Mine(1)
	poll(t, w)
	if s := b.state(t, dep.ID); s.Status != "confirming" {
		t.Fatalf("deposit: %+v; want the transfer of two hours ago found", s)
	}
}

// capture is a ResponseWriter that keeps what is written.
type capture struct {
	header http.Header
	status int
	body   strings.Builder
}

func (c *capture) Header() http.Header         { return c.header }
func (c *capture) WriteHeader(s int)           { c.status = s }
func (c *capture) Write(p []byte) (int, error) { return c.body.Write(p) }
