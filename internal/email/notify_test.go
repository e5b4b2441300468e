package email_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/internal/mailserver"
	"creativeapi/internal/testenv"
)

// inbox reads what one address received, waiting until it holds want
// messages and a little longer to catch any extra one.
func inbox(t *testing.T, srv *mailserver.Server, to string, want int) []mailserver.Message {
	t.Helper()
	waitFor(t, srv, to, want)
	time.Sleep(300 * time.Millisecond)
	list := waitFor(t, srv, to, want)
	out := make([]mailserver.Message, len(list))
	for i, s := range list {
		m, err := srv.Message(context.Background(), s.ID)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = m
	}
	return out
}

// checkHeaders checks the one-click unsubscribe headers of a message.
func checkHeaders(t *testing.T, srv *mailserver.Server, m mailserver.Message, apiURL string) {
	t.Helper()
	h, err := srv.Headers(context.Background(), m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if u := h["List-Unsubscribe"]; len(u) != 1 || !strings.HasPrefix(u[0], "<"+apiURL+"/api/v1/unsubscribe?token=") {
		t.Errorf("%s: List-Unsubscribe %q", m.Subject, u)
	}
	if p := h["List-Unsubscribe-Post"]; len(p) != 1 || p[0] != "List-Unsubscribe=One-Click" {
		t.Errorf("%s: List-Unsubscribe-Post %q", m.Subject, p)
	}
	if m.Text == "" || m.HTML == "" {
		t.Errorf("%s: a part is missing (text %d bytes, html %d bytes)", m.Subject, len(m.Text), len(m.HTML))
	}
}

func TestEachKindArrivesOnceAndOwnActionsSendNothing(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Mail: true, Env: map[string]string{"APP_URL": "https://app.example.test"}})
	d := env.DB
	org := d.Org(t, "Acme")
	author, authorEmail := d.User(t, "Ann Author")
	reviewer, reviewerEmail := d.User(t, "Rita Reviewer")
	member, memberEmail := d.User(t, "Max Member")
	d.Member(t, org, author, "author")
	d.Member(t, org, reviewer, "reviewer")
	d.Member(t, org, member, "author")
	creative := d.DraftCreative(t, org, author)
	if _, err := d.Pool.Exec(context.Background(), "UPDATE creatives SET reviewer_id = $1, title = $2 WHERE id = $3",
		reviewer, "Launch <script>", creative); err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("/api/v1/organizations/%s/creatives/%s", org, creative)
	link := fmt.Sprintf("https://app.example.test/organizations/%s/creatives/%s", org, creative)
	asAuthor, asReviewer := env.SessionFor(t, author), env.SessionFor(t, reviewer)

	if r := asAuthor.Do("POST", base+"/actions", map[string]any{"action": "submit"}); r.Status != 200 {
		t.Fatalf("submit: %d %s", r.Status, r.Body)
	}
	r := asReviewer.Do("POST", base+"/comments", map[string]any{
		"body": "Look at <this> & that", "mentionUserIds": []uuid.UUID{author, member, reviewer}})
	if r.Status != 201 {
		t.Fatalf("comment: %d %s", r.Status, r.Body)
	}
	var comment struct{ ID uuid.UUID }
	r.JSON(t, &comment)
	if r := asReviewer.Do("POST", base+"/actions", map[string]any{"action": "request_changes", "comment": "Make the <b>logo</b> bigger"}); r.Status != 200 {
		t.Fatalf("request changes: %d %s", r.Status, r.Body)
	}

	// The reviewer: asked to review by the author's submit; nothing of their own comment or decision.
	got := inbox(t, env.Mail, reviewerEmail, 1)
	if got[0].Subject != "CR-000001 Launch <script>: review requested" || !strings.Contains(got[0].Text, link) || !strings.Contains(got[0].HTML, link) {
		t.Errorf("review request: %q\n%s", got[0].Subject, got[0].Text)
	}
	checkHeaders(t, env.Mail, got[0], env.Config.PublicBaseURL)

	// The member: mentioned, one email.
	got = inbox(t, env.Mail, memberEmail, 1)
	if got[0].Subject != "CR-000001 Launch <script>: you were mentioned" || !strings.Contains(got[0].Text, link+"#comment-"+comment.ID.String()) {
		t.Errorf("mention: %q\n%s", got[0].Subject, got[0].Text)
	}
	if !strings.Contains(got[0].HTML, "Look at &lt;this&gt; &amp; that") || strings.Contains(got[0].HTML, "<this>") {
		t.Errorf("the comment is not escaped in HTML:\n%s", got[0].HTML)
	}
	checkHeaders(t, env.Mail, got[0], env.Config.PublicBaseURL)

	// The author: the mention and the decision with its comment.
	got = inbox(t, env.Mail, authorEmail, 2)
	subjects := map[string]mailserver.Message{}
	for _, m := range got {
		subjects[m.Subject] = m
		checkHeaders(t, env.Mail, m, env.Config.PublicBaseURL)
	}
	decision, ok := subjects["CR-000001 Launch <script>: changes requested"]
	if !ok {
		t.Fatalf("no decision email: %v", subjects)
	}
	if !strings.Contains(decision.Text, "Make the <b>logo</b> bigger") || !strings.Contains(decision.HTML, "Make the &lt;b&gt;logo&lt;/b&gt; bigger") || !strings.Contains(decision.HTML, link) {
		t.Errorf("decision:\n%s\n%s", decision.Text, decision.HTML)
	}
	if _, ok := subjects["CR-000001 Launch <script>: you were mentioned"]; !ok {
		t.Errorf("no mention email: %v", subjects)
	}

	// Submitted again and approved: one more of each.
	if r := asAuthor.Do("POST", base+"/actions", map[string]any{"action": "submit", "acknowledgeOpenThreads": true}); r.Status != 200 {
		t.Fatalf("submit again: %d %s", r.Status, r.Body)
	}
	if r := asReviewer.Do("POST", base+"/actions", map[string]any{"action": "approve"}); r.Status != 200 {
		t.Fatalf("approve: %d %s", r.Status, r.Body)
	}
	inbox(t, env.Mail, reviewerEmail, 2)
	got = inbox(t, env.Mail, authorEmail, 3)
	if got[0].Subject != "CR-000001 Launch <script>: approved" || !strings.Contains(got[0].Text, "Rita Reviewer approved") {
		t.Errorf("approval: %q\n%s", got[0].Subject, got[0].Text)
	}
}

func TestAReviewerAssignedDuringReviewIsAskedToReview(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Mail: true})
	d := env.DB
	org := d.Org(t, "Acme")
	author, _ := d.User(t, "Ann Author")
	admin, adminEmail := d.User(t, "Adam Admin")
	reviewer, reviewerEmail := d.User(t, "Ria Reviewer")
	d.Member(t, org, author, "author")
	d.Member(t, org, admin, "admin")
	d.Member(t, org, reviewer, "reviewer")
	creative := d.DraftCreative(t, org, author)
	base := fmt.Sprintf("/api/v1/organizations/%s/creatives/%s", org, creative)
	if r := env.SessionFor(t, author).Do("POST", base+"/actions", map[string]any{"action": "submit"}); r.Status != 200 {
		t.Fatalf("submit: %d %s", r.Status, r.Body)
	}
	asAdmin := env.SessionFor(t, admin)
	if r := asAdmin.Do("PATCH", base, map[string]any{"reviewerId": reviewer}); r.Status != 200 {
		t.Fatalf("assign: %d %s", r.Status, r.Body)
	}
	got := inbox(t, env.Mail, reviewerEmail, 1)
	if !strings.HasSuffix(got[0].Subject, ": review requested") || !strings.Contains(got[0].Text, "Adam Admin asks you to review") {
		t.Errorf("review request: %q\n%s", got[0].Subject, got[0].Text)
	}
	// An admin assigning themself is their own action.
	if r := asAdmin.Do("PATCH", base, map[string]any{"reviewerId": admin}); r.Status != 200 {
		t.Fatalf("assign self: %d %s", r.Status, r.Body)
	}
	inbox(t, env.Mail, adminEmail, 0)
}

func TestAGuestsDecisionIsEmailedToTheAuthorUnderTheGuestsName(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Mail: true, Env: map[string]string{"APP_URL": "https://app.example.test"}})
	d := env.DB
	org := d.Org(t, "Acme")
	author, authorEmail := d.User(t, "Ann Author")
	d.Member(t, org, author, "author")
	creative := d.DraftCreative(t, org, author)
	base := fmt.Sprintf("/api/v1/organizations/%s/creatives/%s", org, creative)
	if r := env.SessionFor(t, author).Do("POST", base+"/actions", map[string]any{"action": "submit"}); r.Status != 200 {
		t.Fatalf("submit: %d %s", r.Status, r.Body)
	}
	// A decide share is an admin's, and its guest one it invited (§21).
	admin, _ := d.User(t, "Ada Admin")
	d.Member(t, org, admin, "admin")
	share, token := d.Share(t, org, admin, "decide", creative)
	guest := env.Client(t)
	if r := env.OpenInvited(t, guest, share, token, "legal@brand.test"); r.Status != 201 {
		t.Fatalf("guest session: %d %s", r.Status, r.Body)
	}
	r := guest.Do("POST", "/api/v1/guest/creatives/"+creative.String()+"/actions",
		map[string]any{"action": "request_changes", "comment": "The footnote is missing."})
	if r.Status != 200 {
		t.Fatalf("the guest's decision: %d %s", r.Status, r.Body)
	}
	got := inbox(t, env.Mail, authorEmail, 1)
	if got[0].Subject != "CR-000001 Fixture creative: changes requested" || !strings.Contains(got[0].Text, "The footnote is missing.") ||
		!strings.Contains(got[0].Text, "Guest legal@brand.test") {
		t.Errorf("the decision email: %q\n%s", got[0].Subject, got[0].Text)
	}
}
