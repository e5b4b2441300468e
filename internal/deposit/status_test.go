package deposit_test

import (
	"testing"
	"time"

	"creativeapi/internal/deposit"
)

func TestEffectiveStatus_AwaitingPastExpiryReadsExpired(t *testing.T) {
	t.Parallel()
	expires := time.Date(2026, 11, 20, 10, 45, 0, 0, time.UTC)
	before, at, after := expires.Add(-time.Microsecond), expires, expires.Add(time.Hour)
	tests := []struct {
		name   string
		status string
		now    time.Time
		want   string
	}{
		{"awaiting before expiry stays awaiting", deposit.StatusAwaitingTransfer, before, deposit.StatusAwaitingTransfer},
		{"awaiting at expiry is expired (expires_at <= now, as in SQL)", deposit.StatusAwaitingTransfer, at, deposit.StatusExpired},
		{"awaiting after expiry is expired", deposit.StatusAwaitingTransfer, after, deposit.StatusExpired},
		{"confirming after expiry stays confirming: the transfer was seen", deposit.StatusConfirming, after, deposit.StatusConfirming},
		{"credited stays credited", deposit.StatusCredited, after, deposit.StatusCredited},
		{"expired stays expired", deposit.StatusExpired, before, deposit.StatusExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := deposit.EffectiveStatus(tt.status, expires, tt.now); got != tt.want {
				t.Fatalf("EffectiveStatus(%s) = %s, want %s", tt.status, got, tt.want)
			}
		})
	}
}

func TestIsOpen_OnlyAwaitingAndConfirmingCountTowardsTheLimit(t *testing.T) {
	t.Parallel()
	for status, want := range map[string]bool{
		deposit.StatusAwaitingTransfer: true, deposit.StatusConfirming: true,
		deposit.StatusCredited: false, deposit.StatusExpired: false,
	} {
		if got := deposit.IsOpen(status); got != want {
			t.Errorf("IsOpen(%s) = %v, want %v", status, got, want)
		}
	}
}
