package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"creativeapi/internal/events"
	"creativeapi/internal/review"
)

// outboxRow is one outbox event as stored.
type outboxRow struct {
	Type    string
	Org     *uuid.UUID
	Seq     *int64
	Payload map[string]any
}

func outbox(t *testing.T, d *reviewDesk) []outboxRow {
	t.Helper()
	rows, err := d.env.DB.Pool.Query(context.Background(), "SELECT type, organization_id, seq, payload FROM outbox_events ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []outboxRow
	for rows.Next() {
		var r outboxRow
		var body []byte
		if err := rows.Scan(&r.Type, &r.Org, &r.Seq, &body); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(body, &r.Payload); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func TestEveryCreativeActionWritesItsEventWithTheChange(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{versions: 1})
	if r := d.act("author", id, map[string]any{"action": "submit"}); r.Status != http.StatusOK {
		t.Fatalf("submit: %d %s", r.Status, r.Body)
	}
	// Refused actions change nothing, and write nothing.
	if r := d.act("author", id, map[string]any{"action": "submit"}); r.Status != http.StatusConflict {
		t.Fatalf("second submit: %d %s", r.Status, r.Body)
	}
	if r := d.act("viewer", id, map[string]any{"action": "approve"}); r.Status != http.StatusForbidden {
		t.Fatalf("approve as viewer: %d %s", r.Status, r.Body)
	}
	approved := d.act("reviewer", id, map[string]any{"action": "approve"})
	if approved.Status != http.StatusOK {
		t.Fatalf("approve: %d %s", approved.Status, approved.Body)
	}
	got := outbox(t, d)
	if len(got) != 2 || got[0].Type != string(events.CreativeSubmitted) || got[1].Type != string(events.CreativeApproved) {
		t.Fatalf("outbox %+v; want submitted then approved", got)
	}
	ev := got[1]
	if ev.Org == nil || *ev.Org != d.org || ev.Seq != nil {
		t.Errorf("event organization %v seq %v; want %s, not yet published", ev.Org, ev.Seq, d.org)
	}
	data, _ := ev.Payload["data"].(map[string]any)
	var answer map[string]any
	approved.JSON(t, &answer)
	delete(answer, "availableActions")
	if _, has := data["availableActions"]; has || data["id"] != id.String() || data["reviewStatus"] != string(review.StatusApproved) {
		t.Errorf("event data %v; want the creative without availableActions", data)
	}
	wantData, _ := json.Marshal(answer)
	gotData, _ := json.Marshal(data)
	if string(wantData) != string(gotData) {
		t.Errorf("event data differs from the answer:\n event:  %s\n answer: %s", gotData, wantData)
	}
	if ev.Payload["type"] != string(events.CreativeApproved) || ev.Payload["timestamp"] != answer["updatedAt"] {
		t.Errorf("payload type %v timestamp %v; want %s at %v", ev.Payload["type"], ev.Payload["timestamp"], events.CreativeApproved, answer["updatedAt"])
	}

	// Publishing numbers them in order, once.
	pub := events.NewPublisher(d.env.DB.Store, events.PublisherConfig{}, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for want := range []int{2, 0} {
		n, err := pub.PublishOnce(context.Background())
		if err != nil || n != []int{2, 0}[want] {
			t.Fatalf("publish %d: %d, %v", want, n, err)
		}
	}
	got = outbox(t, d)
	if got[0].Seq == nil || got[1].Seq == nil || *got[1].Seq != *got[0].Seq+1 {
		t.Fatalf("seqs %v %v; want consecutive", got[0].Seq, got[1].Seq)
	}
}
