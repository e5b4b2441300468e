package deposit_test

import (
	"context"
	"testing"
	"time"

	"creativeapi/internal/deposit"
	"creativeapi/internal/testenv"
)

func TestEffectiveStatus_AwaitingPastExpiryReadsExpired(t *testing.T) {
	t.Parallel()
	expires := time.Date(2026, 11, 20, 10, 45, 0, 0, time.UTC)
	before, at, after := expires.Add(-time.Microsecond), expires, expires.Add(time.Hour)
	tests := []struct {
		name   string
		status deposit.Status
		now    time.Time
		want   deposit.Status
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
	for status, want := range map[deposit.Status]bool{
		deposit.StatusAwaitingTransfer: true, deposit.StatusConfirming: true,
		deposit.StatusCredited: false, deposit.StatusExpired: false,
		deposit.StatusUnderReview: false, deposit.StatusRefunded: false,
	} {
		if got := deposit.IsOpen(status); got != want {
			t.Errorf("IsOpen(%s) = %v, want %v", status, got, want)
		}
	}
}

// TestOpenIsOneRuleInSQLAndGo: deposit_open, which the queries that count,
// limit and credit open deposits call, and IsOpen(EffectiveStatus(...)),
// which reads use, agree for every status before, at and after expiry.
func TestOpenIsOneRuleInSQLAndGo(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	statuses := deposit.Statuses
	rows, err := d.Pool.Query(context.Background(), `
		SELECT s, now() + o, now(), deposit_open(s, now() + o)
		FROM unnest($1::text[]) AS s, unnest(ARRAY[interval '-1 minute', interval '0', interval '1 minute']) AS o`, statuses)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var status deposit.Status
		var expires, now time.Time
		var inSQL bool
		if err := rows.Scan(&status, &expires, &now, &inSQL); err != nil {
			t.Fatal(err)
		}
		n++
		if inGo := deposit.IsOpen(deposit.EffectiveStatus(status, expires, now)); inGo != inSQL {
			t.Errorf("%s expiring at %s (now %s): open in SQL %v, in Go %v", status, expires, now, inSQL, inGo)
		}
	}
	if err := rows.Err(); err != nil || n != 3*len(statuses) {
		t.Fatalf("%d combinations, %v; want %d", n, err, 3*len(statuses))
	}
}
