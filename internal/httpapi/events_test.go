package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/events"
	"creativeapi/internal/review"
	"creativeapi/internal/testenv"
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

// wantCreativeEvent checks that ev is an unpublished event of type typ of
// the desk's organization whose data is the command's answer without what
// depends on the caller (availableActions, permissions), stamped with the
// answer's updatedAt (the change's transaction clock).
func wantCreativeEvent(t *testing.T, d *reviewDesk, ev outboxRow, typ events.Type, answered *testenv.Response) {
	t.Helper()
	if ev.Type != string(typ) || ev.Org == nil || *ev.Org != d.org || ev.Seq != nil {
		t.Errorf("event %s of organization %v, seq %v; want %s of %s, not yet published", ev.Type, ev.Org, ev.Seq, typ, d.org)
	}
	var answer map[string]any
	answered.JSON(t, &answer)
	delete(answer, "availableActions")
	delete(answer, "permissions")
	data, _ := ev.Payload["data"].(map[string]any)
	wantData, _ := json.Marshal(answer)
	gotData, _ := json.Marshal(data)
	if string(wantData) != string(gotData) {
		t.Errorf("%s: event data differs from the answer without availableActions and permissions:\n event:  %s\n answer: %s", typ, gotData, wantData)
	}
	if ev.Payload["type"] != string(typ) || ev.Payload["timestamp"] != answer["updatedAt"] {
		t.Errorf("payload type %v timestamp %v; want %s at %v", ev.Payload["type"], ev.Payload["timestamp"], typ, answer["updatedAt"])
	}
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
	wantCreativeEvent(t, d, got[1], events.CreativeApproved, approved)
	if data, _ := got[1].Payload["data"].(map[string]any); data["id"] != id.String() || data["reviewStatus"] != string(review.StatusApproved) {
		t.Errorf("event data %v; want the approved creative", data)
	}

	// Publishing numbers them in order, once.
	pub := events.NewPublisher(d.env.DB.Store, events.PublisherConfig{}, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, want := range []int{2, 0} {
		n, err := pub.PublishOnce(context.Background())
		if err != nil || n != want {
			t.Fatalf("publish: %d events, %v; want %d", n, err, want)
		}
	}
	got = outbox(t, d)
	if got[0].Seq == nil || got[1].Seq == nil || *got[1].Seq != *got[0].Seq+1 {
		t.Fatalf("seqs %v %v; want consecutive", got[0].Seq, got[1].Seq)
	}
}

// TestEveryAuthoringCommandWritesItsEventWithTheChange: create, add a
// version and an edit that changes something each write one event with
// the change; a refused command and an edit that changes nothing write none.
func TestEveryAuthoringCommandWritesItsEventWithTheChange(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	author := d.clients["author"]
	created := author.Do(http.MethodPost, creativesURL(d.org), newCreativeBody("Evented"),
		testenv.Header{Name: "Idempotency-Key", Value: uuid.NewString()})
	if created.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", created.Status, created.Body)
	}
	var c api.CreativeDetail
	created.JSON(t, &c)
	steps := []struct {
		rule   string
		send   func() *testenv.Response
		status int
		event  events.Type // "" when the step writes no event
	}{
		{"a version adds creative.version_added", func() *testenv.Response {
			return d.addVersion("author", c.Id, versionBody(pngAsset("a.png")))
		}, http.StatusCreated, events.CreativeVersionAdded},
		{"a refused version writes nothing", func() *testenv.Response {
			return d.addVersion("viewer", c.Id, versionBody(pngAsset("b.png")))
		}, http.StatusForbidden, ""},
		{"an edit that changes a field writes creative.updated", func() *testenv.Response {
			return d.patch("author", c.Id, map[string]any{"title": "Evented, renamed"})
		}, http.StatusOK, events.CreativeUpdated},
		{"an edit that changes nothing writes nothing", func() *testenv.Response {
			return d.patch("author", c.Id, map[string]any{"title": "Evented, renamed"})
		}, http.StatusOK, ""},
		{"a refused edit writes nothing", func() *testenv.Response {
			return d.patch("author", c.Id, map[string]any{"title": "Stale", "expectedVersion": 1})
		}, http.StatusConflict, ""},
		{"assigning a reviewer writes creative.updated", func() *testenv.Response {
			return d.patch("admin", c.Id, map[string]any{"reviewerId": d.users["reviewer"]})
		}, http.StatusOK, events.CreativeUpdated},
	}
	got := outbox(t, d)
	if len(got) != 1 {
		t.Fatalf("after create: %d events, want 1", len(got))
	}
	wantCreativeEvent(t, d, got[0], events.CreativeCreated, created)
	for _, step := range steps {
		before := len(outbox(t, d))
		r := step.send()
		if r.Status != step.status {
			t.Fatalf("%s: %d %s", step.rule, r.Status, r.Body)
		}
		got := outbox(t, d)
		if step.event == "" {
			if len(got) != before {
				t.Errorf("%s: %d new events %+v", step.rule, len(got)-before, got[before:])
			}
			continue
		}
		if len(got) != before+1 {
			t.Fatalf("%s: %d new events, want 1", step.rule, len(got)-before)
		}
		wantCreativeEvent(t, d, got[before], step.event, r)
	}
	// Each change is in the history once and in the outbox once.
	if _, _, history := d.state(t, c.Id); history != len(outbox(t, d)) {
		t.Errorf("%d history events, %d outbox events", history, len(outbox(t, d)))
	}
}
