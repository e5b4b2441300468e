package events_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"creativeapi/gen/db"
	"creativeapi/internal/events"
	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// write commits n events in one transaction, as a command does.
func write(t *testing.T, d *testenv.DB, n int) {
	t.Helper()
	org := d.Org(t, "Publishing "+time.Now().Format(time.RFC3339Nano))
	ctx := context.Background()
	if err := d.Store.InTx(ctx, func(q store.Tx) error {
		evs := make([]events.Event, n)
		for i := range evs {
			evs[i] = events.Event{Type: events.CreativeApproved, OrganizationID: org, Timestamp: time.Now(), Data: map[string]int{"n": i}}
		}
		return events.Write(ctx, q.Queries, evs...)
	}); err != nil {
		t.Fatal(err)
	}
}

// TestWritingAnEventSendsNoNotice: a transaction that sends a NOTIFY
// commits one at a time with every other such transaction
// (docs/events.md, "Publishing"), so nothing on outbox_events may send one.
// Only a trigger could: the table has none but the foreign keys' own.
func TestWritingAnEventSendsNoNotice(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	var triggers []string
	rows, err := d.Pool.Query(context.Background(),
		"SELECT tgname FROM pg_trigger WHERE tgrelid = 'outbox_events'::regclass AND NOT tgisinternal")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		triggers = append(triggers, name)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(triggers) > 0 {
		t.Fatalf("outbox_events has triggers %v; want none (an insert must not NOTIFY)", triggers)
	}
}

// TestRunPublishesWhatCommitsWhileItRuns: with no notice to wake it, the
// publisher finds events committed after it started by looking, and
// publishes all that wait, batch after batch.
func TestRunPublishesWhatCommitsWhileItRuns(t *testing.T) {
	t.Parallel()
	d := testenv.NewDB(t)
	published := make(chan []db.OutboxPublishRow, 16)
	pub := events.NewPublisher(d.Store, events.PublisherConfig{
		Batch: 2, PollInterval: 5 * time.Millisecond,
		OnPublished: func(rows []db.OutboxPublishRow) { published <- rows },
	}, nil, quiet)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { pub.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	for round, n := range []int{1, 5} {
		write(t, d, n)
		var seqs []int64
		for len(seqs) < n {
			select {
			case rows := <-published:
				if len(rows) > 2 {
					t.Fatalf("round %d: a batch of %d; want at most 2", round, len(rows))
				}
				for _, r := range rows {
					seqs = append(seqs, r.Seq)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("round %d: %d of %d events published after 10 s", round, len(seqs), n)
			}
		}
		if len(seqs) != n {
			t.Fatalf("round %d: published %d events; want %d", round, len(seqs), n)
		}
	}
	var unpublished int
	if err := d.Pool.QueryRow(context.Background(), "SELECT count(*) FROM outbox_events WHERE seq IS NULL").Scan(&unpublished); err != nil {
		t.Fatal(err)
	}
	if unpublished != 0 {
		t.Fatalf("%d events unpublished; want none", unpublished)
	}
}
