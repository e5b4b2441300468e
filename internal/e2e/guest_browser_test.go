package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/mailserver"
	"creativeapi/internal/testenv"
)

// shareLink is the link of an invitation email, the invitation's own:
// {APP_URL}/share/{token}#invitation={shareInvitationToken}.
var shareLink = regexp.MustCompile(`https://app\.example\.test/share/[A-Za-z0-9_-]{43}#invitation=[A-Za-z0-9_-]{43}`)

// TestBrowserGuestReviewsFromTheInvitationEmail runs
// testdata/guest-browser.mjs: an admin shares two creatives with `decide`
// and invites a guest by email; the test reads the invitation from
// Mailpit and takes its link; in headless Chromium, a page of another
// origin with the packaged client opens the share as the guest with the
// link's token, lists the two creatives, comments on a region of the
// first one's image and requests changes. Meanwhile the author's live
// stream, open before the guest came, receives the guest's comment and
// decision, with the guest (kind guest) as their author.
func TestBrowserGuestReviewsFromTheInvitationEmail(t *testing.T) {
	t.Parallel()
	node, root := requireNode(t)
	browser := chromiumPath(t)

	// The page's origin: the compiled client, its two dependencies (an
	// import map names them) and the page.
	client := t.TempDir()
	runTool(t, root, nil, node, filepath.Join(root, "node_modules", "typescript", "bin", "tsc"),
		"-p", filepath.Join("clients", "typescript", "tsconfig.build.json"), "--outDir", client, "--declaration", "false")
	pageHTML, err := os.ReadFile(filepath.Join(root, "internal", "e2e", "testdata", "guest-page.html"))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/client/", http.StripPrefix("/client/", http.FileServer(http.Dir(client))))
	mux.Handle("/m/", http.StripPrefix("/m/", http.FileServer(http.Dir(filepath.Join(root, "node_modules")))))
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(pageHTML)
	})
	page := httptest.NewServer(mux)
	t.Cleanup(page.Close)

	env := testenv.New(t, testenv.Options{Mail: true, Env: map[string]string{
		"ALLOWED_ORIGINS": page.URL, "APP_URL": "https://app.example.test"}})
	guestEmail := "legal-" + uuid.NewString()[:8] + "@brand.test"
	org := env.DB.Org(t, "Acme Ads")
	adminID, _ := env.DB.User(t, "Ada Admin")
	authorID, _ := env.DB.User(t, "Arthur Author")
	env.DB.Member(t, org, adminID, "admin")
	env.DB.Member(t, org, authorID, "author")
	admin, author := env.SessionFor(t, adminID), env.SessionFor(t, authorID)

	// Two creatives in review, each with an image; the first one's review
	// plan has a stage for the guest's address.
	first := inReview(t, author, admin, org, "Summer sale", []any{map[string]any{
		"name": "Brand legal", "rule": "any", "reviewerIds": []uuid.UUID{}, "guestEmails": []string{guestEmail}}})
	second := inReview(t, author, admin, org, "Winter sale", nil)

	r := admin.Do(http.MethodPost, fmt.Sprintf("/api/v1/organizations/%s/shares", org), map[string]any{
		"creativeIds": []uuid.UUID{first, second}, "permission": "decide",
		"invite": []map[string]string{{"email": guestEmail, "name": "Lee Legal"}},
	}, testenv.Header{Name: "Idempotency-Key", Value: uuid.NewString()})
	if r.Status != http.StatusCreated {
		t.Fatalf("share: %d %s", r.Status, r.Body)
	}
	link := invitationLink(t, env.Mail, guestEmail)

	// The author watches live from before the guest comes.
	stream := author.Stream("/api/v1/me/events")
	if m, _ := stream.Next(); m.Retry == "" {
		t.Fatalf("first message %+v; want the retry line", m)
	}

	out := runTool(t, root, []string{
		"PAGE_URL=" + page.URL + "/",
		"API_URL=" + env.Server.URL,
		"SHARE_LINK=" + link,
		"GUEST_EMAIL=" + guestEmail,
		"CHROMIUM=" + browser,
		"USER_DATA_DIR=" + t.TempDir(),
		"NODE_OPTIONS=",
	}, node, filepath.Join("internal", "e2e", "testdata", "guest-browser.mjs"))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var got struct {
		Share     api.GuestShare
		Guest     api.Guest
		Creatives []struct {
			ID      uuid.UUID
			Actions []api.CreativeAction
		}
		Comment  api.Comment
		Decided  struct{ ReviewStatus api.ReviewStatus }
		Streamed *api.Comment
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("the page's result: %v\n%s", err, out)
	}
	if got.Share.Permission != api.SharePermissionDecide || len(got.Creatives) != 2 ||
		got.Creatives[0].ID != first || got.Creatives[1].ID != second {
		t.Fatalf("the guest's share and creatives: %s", lines[len(lines)-1])
	}
	if !got.Comment.Anchor.IsSpecified() || got.Comment.Anchor.IsNull() || got.Comment.Author.Kind != api.UserRefKindGuest {
		t.Fatalf("the guest's comment: %+v", got.Comment)
	}
	if got.Decided.ReviewStatus != api.ChangesRequested {
		t.Fatalf("the guest's decision left the creative %s", got.Decided.ReviewStatus)
	}
	if got.Streamed == nil || got.Streamed.Id != got.Comment.Id {
		t.Errorf("the guest's own stream did not show the comment: %+v", got.Streamed)
	}

	// The author's stream: the guest's comment, on its region, and the
	// guest's decision in the stage, then the creative's changes requested.
	var comment, decision, changes bool
	deadline := time.Now().Add(30 * time.Second)
	for !(comment && decision && changes) && time.Now().Before(deadline) {
		m, ok := stream.NextEvent()
		if !ok {
			t.Fatal("the author's stream ended")
		}
		switch m.Event {
		case "creative.comment_added":
			var p struct{ Data api.Comment }
			decode(t, m.Data, &p)
			anchor, _ := p.Data.Anchor.Get()
			region, err := anchor.Region.Get()
			comment = p.Data.Id == got.Comment.Id && p.Data.Author.Id == got.Guest.Id &&
				p.Data.Author.Kind == api.UserRefKindGuest &&
				err == nil && region.X == 0.1 && region.Width == 0.3
			if !comment {
				t.Errorf("the author's stream: the comment %s", m.Data)
			}
		case "creative.decision_recorded":
			var p struct{ Data api.CreativeDetail } // the snapshot: no availableActions, no permissions
			decode(t, m.Data, &p)
			plan, _ := p.Data.ReviewPlan.Get()
			if p.Data.Id == first && len(plan.Stages) == 1 && len(plan.Stages[0].Decisions) == 1 {
				d := plan.Stages[0].Decisions[0]
				decision = d.Reviewer.Id == got.Guest.Id && d.Reviewer.Kind == api.UserRefKindGuest &&
					d.Decision == api.StageDecisionRequestChanges
			}
			if !decision {
				t.Errorf("the author's stream: the decision %s", m.Data)
			}
		case "creative.changes_requested":
			var p struct{ Data api.CreativeDetail } // the snapshot: no availableActions, no permissions
			decode(t, m.Data, &p)
			changes = p.Data.Id == first && p.Data.ReviewStatus == api.ChangesRequested
		}
	}
	if !comment || !decision || !changes {
		t.Fatalf("the author's stream: comment %t, decision %t, changes requested %t", comment, decision, changes)
	}
	t.Logf("a guest opened the link from the email in Chromium on %s, saw %d creatives, commented on a region and requested changes; the author's stream had both, by the guest",
		page.URL, len(got.Creatives))
}

// inReview creates a creative as the author, with an image version, has
// the admin put its review plan when stages are given (a plan naming
// guests is an admin's), and submits it.
func inReview(t *testing.T, author, admin *testenv.Client, org uuid.UUID, title string, stages []any) uuid.UUID {
	t.Helper()
	base := fmt.Sprintf("/api/v1/organizations/%s/creatives", org)
	key := func() testenv.Header { return testenv.Header{Name: "Idempotency-Key", Value: uuid.NewString()} }
	var c struct{ ID uuid.UUID }
	r := author.Do(http.MethodPost, base, map[string]any{"title": title, "type": "static", "aspectRatio": "1:1", "geo": "DE", "language": "de-DE"}, key())
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &c)
	path := base + "/" + c.ID.String()
	asset := map[string]any{"fileName": "banner.png", "mimeType": "image/png", "sizeBytes": 1000, "width": 1080, "height": 1080,
		"url": "https://cdn.example.test/banner.png", "sha256": strings.Repeat("ab", 32)}
	if r := author.Do(http.MethodPost, path+"/versions", map[string]any{"assets": []any{asset}}, key()); r.Status != http.StatusCreated {
		t.Fatalf("version: %d %s", r.Status, r.Body)
	}
	if stages != nil {
		if r := admin.Do(http.MethodPut, path+"/review-plan", map[string]any{"stages": stages}); r.Status != http.StatusOK {
			t.Fatalf("review plan: %d %s", r.Status, r.Body)
		}
	}
	if r := author.Do(http.MethodPost, path+"/actions", map[string]any{"action": "submit"}, key()); r.Status != http.StatusOK {
		t.Fatalf("submit: %d %s", r.Status, r.Body)
	}
	return c.ID
}

// invitationLink waits for the share_invitation email to to reach
// Mailpit and returns its link.
func invitationLink(t *testing.T, mail *mailserver.Server, to string) string {
	t.Helper()
	ctx := context.Background()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		list, err := mail.Messages(ctx, to)
		if err != nil {
			t.Fatal(err)
		}
		// The address gets the stage's review_requested email too.
		for _, sum := range list {
			if !strings.Contains(sum.Subject, "invites you to review") {
				continue
			}
			m, err := mail.Message(ctx, sum.ID)
			if err != nil {
				t.Fatal(err)
			}
			link := shareLink.FindString(m.Text)
			if link == "" {
				t.Fatalf("the invitation %q has no link:\n%s", m.Subject, m.Text)
			}
			return link
		}
	}
	t.Fatalf("no invitation email to %s", to)
	return ""
}

func decode(t *testing.T, data string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(data), v); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
}
