package email_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/internal/mailserver"
	"creativeapi/internal/testenv"
)

// notificationsOf waits until creative has want notifications of kind,
// in any state, and none of them queued unless queuedToo holds true.
func notificationsOf(t *testing.T, env *testenv.Env, creative uuid.UUID, kind string, want int, queuedToo ...bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var all, queued int
		if err := env.DB.Pool.QueryRow(context.Background(), `SELECT count(*), count(*) FILTER (WHERE state = 'queued')
			FROM notifications WHERE kind = $2 AND creative_id = $1`, creative, kind).Scan(&all, &queued); err != nil {
			t.Fatal(err)
		}
		if all == want && (queued == 0 || slices.Contains(queuedToo, true)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d %s notifications, %d queued; want %d", all, kind, queued, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// requestStates is the state of each review_requested notification of
// creative, by its user's id or its address.
func requestStates(t *testing.T, env *testenv.Env, creative uuid.UUID) map[string][]string {
	t.Helper()
	rows, err := env.DB.Pool.Query(context.Background(), `SELECT coalesce(user_id::text, email), state
		FROM notifications WHERE kind = 'review_requested' AND creative_id = $1`, creative)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string][]string{}
	for rows.Next() {
		var who, state string
		if err := rows.Scan(&who, &state); err != nil {
			t.Fatal(err)
		}
		got[who] = append(got[who], state)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestEveryReviewerOfAStageThatBecomesActiveIsAskedToReviewOnce(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Mail: true, Env: map[string]string{"APP_URL": "https://app.example.test"}})
	d := env.DB
	org := d.Org(t, "Acme")
	author, authorEmail := d.User(t, "Ann Author")
	admin, adminEmail := d.User(t, "Adam Admin")
	d.Member(t, org, author, "author")
	d.Member(t, org, admin, "admin")
	bea, beaEmail := d.User(t, "Bea Brand")  // stage 1 and 2; her approval ends stage 1
	lou, louEmail := d.User(t, "Lou Legal")  // stage 2, instant
	dan, danEmail := d.User(t, "Dan Daily")  // stage 2, a daily digest
	otto, ottoEmail := d.User(t, "Otto Off") // stage 2, review requests off
	for _, id := range []uuid.UUID{bea, lou, dan, otto} {
		d.Member(t, org, id, "reviewer")
	}
	guest, guestWithout := guestAddress("legal"), guestAddress("nobody")
	kinds := map[string]bool{"mention": true, "review_requested": true, "decision": true, "due": true, "deposit": true}
	if r := env.SessionFor(t, dan).Do(http.MethodPut, settingsPath, settingsBody{Email: "daily", Kinds: kinds}); r.Status != 200 {
		t.Fatalf("settings: %d %s", r.Status, r.Body)
	}
	kinds["review_requested"] = false
	if r := env.SessionFor(t, otto).Do(http.MethodPut, settingsPath, settingsBody{Email: "instant", Kinds: kinds}); r.Status != 200 {
		t.Fatalf("settings: %d %s", r.Status, r.Body)
	}
	creative := d.DraftCreative(t, org, author)
	base := fmt.Sprintf("/api/v1/organizations/%s/creatives/%s", org, creative)
	link := "https://app.example.test" + strings.TrimPrefix(base, "/api/v1")
	asAdmin := env.SessionFor(t, admin)
	if r := asAdmin.Do(http.MethodPost, fmt.Sprintf("/api/v1/organizations/%s/shares", org),
		map[string]any{"creativeIds": []uuid.UUID{creative}, "permission": "decide", "invite": []map[string]string{{"email": guest}}},
		testenv.Header{Name: "Idempotency-Key", Value: uuid.NewString()}); r.Status != http.StatusCreated {
		t.Fatalf("share: %d %s", r.Status, r.Body)
	}
	plan := map[string]any{"stages": []any{
		// Bea first: she is the creative's reviewer, whom §3 alone would ask.
		map[string]any{"name": "Brand", "rule": "any", "reviewerIds": []uuid.UUID{bea, admin}, "guestEmails": []string{guest}},
		map[string]any{"name": "Legal <team>", "rule": "all", "reviewerIds": []uuid.UUID{bea, lou, dan, otto},
			"guestEmails": []string{strings.ToUpper(guest), guestWithout}},
	}}
	// A plan naming guests is an admin's to set (§21).
	if r := asAdmin.Do(http.MethodPut, base+"/review-plan", plan); r.Status != 200 {
		t.Fatalf("plan: %d %s", r.Status, r.Body)
	}

	// The admin submits: stage 1 asks Bea and the guest, not the admin,
	// though the stage lists him: it is his own action.
	if r := asAdmin.Do(http.MethodPost, base+"/actions", map[string]any{"action": "submit"}); r.Status != 200 {
		t.Fatalf("submit: %d %s", r.Status, r.Body)
	}
	notificationsOf(t, env, creative, "review_requested", 2)
	got := inbox(t, env.Mail, beaEmail, 1)[0]
	if got.Subject != "CR-000001 Fixture creative: review requested" ||
		!strings.Contains(got.Text, "The stage “Brand” of CR-000001 Fixture creative is now active and waits for your review.") ||
		!strings.Contains(got.Text, link) {
		t.Errorf("stage 1's request to Bea: %q\n%s", got.Subject, got.Text)
	}
	checkHeaders(t, env.Mail, got, env.Config.PublicBaseURL)

	// Bea's approval holds stage 1's rule: stage 2 asks its reviewers,
	// but not Bea, whose action it was.
	if r := env.SessionFor(t, bea).Do(http.MethodPost, base+"/actions", map[string]any{"action": "approve"}); r.Status != 200 {
		t.Fatalf("approve: %d %s", r.Status, r.Body)
	}
	notificationsOf(t, env, creative, "review_requested", 7)
	got = inbox(t, env.Mail, louEmail, 1)[0]
	if got.Subject != "CR-000001 Fixture creative: review requested" ||
		!strings.Contains(got.Text, "The stage “Legal <team>” of CR-000001 Fixture creative is now active") ||
		!strings.Contains(got.Text, link) || !strings.Contains(got.HTML, "Legal &lt;team&gt;") || strings.Contains(got.HTML, "<team>") {
		t.Errorf("stage 2's request to Lou: %q\n%s\n%s", got.Subject, got.Text, got.HTML)
	}
	checkHeaders(t, env.Mail, got, env.Config.PublicBaseURL)
	inbox(t, env.Mail, beaEmail, 1)

	states := requestStates(t, env, creative)
	for who, want := range map[string][]string{
		bea.String(): {"sent"}, lou.String(): {"sent"}, dan.String(): {"digest"}, otto.String(): {"dropped"},
		guest: {"sent", "sent"}, guestWithout: {"dropped"},
	} {
		if strings.Join(states[who], ",") != strings.Join(want, ",") {
			t.Errorf("%s: review requests %q, want %q", who, states[who], want)
		}
	}
	if len(states[admin.String()]) != 0 {
		t.Errorf("the admin who submitted was asked to review: %q", states[admin.String()])
	}
	for _, to := range []string{adminEmail, authorEmail, danEmail, ottoEmail, guestWithout} {
		waitFor(t, env.Mail, to, 0)
	}

	// The guest: the invitation, then one request per stage, without a
	// link (their way in is their share's) and without unsubscribe.
	var requests []mailserver.Message
	for _, m := range inbox(t, env.Mail, guest, 3) {
		if strings.HasSuffix(m.Subject, ": review requested") {
			requests = append(requests, m)
		}
	}
	if len(requests) != 2 {
		t.Fatalf("the guest got %d review requests, want 2", len(requests))
	}
	for _, m := range requests {
		if strings.Contains(m.Text, "/organizations/") || !strings.Contains(m.Text, "is now active and waits for your review.") ||
			!strings.Contains(m.Text, "Open the review link Acme sent you") {
			t.Errorf("the guest's review request:\n%s", m.Text)
		}
		if h, err := env.Mail.Headers(context.Background(), m.ID); err != nil || len(h["List-Unsubscribe"]) != 0 {
			t.Errorf("the guest's review request has List-Unsubscribe %q (%v)", h["List-Unsubscribe"], err)
		}
	}
}

func TestAReviewRequestToSomeoneWhoLostAccessBeforeItWentIsDropped(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Mail: true, MailWorkersOff: true})
	d := env.DB
	org := d.Org(t, "Acme")
	author, _ := d.User(t, "Ann Author")
	admin, _ := d.User(t, "Adam Admin")
	d.Member(t, org, author, "author")
	d.Member(t, org, admin, "admin")
	gone, goneEmail := d.User(t, "Gus Gone")
	stays, staysEmail := d.User(t, "Sid Stays")
	d.Member(t, org, gone, "reviewer")
	d.Member(t, org, stays, "reviewer")
	guest := guestAddress("revoked")
	creative := d.DraftCreative(t, org, author)
	base := fmt.Sprintf("/api/v1/organizations/%s/creatives/%s", org, creative)
	r := env.SessionFor(t, admin).Do(http.MethodPost, fmt.Sprintf("/api/v1/organizations/%s/shares", org),
		map[string]any{"creativeIds": []uuid.UUID{creative}, "permission": "decide", "invite": []map[string]string{{"email": guest}}},
		testenv.Header{Name: "Idempotency-Key", Value: uuid.NewString()})
	if r.Status != http.StatusCreated {
		t.Fatalf("share: %d %s", r.Status, r.Body)
	}
	var created struct {
		ID uuid.UUID `json:"id"`
	}
	r.JSON(t, &created)
	asAuthor := env.SessionFor(t, author)
	plan := map[string]any{"stages": []any{map[string]any{"name": "Legal", "rule": "all",
		"reviewerIds": []uuid.UUID{gone, stays}, "guestEmails": []string{guest}}}}
	// A plan naming guests is an admin's to set (§21).
	if r := env.SessionFor(t, admin).Do(http.MethodPut, base+"/review-plan", plan); r.Status != 200 {
		t.Fatalf("plan: %d %s", r.Status, r.Body)
	}
	if r := asAuthor.Do(http.MethodPost, base+"/actions", map[string]any{"action": "submit"}); r.Status != 200 {
		t.Fatalf("submit: %d %s", r.Status, r.Body)
	}
	notificationsOf(t, env, creative, "review_requested", 3, true)
	ctx := context.Background()
	if _, err := d.Pool.Exec(ctx, "DELETE FROM memberships WHERE organization_id = $1 AND user_id = $2", org, gone); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Pool.Exec(ctx, "UPDATE shares SET revoked_at = now() WHERE id = $1", created.ID); err != nil {
		t.Fatal(err)
	}
	testenv.StartEmailWorkers(t, d, env.Email, slog.New(slog.NewTextHandler(io.Discard, nil)))
	notificationsOf(t, env, creative, "review_requested", 3)
	states := requestStates(t, env, creative)
	for who, want := range map[string]string{gone.String(): "dropped", guest: "dropped", stays.String(): "sent"} {
		if strings.Join(states[who], ",") != want {
			t.Errorf("%s: review requests %q, want %s", who, states[who], want)
		}
	}
	inbox(t, env.Mail, staysEmail, 1)
	waitFor(t, env.Mail, goneEmail, 0)
	waitFor(t, env.Mail, guest, 0) // its invitation was dropped with the share
}

func TestAGuestWhoseApprovalMakesTheNextStageActiveIsNotAskedToReviewIt(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Mail: true})
	d := env.DB
	org := d.Org(t, "Acme")
	author, _ := d.User(t, "Ann Author")
	lou, louEmail := d.User(t, "Lou Legal")
	d.Member(t, org, author, "author")
	d.Member(t, org, lou, "reviewer")
	creative := d.DraftCreative(t, org, author)
	base := fmt.Sprintf("/api/v1/organizations/%s/creatives/%s", org, creative)
	email := guestAddress("brand")
	// A decide share and a plan naming guests are an admin's (§21).
	admin, _ := d.User(t, "Ada Admin")
	d.Member(t, org, admin, "admin")
	share, token := d.Share(t, org, admin, "decide", creative)
	guest := env.Client(t)
	if r := env.OpenInvited(t, guest, share, token, email); r.Status != http.StatusCreated {
		t.Fatalf("guest session: %d %s", r.Status, r.Body)
	}
	asAuthor := env.SessionFor(t, author)
	plan := map[string]any{"stages": []any{
		map[string]any{"name": "Brand", "rule": "any", "reviewerIds": []uuid.UUID{}, "guestEmails": []string{email}},
		map[string]any{"name": "Legal", "rule": "all", "reviewerIds": []uuid.UUID{lou}, "guestEmails": []string{email}},
	}}
	if r := env.SessionFor(t, admin).Do(http.MethodPut, base+"/review-plan", plan); r.Status != 200 {
		t.Fatalf("plan: %d %s", r.Status, r.Body)
	}
	if r := asAuthor.Do(http.MethodPost, base+"/actions", map[string]any{"action": "submit"}); r.Status != 200 {
		t.Fatalf("submit: %d %s", r.Status, r.Body)
	}
	notificationsOf(t, env, creative, "review_requested", 1)
	if got := inbox(t, env.Mail, email, 1)[0]; !strings.Contains(got.Text, "The stage “Brand” of CR-000001 Fixture creative is now active") {
		t.Errorf("stage 1's request to the guest:\n%s", got.Text)
	}
	if r := guest.Do(http.MethodPost, "/api/v1/guest/creatives/"+creative.String()+"/actions", map[string]any{"action": "approve"}); r.Status != 200 {
		t.Fatalf("the guest's approval: %d %s", r.Status, r.Body)
	}
	notificationsOf(t, env, creative, "review_requested", 2)
	if got := inbox(t, env.Mail, louEmail, 1)[0]; !strings.Contains(got.Text, "The stage “Legal” of CR-000001 Fixture creative is now active") {
		t.Errorf("stage 2's request to Lou:\n%s", got.Text)
	}
	inbox(t, env.Mail, email, 1)
}
