package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/testenv"
)

// Threads follow the work (openapi.yaml: Comment.addressedInVersion,
// CreativeDetail.openThreadCount, 409 open_threads; docs/review.md,
// "Threads that follow the work").
func TestThreadsFollowTheWork(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	c := d.create(t, "author", newCreativeBody("Follows the work"))
	if r := d.addVersion("author", c.Id, versionBody(pngAsset("v1.png"))); r.Status != http.StatusCreated {
		t.Fatalf("v1: %d %s", r.Status, r.Body)
	}
	act := func(who, action string, extra map[string]any) *testenv.Response {
		t.Helper()
		in := map[string]any{"action": action, "expectedVersion": d.get(t, who, c.Id).Version}
		for k, v := range extra {
			in[k] = v
		}
		return d.act(who, c.Id, in)
	}
	must := func(r *testenv.Response) {
		t.Helper()
		if r.Status != http.StatusOK {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	}
	must(act("author", "submit", nil))
	logo := d.mustComment(t, "reviewer", c.Id, map[string]any{"body": "Logo too small."})
	font := d.mustComment(t, "reviewer", c.Id, map[string]any{"body": "Font unreadable."})
	reply := d.mustComment(t, "author", c.Id, map[string]any{"body": "On it.", "parentId": logo.Id})
	must(act("reviewer", "request_changes", map[string]any{"comment": "See the threads."}))
	if r := d.addVersion("author", c.Id, versionBody(pngAsset("v2.png"))); r.Status != http.StatusCreated {
		t.Fatalf("v2: %d %s", r.Status, r.Body)
	}

	t.Run("threads left open on version 1 stay open on the creative", func(t *testing.T) {
		got := d.get(t, "viewer", c.Id)
		if got.OpenThreadCount != 2 || got.OpenCommentCount != 0 {
			t.Fatalf("openThreadCount %d, openCommentCount %d; want 2 and 0 (version 2 has no comment)", got.OpenThreadCount, got.OpenCommentCount)
		}
	})
	t.Run("submit with unaddressed open threads is 409 open_threads naming them", func(t *testing.T) {
		r := act("author", "submit", nil)
		if r.Status != http.StatusConflict {
			t.Fatalf("%d %s", r.Status, string(r.Body))
		}
		want := fmt.Sprintf(`"openThreadIds":["%s","%s"]`, logo.Id, font.Id)
		if body := string(r.Body); !strings.Contains(body, `"code":"open_threads"`) || !strings.Contains(body, want) {
			t.Fatalf("body %s; want open_threads with %s", body, want)
		}
	})
	address := func(who string, id uuid.UUID, v any) *testenv.Response {
		return d.clients[who].Do(http.MethodPatch, commentsURL(d.org, c.Id)+"/"+id.String(), map[string]any{"addressedInVersion": v})
	}
	for _, tc := range []struct {
		rule    string
		who     string
		comment uuid.UUID
		version any
		want    int
	}{
		{"a reviewer does not mark threads addressed", "reviewer", logo.Id, 2, http.StatusForbidden},
		{"a thread is addressed by a later version", "author", logo.Id, 1, http.StatusUnprocessableEntity},
		{"a thread is addressed by a version that exists", "author", logo.Id, 3, http.StatusUnprocessableEntity},
		{"a reply is no thread", "author", reply.Id, 2, http.StatusUnprocessableEntity},
		{"the creative's author marks a thread addressed", "author", logo.Id, 2, http.StatusOK},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			if r := address(tc.who, tc.comment, tc.version); r.Status != tc.want {
				t.Fatalf("%d %s; want %d", r.Status, string(r.Body), tc.want)
			}
		})
	}
	t.Run("the mark shows on the comment and clears with null", func(t *testing.T) {
		items := d.comments(t, "viewer", c.Id, "open=true")
		if len(items) != 2 || items[0].Id != logo.Id || fmt.Sprint(items[0].AddressedInVersion.MustGet()) != "2" {
			t.Fatalf("open threads %+v", items)
		}
		if r := address("admin", font.Id, 2); r.Status != http.StatusOK {
			t.Fatalf("admin marks: %d", r.Status)
		}
		if r := address("author", font.Id, nil); r.Status != http.StatusOK {
			t.Fatalf("clear: %d", r.Status)
		}
	})
	t.Run("a submit may go past open threads, and its history says which", func(t *testing.T) {
		r := act("author", "submit", nil)
		if r.Status != http.StatusConflict || !strings.Contains(string(r.Body), fmt.Sprintf(`"openThreadIds":["%s"]`, font.Id)) {
			t.Fatalf("%d %s; want open_threads naming the font thread alone", r.Status, string(r.Body))
		}
		must(act("author", "submit", map[string]any{"acknowledgeOpenThreads": true}))
		var page api.CreativeEventList
		d.clients["viewer"].Do(http.MethodGet, creativeURL(d.org, c.Id)+"/events?limit=1", nil).JSON(t, &page)
		got, err := page.Items[0].AcknowledgedOpenThreadIds.Get()
		if page.Items[0].Type != "submit" || err != nil || len(got) != 1 || got[0] != font.Id {
			t.Fatalf("the submit's event %+v", page.Items[0])
		}
	})
	t.Run("open lists threads of every version; a reviewer resolves them", func(t *testing.T) {
		if r := d.clients["reviewer"].Do(http.MethodPatch, commentsURL(d.org, c.Id)+"/"+logo.Id.String(), map[string]any{"resolved": true}); r.Status != http.StatusOK {
			t.Fatalf("resolve: %d %s", r.Status, r.Body)
		}
		if got := ids(d.comments(t, "viewer", c.Id, "open=true")); fmt.Sprint(got) != fmt.Sprint([]uuid.UUID{font.Id}) {
			t.Errorf("open=true: %v", got)
		}
		if got := ids(d.comments(t, "viewer", c.Id, "open=false")); fmt.Sprint(got) != fmt.Sprint([]uuid.UUID{logo.Id}) {
			t.Errorf("open=false: %v", got)
		}
		if n := d.get(t, "viewer", c.Id).OpenThreadCount; n != 1 {
			t.Errorf("openThreadCount %d, want 1", n)
		}
		r := d.clients["viewer"].Do(http.MethodGet, commentsURL(d.org, c.Id)+"?open=true&resolved=false", nil)
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(string(r.Body), `"field":"open"`) {
			t.Errorf("open with resolved: %d %s", r.Status, r.Body)
		}
	})
	t.Run("the approval record counts threads as openThreadCount does", func(t *testing.T) {
		must(act("reviewer", "approve", nil))
		var got api.CreativeApproval
		d.clients["viewer"].Do(http.MethodGet, approvalURL(d.org, c.Id), nil).JSON(t, &got)
		if open := d.get(t, "viewer", c.Id).OpenThreadCount; got.Record.OpenThreads != open || got.Record.ResolvedThreads != 1 {
			t.Fatalf("record open %d resolved %d; openThreadCount %d", got.Record.OpenThreads, got.Record.ResolvedThreads, open)
		}
	})
}
