package deposit_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"

	"github.com/google/uuid"

	"creativeapi/internal/deposit"
	"creativeapi/internal/testenv"
)

func TestSweep_ExpiresLapsedDepositsAndReleasesAfterTheWindow(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	user, _ := d.User(t, "Sweepy Sam")
	s := settings()
	s.MaxOpenPerUser = 10
	open, _ := create(t, d, s, user, hundredUSDT)
	lapsed, _ := create(t, d, s, user, hundredUSDT)
	pastWindow, _ := create(t, d, s, user, hundredUSDT)
	confirming, _ := create(t, d, s, user, hundredUSDT)
	exec(t, d, "UPDATE deposits SET expires_at = now() - interval '1 minute' WHERE id = $1", lapsed.ID)
	exec(t, d, "UPDATE deposits SET expires_at = now() - interval '2 days', reserved_until = now() - interval '1 day' WHERE id IN ($1, $2)",
		pastWindow.ID, confirming.ID)
	exec(t, d, "UPDATE deposits SET status = 'confirming' WHERE id = $1", confirming.ID)

	// Several replicas sweeping at once do the work once between them.
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			if err := deposit.Sweep(context.Background(), d.Store, log); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()

	want := map[string]row{
		"open":        {Status: deposit.StatusAwaitingTransfer, Reserved: true},
		"lapsed":      {Status: deposit.StatusExpired, Reserved: true},
		"past window": {Status: deposit.StatusExpired, Reserved: false},
		"confirming":  {Status: deposit.StatusConfirming, Reserved: true},
	}
	for name, id := range map[string]uuid.UUID{
		"open": open.ID, "lapsed": lapsed.ID, "past window": pastWindow.ID, "confirming": confirming.ID,
	} {
		if got := read(t, d, id); got.Status != want[name].Status || got.Reserved != want[name].Reserved {
			t.Errorf("%s: %+v, want %+v", name, got, want[name])
		}
	}
	// Each expiry wrote its event with it, once, for the owner.
	var events []string
	rows, err := d.Pool.Query(context.Background(),
		"SELECT type || ' ' || (payload->'data'->>'id') || ' ' || (payload->'data'->>'status') FROM outbox_events WHERE user_id = $1 ORDER BY 1", user)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var e string
		if err := rows.Scan(&e); err != nil {
			t.Fatal(err)
		}
		events = append(events, e)
	}
	wantEvents := []string{"deposit.expired " + lapsed.ID.String() + " expired", "deposit.expired " + pastWindow.ID.String() + " expired"}
	slices.Sort(wantEvents)
	if !slices.Equal(events, wantEvents) {
		t.Errorf("outbox events %v; want %v", events, wantEvents)
	}
}
