package chainwatch_test

import (
	"context"
	"testing"
	"time"

	"creativeapi/internal/devchain"
)

// TestRescan_ADayAlreadyCreditedCreditsNothingTwice: after a day of
// payments is credited, rescanning the whole day records nothing new and
// credits nothing again; balance and ledger stay as they were.
func TestRescan_ADayAlreadyCreditedCreditsNothingTwice(t *testing.T) {
	t.Parallel()
	w, b := setup(t)
	var want int64
	for _, base := range []int64{hundredUSDT, 2 * hundredUSDT, 3 * hundredUSDT} {
		dep := b.deposit(t, base)
		b.pay(t, dep.RequestedAmountMinor)
		want += dep.RequestedAmountMinor
	}
	b.pay(t, 123_456_789) // unmatched
	poll(t, w)
	b.chain.Mine(devchain.DefaultSolidLag + required)
	if res := poll(t, w); res.Credited != 3 {
		t.Fatalf("poll: %+v; want three credits", res)
	}
	for range 2 {
		res, err := w.Rescan(context.Background(), time.Now().Add(-24*time.Hour))
		if err != nil {
			t.Fatalf("rescan: %v", err)
		}
		if res.Listed != 4 || res.New != 0 || res.Credited != 0 {
			t.Fatalf("rescan: %+v; want the four transfers listed, none new, nothing credited", res)
		}
	}
	if sum, n := b.balance(t); sum != want || n != 3 {
		t.Fatalf("balance %d in %d entries; want %d in 3", sum, n, want)
	}
	if tr := b.transfers(t); len(tr) != 4 {
		t.Fatalf("%d transfers recorded; want 4", len(tr))
	}
}

// TestRescan_RecordsWhatThePollsMissedAndKeepsThePosition: a transfer
// behind the watcher's position (read past it, as after a bad upstream
// answer) is found by a rescan and credited once; the position stays.
func TestRescan_RecordsWhatThePollsMissedAndKeepsThePosition(t *testing.T) {
	t.Parallel()
	w, b := setup(t)
	poll(t, w)
	ahead := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
	b.exec(t, "UPDATE chain_watch_positions SET position = $1", ahead)
	dep := b.deposit(t, hundredUSDT)
	b.pay(t, dep.RequestedAmountMinor)
	if res := poll(t, w); res.New != 0 {
		t.Fatalf("poll: %+v; the transfer is behind the position, so a poll does not read it", res)
	}
	// The poll saved its own start as the position; a rescan keeps it.
	ahead = ahead.Add(time.Minute)
	b.exec(t, "UPDATE chain_watch_positions SET position = $1", ahead)
	res, err := w.Rescan(context.Background(), time.Now().Add(-time.Hour))
	if err != nil || res.New != 1 || res.Confirming != 1 {
		t.Fatalf("rescan: %+v, %v; want the missed transfer recorded", res, err)
	}
	var pos time.Time
	if err := b.d.Pool.QueryRow(context.Background(), "SELECT position FROM chain_watch_positions").Scan(&pos); err != nil || !pos.Equal(ahead) {
		t.Fatalf("position %s, %v; want it kept at %s", pos, err, ahead)
	}
	b.chain.Mine(devchain.DefaultSolidLag + required)
	poll(t, w)
	if _, err := w.Rescan(context.Background(), time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if sum, n := b.balance(t); sum != dep.RequestedAmountMinor || n != 1 {
		t.Fatalf("balance %d in %d entries; want one credit", sum, n)
	}
}
