package deposit_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

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

// TestFingerprint_OnlyOneAwaitingDepositsSuffixDecides: a transfer no
// deposit matches exactly is a deposit's only when its last four digits
// are the suffix of exactly one deposit awaiting its transfer at the
// block's time (never 0000); within the tolerance it confirms, short
// beyond it or above the requested amount it is attached for review.
func TestFingerprint_OnlyOneAwaitingDepositsSuffixDecides(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC)
	tol := deposit.DefaultTolerance() // 1%, at most 1 USDT
	dep := func(suffix int64) deposit.FingerprintCandidate {
		return deposit.FingerprintCandidate{ID: uuid.New(), Suffix: suffix, RequestedMinor: 100_000_000 + suffix,
			Status: deposit.StatusAwaitingTransfer, CreatedAt: now.Add(-10 * time.Minute), ExpiresAt: now.Add(20 * time.Minute)}
	}
	paid, cancelled, later := dep(1234), dep(1234), dep(1234)
	tx := "paid"
	paid.TxID = &tx
	cancelledAt := now.Add(-time.Minute)
	cancelled.Status, cancelled.CancelledAt = deposit.StatusCancelled, &cancelledAt
	later.CreatedAt = now.Add(time.Minute)
	for name, c := range map[string]struct {
		amount int64
		cs     []deposit.FingerprintCandidate
		want   deposit.TransferStatus // "" : no deposit's
	}{
		"short by a fee of 0.35 USDT":         {100_001_234 - 350_000, []deposit.FingerprintCandidate{dep(1234)}, deposit.TransferConfirming},
		"short by exactly the cap":            {100_001_234 - 1_000_000, []deposit.FingerprintCandidate{dep(1234)}, deposit.TransferConfirming},
		"a micro-USDT off changes the suffix": {100_001_234 - 1_000_001, []deposit.FingerprintCandidate{dep(1234)}, ""},
		"short by 5 USDT in whole cents":      {100_001_234 - 5_000_000, []deposit.FingerprintCandidate{dep(1234)}, deposit.TransferUnmatched},
		"above the requested amount":          {100_001_234 + 5_000_000, []deposit.FingerprintCandidate{dep(1234)}, deposit.TransferUnmatched},
		"another suffix":                      {100_001_235 - 350_000, []deposit.FingerprintCandidate{dep(1234)}, ""},
		"a fingerprint of 0000":               {99_990_000, []deposit.FingerprintCandidate{dep(0)}, ""},
		"two deposits with the fingerprint":   {100_001_234 - 350_000, []deposit.FingerprintCandidate{dep(1234), dep(1234)}, ""},
		"the one deposit is paid":             {100_001_234 - 350_000, []deposit.FingerprintCandidate{paid}, ""},
		"cancelled before the block":          {100_001_234 - 350_000, []deposit.FingerprintCandidate{cancelled, dep(1234)}, deposit.TransferConfirming},
		"created after the block":             {100_001_234 - 350_000, []deposit.FingerprintCandidate{later}, ""},
		"one created after, one awaiting":     {100_001_234 - 350_000, []deposit.FingerprintCandidate{later, dep(1234)}, deposit.TransferConfirming},
	} {
		t.Run(name, func(t *testing.T) {
			got := deposit.Fingerprint(c.amount, now, c.cs, tol)
			switch {
			case c.want == "" && got != nil:
				t.Fatalf("Fingerprint = %+v; want no deposit's", got)
			case c.want != "" && (got == nil || got.Verdict != c.want):
				t.Fatalf("Fingerprint = %+v; want %s", got, c.want)
			}
		})
	}
}
