package email_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/internal/testenv"
)

// mentionSetup makes an organization where a reviewer mentions an
// author; mention posts one comment and returns nothing.
func mentionSetup(t *testing.T, env *testenv.Env) (author uuid.UUID, authorEmail string, org uuid.UUID, mention func()) {
	t.Helper()
	d := env.DB
	org = d.Org(t, "Acme")
	author, authorEmail = d.User(t, "Ada Author")
	reviewer, _ := d.User(t, "Rex Reviewer")
	d.Member(t, org, author, "author")
	d.Member(t, org, reviewer, "reviewer")
	creative := d.DraftCreative(t, org, author)
	comments := fmt.Sprintf("/api/v1/organizations/%s/creatives/%s/comments", org, creative)
	asReviewer := env.SessionFor(t, reviewer)
	return author, authorEmail, org, func() {
		t.Helper()
		if r := asReviewer.Do(http.MethodPost, comments, map[string]any{"body": "see", "mentionUserIds": []uuid.UUID{author}}); r.Status != 201 {
			t.Fatalf("comment: %d %s", r.Status, r.Body)
		}
	}
}

// queued waits until n notifications of user are queued.
func queued(t *testing.T, env *testenv.Env, user uuid.UUID, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var got int
		if err := env.DB.Pool.QueryRow(context.Background(), "SELECT count(*) FROM notifications WHERE user_id = $1", user).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d notifications queued, want %d", got, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestACrashBetweenCommitAndSendDeliversOnceWithOneMessageID(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Mail: true, MailWorkersOff: true})
	author, authorEmail, _, mention := mentionSetup(t, env)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))

	// The comment commits, its event is published and the notification's
	// job queued; no worker runs (the replica died before sending).
	mention()
	queued(t, env, author, 1)
	time.Sleep(300 * time.Millisecond)
	waitFor(t, env.Mail, authorEmail, 0)

	// After the restart the job sends it.
	stop := testenv.StartEmailWorkers(t, env.DB, env.Email, log)
	first := waitFor(t, env.Mail, authorEmail, 1)
	stop()

	// A crash after the SMTP server accepted the mail but before the job
	// recorded it leaves the notification queued and its job running; River
	// rescues such a job and runs it again, as here.
	if _, err := env.DB.Pool.Exec(context.Background(), "UPDATE notifications SET state = 'queued' WHERE user_id = $1", author); err != nil {
		t.Fatal(err)
	}
	if _, err := env.DB.Pool.Exec(context.Background(), `UPDATE river.river_job SET state = 'retryable', scheduled_at = now(), finalized_at = NULL
		WHERE kind = 'email_notification'`); err != nil {
		t.Fatal(err)
	}
	testenv.StartEmailWorkers(t, env.DB, env.Email, log)
	again := waitFor(t, env.Mail, authorEmail, 2)
	if again[0].MessageID != first[0].MessageID || again[1].MessageID != first[0].MessageID {
		t.Fatalf("Message-IDs %q and %q, want both %q: the receiver would see two mails", again[0].MessageID, again[1].MessageID, first[0].MessageID)
	}
}

func TestANotificationToSomeoneWhoLostAccessIsDropped(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Mail: true, MailWorkersOff: true})
	author, authorEmail, org, mention := mentionSetup(t, env)
	mention()
	queued(t, env, author, 1)
	if _, err := env.DB.Pool.Exec(context.Background(), "DELETE FROM memberships WHERE organization_id = $1 AND user_id = $2", org, author); err != nil {
		t.Fatal(err)
	}
	testenv.StartEmailWorkers(t, env.DB, env.Email, slog.New(slog.NewTextHandler(io.Discard, nil)))
	deadline := time.Now().Add(10 * time.Second)
	for {
		var state string
		if err := env.DB.Pool.QueryRow(context.Background(), "SELECT state FROM notifications WHERE user_id = $1", author).Scan(&state); err != nil {
			t.Fatal(err)
		}
		if state == "dropped" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("state %q, want dropped", state)
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitFor(t, env.Mail, authorEmail, 0)
}

func TestTheDailyDigestIsOneEmailAndNoneWhenEmpty(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Mail: true})
	author, authorEmail, _, mention := mentionSetup(t, env)
	put := settingsBody{Email: "daily", Kinds: map[string]bool{"mention": true, "review_requested": true, "decision": true, "due": true, "deposit": true}}
	if r := env.SessionFor(t, author).Do(http.MethodPut, settingsPath, put); r.Status != 200 {
		t.Fatalf("put: %d %s", r.Status, r.Body)
	}
	mention()
	mention()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var waiting int
		if err := env.DB.Pool.QueryRow(context.Background(), "SELECT count(*) FROM notifications WHERE user_id = $1 AND state = 'digest'", author).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d notifications wait for the digest, want 2", waiting)
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitFor(t, env.Mail, authorEmail, 0)
	if err := env.Email.SendDigests(context.Background(), time.Now()); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, env.Mail, authorEmail, 1)
	m, err := env.Mail.Message(context.Background(), got[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Subject != "Your daily summary: 2 notifications" || m.Text == "" || m.HTML == "" {
		t.Fatalf("digest: %q", m.Subject)
	}
	checkHeaders(t, env.Mail, m, env.Config.PublicBaseURL)
	if err := env.Email.SendDigests(context.Background(), time.Now()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	waitFor(t, env.Mail, authorEmail, 1) // nothing new: no empty digest
}
