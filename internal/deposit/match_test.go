package deposit_test

import (
	"testing"
	"time"

	"creativeapi/internal/deposit"
)

func TestMatch(t *testing.T) {
	created := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	expires := created.Add(30 * time.Minute)
	paid := "tx-paid"
	open := &deposit.Candidate{Status: deposit.StatusAwaitingTransfer, CreatedAt: created, ExpiresAt: expires}
	expired := &deposit.Candidate{Status: deposit.StatusExpired, CreatedAt: created, ExpiresAt: expires}
	tests := []struct {
		name      string
		c         *deposit.Candidate
		blockTime time.Time
		want      deposit.TransferStatus
		reason    string
	}{
		{"a block inside the deposit's life confirms", open, created.Add(time.Minute), deposit.TransferConfirming, ""},
		{"a block at createdAt confirms", open, created, deposit.TransferConfirming, ""},
		{"a block of createdAt's millisecond confirms (block times are whole milliseconds)",
			&deposit.Candidate{Status: deposit.StatusAwaitingTransfer, CreatedAt: created.Add(900 * time.Microsecond), ExpiresAt: expires},
			created, deposit.TransferConfirming, ""},
		{"a block at expiresAt is on time", open, expires, deposit.TransferConfirming, ""},
		{"an on-time block seen after expiry still confirms", expired, expires.Add(-time.Second), deposit.TransferConfirming, ""},
		{"a block after expiresAt is late", expired, expires.Add(time.Millisecond), deposit.TransferLate, ""},
		{"a block before the deposit existed pays nothing", open, created.Add(-time.Millisecond), deposit.TransferUnmatched, deposit.ReasonBeforeDeposit},
		{"no reservation of the amount", nil, created, deposit.TransferUnmatched, deposit.ReasonNoReservation},
		{"a deposit another transfer pays", &deposit.Candidate{Status: deposit.StatusConfirming, CreatedAt: created, ExpiresAt: expires, TxID: &paid},
			created.Add(time.Minute), deposit.TransferUnmatched, deposit.ReasonAlreadyPaid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reason := deposit.Match(tt.c, tt.blockTime)
			if got != tt.want || reason != tt.reason {
				t.Fatalf("Match = %s, %q; want %s, %q", got, reason, tt.want, tt.reason)
			}
		})
	}
}

func TestConfirmationsAndCreditable(t *testing.T) {
	tests := []struct {
		name              string
		head, solid, blk  int64
		wantConfirmations int32
		wantCreditable    bool
	}{
		{"the head block has one confirmation", 100, 81, 100, 1, false},
		{"counting stops at the required number", 200, 181, 100, 19, true},
		{"enough confirmations but not solidified", 118, 99, 100, 19, false},
		{"solidified with enough confirmations", 119, 100, 100, 19, true},
		{"a block above the head has none", 99, 80, 100, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := deposit.Confirmations(tt.head, tt.blk, 19); got != tt.wantConfirmations {
				t.Fatalf("Confirmations = %d; want %d", got, tt.wantConfirmations)
			}
			if got := deposit.Creditable(tt.head, tt.solid, tt.blk, 19); got != tt.wantCreditable {
				t.Fatalf("Creditable = %v; want %v", got, tt.wantCreditable)
			}
		})
	}
}
