package email_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/internal/creative"
	"creativeapi/internal/mailserver"
	"creativeapi/internal/testenv"
)

// dueDesk is a creative in review under a one-stage plan of three member
// reviewers and two guest emails, one of them invited to a decide share
// of it.
type dueDesk struct {
	env                    *testenv.Env
	creative               uuid.UUID
	base, link             string
	undecided, decided     string // member reviewers' addresses
	dueOff                 string // a reviewer who switched due emails off
	guest, guestWithout    string // guest emails: with a live decide share, without one
	undecidedID, decidedID uuid.UUID
}

func newDueDesk(t *testing.T, workersOff bool) *dueDesk {
	t.Helper()
	env := testenv.New(t, testenv.Options{Mail: true, MailWorkersOff: workersOff, Env: map[string]string{"APP_URL": "https://app.example.test"}})
	d := env.DB
	org := d.Org(t, "Acme")
	author, _ := d.User(t, "Ann Author")
	admin, _ := d.User(t, "Adam Admin")
	d.Member(t, org, author, "author")
	d.Member(t, org, admin, "admin")
	desk := &dueDesk{env: env, guest: guestAddress("legal"), guestWithout: guestAddress("nobody")}
	var off uuid.UUID
	desk.undecidedID, desk.undecided = d.User(t, "Una Undecided")
	desk.decidedID, desk.decided = d.User(t, "Dee Decided")
	off, desk.dueOff = d.User(t, "Otto Off")
	for _, id := range []uuid.UUID{desk.undecidedID, desk.decidedID, off} {
		d.Member(t, org, id, "reviewer")
	}
	desk.creative = d.DraftCreative(t, org, author)
	base := fmt.Sprintf("/api/v1/organizations/%s/creatives/%s", org, desk.creative)
	desk.base, desk.link = base, "https://app.example.test"+strings.TrimPrefix(base, "/api/v1")
	put := settingsBody{Email: "instant", Kinds: map[string]bool{"mention": true, "review_requested": true, "decision": true, "due": false, "deposit": true}}
	if r := env.SessionFor(t, off).Do(http.MethodPut, settingsPath, put); r.Status != 200 {
		t.Fatalf("settings: %d %s", r.Status, r.Body)
	}
	if r := env.SessionFor(t, admin).Do(http.MethodPost, fmt.Sprintf("/api/v1/organizations/%s/shares", org),
		map[string]any{"creativeIds": []uuid.UUID{desk.creative}, "permission": "decide", "invite": []map[string]string{{"email": desk.guest}}},
		testenv.Header{Name: "Idempotency-Key", Value: uuid.NewString()}); r.Status != http.StatusCreated {
		t.Fatalf("share: %d %s", r.Status, r.Body)
	}
	asAuthor := env.SessionFor(t, author)
	plan := map[string]any{"stages": []any{map[string]any{"name": "Legal <team>", "rule": "all", "dueInHours": 48,
		"reviewerIds": []uuid.UUID{desk.undecidedID, desk.decidedID, off}, "guestEmails": []string{strings.ToUpper(desk.guest), desk.guestWithout}}}}
	// A plan naming guests is an admin's to set (§21).
	if r := env.SessionFor(t, admin).Do(http.MethodPut, base+"/review-plan", plan); r.Status != 200 {
		t.Fatalf("plan: %d %s", r.Status, r.Body)
	}
	if r := asAuthor.Do(http.MethodPost, base+"/actions", map[string]any{"action": "submit"}); r.Status != 200 {
		t.Fatalf("submit: %d %s", r.Status, r.Body)
	}
	// The submit asks every reviewer of the stage to review (three members,
	// two guest emails) before one of them decides.
	notificationsOf(t, env, desk.creative, "review_requested", 5, workersOff)
	if r := env.SessionFor(t, desk.decidedID).Do(http.MethodPost, base+"/actions", map[string]any{"action": "approve"}); r.Status != 200 {
		t.Fatalf("approve: %d %s", r.Status, r.Body)
	}
	return desk
}

// announce moves the stage's due date by from now and runs the due job.
func (d *dueDesk) announce(t *testing.T, in string, want int) {
	t.Helper()
	ctx := context.Background()
	if _, err := d.env.DB.Pool.Exec(ctx, `UPDATE review_stage_rounds SET due_at = now() + $2::interval WHERE creative_id = $1`, d.creative, in); err != nil {
		t.Fatal(err)
	}
	if n, err := creative.AnnounceDue(ctx, d.env.DB.Store); err != nil || n != want {
		t.Fatalf("announced %d, %v; want %d", n, err, want)
	}
}

// settled waits until want due notifications exist and none is queued
// any more (queued: only until they exist).
func (d *dueDesk) settled(t *testing.T, want int, queuedToo ...bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var all, queued int
		if err := d.env.DB.Pool.QueryRow(context.Background(), `SELECT count(*), count(*) FILTER (WHERE state = 'queued')
			FROM notifications WHERE kind = 'due' AND creative_id = $1`, d.creative).Scan(&all, &queued); err != nil {
			t.Fatal(err)
		}
		if all == want && (queued == 0 || len(queuedToo) > 0) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d due notifications, %d queued; want %d, none queued", all, queued, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func dueMails(t *testing.T, d *dueDesk, to string, want int) []string {
	t.Helper()
	var subjects []string
	for _, m := range inbox(t, d.env.Mail, to, want) {
		subjects = append(subjects, m.Subject)
	}
	return subjects
}

func TestDueEmailsGoOncePerStageAndRoundToItsReviewersWhoHaveNotDecided(t *testing.T) {
	t.Parallel()
	d := newDueDesk(t, false)
	d.announce(t, "1 hour", 1)
	// Notified: the undecided member, the dueOff member (dropped by their
	// setting), both guest emails (the one without a share dropped).
	d.settled(t, 4)
	// (Every reviewer was asked to review at the submit, too.)
	var got mailserver.Message
	for _, m := range inbox(t, d.env.Mail, d.undecided, 2) {
		if strings.HasSuffix(m.Subject, ": review due soon") {
			got = m
		}
	}
	if got.Subject != "CR-000001 Fixture creative: review due soon" || !strings.Contains(got.Text, "The stage “Legal <team>” of CR-000001 Fixture creative is due on ") ||
		!strings.Contains(got.Text, d.link) || !strings.Contains(got.HTML, "Legal &lt;team&gt;") || strings.Contains(got.HTML, "<team>") {
		t.Errorf("due soon: %q\n%s\n%s", got.Subject, got.Text, got.HTML)
	}
	checkHeaders(t, d.env.Mail, got, d.env.Config.PublicBaseURL)
	waitFor(t, d.env.Mail, d.decided, 1) // the review request
	waitFor(t, d.env.Mail, d.dueOff, 1)
	waitFor(t, d.env.Mail, d.guestWithout, 0)

	// The guest: the invitation, the review request, then the due email,
	// without a link (their way in is their share's) and without
	// unsubscribe.
	var guestDue string
	for _, m := range inbox(t, d.env.Mail, d.guest, 3) {
		if strings.HasSuffix(m.Subject, ": review due soon") {
			guestDue = m.ID
			if strings.Contains(m.Text, "/organizations/") || !strings.Contains(m.Text, "Open the review link Acme sent you") {
				t.Errorf("guest due email:\n%s", m.Text)
			}
		}
	}
	if guestDue == "" {
		t.Fatalf("the guest got no due email: %v", dueMails(t, d, d.guest, 3))
	}
	if h, err := d.env.Mail.Headers(context.Background(), guestDue); err != nil || len(h["List-Unsubscribe"]) != 0 {
		t.Errorf("the guest's due email has List-Unsubscribe %q (%v)", h["List-Unsubscribe"], err)
	}

	// Overdue: once more; and the job announcing nothing new sends nothing.
	d.announce(t, "-1 minute", 1)
	d.announce(t, "-1 minute", 0)
	d.settled(t, 8)
	if got := dueMails(t, d, d.undecided, 3); got[0] != "CR-000001 Fixture creative: review overdue" {
		t.Errorf("overdue: %q", got)
	}
	inbox(t, d.env.Mail, d.guest, 4)
	waitFor(t, d.env.Mail, d.decided, 1)
}

func TestADueEmailToAReviewerWhoDecidedBeforeItWentIsDropped(t *testing.T) {
	t.Parallel()
	d := newDueDesk(t, true)
	d.announce(t, "1 hour", 1)
	d.settled(t, 4, true)
	if r := d.env.SessionFor(t, d.undecidedID).Do(http.MethodPost, d.base+"/actions", map[string]any{"action": "approve"}); r.Status != 200 {
		t.Fatalf("approve: %d %s", r.Status, r.Body)
	}
	testenv.StartEmailWorkers(t, d.env.DB, d.env.Email, slog.New(slog.NewTextHandler(io.Discard, nil)))
	d.settled(t, 4)
	var state string
	if err := d.env.DB.Pool.QueryRow(context.Background(), "SELECT state FROM notifications WHERE kind = 'due' AND user_id = $1",
		d.undecidedID).Scan(&state); err != nil || state != "dropped" {
		t.Fatalf("the due notification of a reviewer who decided since is %q (%v), want dropped", state, err)
	}
	if got := dueMails(t, d, d.undecided, 1); !strings.HasSuffix(got[0], ": review requested") {
		t.Errorf("mails %q; want the review request only", got)
	}
}
