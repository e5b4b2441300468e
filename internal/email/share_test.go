package email_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
)

// shareSetup is an admin of "Acme <Ads>" with a draft creative whose
// title needs escaping, and a function that shares it inviting addresses.
func shareSetup(t *testing.T, env *testenv.Env) (share func(password string, invite ...map[string]string) (id uuid.UUID, url string), org uuid.UUID) {
	t.Helper()
	d := env.DB
	org = d.Org(t, "Acme <Ads>")
	admin, _ := d.User(t, "Adam Admin")
	d.Member(t, org, admin, "admin")
	creative := d.DraftCreative(t, org, admin)
	if _, err := d.Pool.Exec(context.Background(), "UPDATE creatives SET title = 'Launch <b>' WHERE id = $1", creative); err != nil {
		t.Fatal(err)
	}
	c := env.SessionFor(t, admin)
	return func(password string, invite ...map[string]string) (uuid.UUID, string) {
		t.Helper()
		body := map[string]any{"creativeIds": []uuid.UUID{creative}, "permission": "decide", "invite": invite}
		if password != "" {
			body["password"] = password
		}
		r := c.Do(http.MethodPost, fmt.Sprintf("/api/v1/organizations/%s/shares", org), body,
			testenv.Header{Name: "Idempotency-Key", Value: uuid.NewString()})
		if r.Status != http.StatusCreated {
			t.Fatalf("share: %d %s", r.Status, r.Body)
		}
		var sh struct {
			ID  uuid.UUID
			URL string
		}
		r.JSON(t, &sh)
		return sh.ID, sh.URL
	}, org
}

// guestAddress is an address of its own for one test (Mailpit is shared).
func guestAddress(name string) string {
	return name + "-" + uuid.NewString()[:8] + "@brand.test"
}

func TestEachInvitationOfAShareIsOneEmailWithItsLinkAndNoUnsubscribe(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Mail: true, Env: map[string]string{"APP_URL": "https://app.example.test"}})
	share, _ := shareSetup(t, env)
	legal, brand := guestAddress("legal"), guestAddress("brand")
	id, url := share("correct horse", map[string]string{"email": legal, "name": "Lee <Legal>"}, map[string]string{"email": brand})
	token := strings.TrimPrefix(url, "https://app.example.test/share/")
	if token == url || token == "" {
		t.Fatalf("url %q", url)
	}
	// Each invitation has a link of its own: the share's, with the
	// invitation's token in the fragment.
	own := regexp.MustCompile(regexp.QuoteMeta(url) + `#invitation=([A-Za-z0-9_-]{43})`)
	invitations := map[string]string{}
	for _, to := range []string{legal, brand} {
		got := inbox(t, env.Mail, to, 1)[0]
		if got.Subject != "Acme <Ads>: Adam Admin invites you to review CR-000001 Launch <b>" {
			t.Errorf("%s: subject %q", to, got.Subject)
		}
		m := own.FindStringSubmatch(got.Text)
		if m == nil || !strings.Contains(got.HTML, `href="`+m[0]+`"`) {
			t.Fatalf("%s: no link %s#invitation=… in\n%s\n%s", to, url, got.Text, got.HTML)
		}
		invitations[to] = m[1]
		if !strings.Contains(got.HTML, "CR-000001 Launch &lt;b&gt;") || strings.Contains(got.HTML, "<b>") ||
			!strings.Contains(got.HTML, "Acme &lt;Ads&gt;") || !strings.Contains(got.Text, "asks for a password") ||
			!strings.Contains(got.Text, "You may look at it, comment, and approve or request changes, without an account, until ") {
			t.Errorf("%s: not escaped, or no password note:\n%s", to, got.HTML)
		}
		h, err := env.Mail.Headers(context.Background(), got.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(h["List-Unsubscribe"]) != 0 || strings.Contains(got.Text, "nsubscribe") {
			t.Errorf("%s: a guest who is no user gets no unsubscribe: %q", to, h["List-Unsubscribe"])
		}
	}
	if got := inbox(t, env.Mail, legal, 1)[0]; !strings.Contains(got.HTML, "Hello Lee &lt;Legal&gt;") {
		t.Errorf("the invitee's name is not in the email, escaped:\n%s", got.HTML)
	}

	// Sent: sentAt is set, and the sealed token is gone; the token was
	// never in the notifications, the jobs or the events.
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var unsent, sealed int
		if err := env.DB.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE sent_at IS NULL), count(token_sealed)
			FROM share_invitations WHERE share_id = $1`, id).Scan(&unsent, &sealed); err != nil {
			t.Fatal(err)
		}
		if unsent == 0 && sealed == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d invitations without sentAt, %d sealed tokens left", unsent, sealed)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if invitations[legal] == invitations[brand] {
		t.Errorf("two invitations share one link: %s", invitations[legal])
	}
	for _, secret := range []string{token, invitations[legal], invitations[brand]} {
		for _, table := range []string{"notifications", store.RiverSchema + ".river_job", "outbox_events", "share_invitations", "shares"} {
			var n int
			if err := env.DB.Pool.QueryRow(ctx, fmt.Sprintf("SELECT count(*) FROM %s x WHERE x::text LIKE '%%' || $1 || '%%'", table), secret).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("%d rows of %s hold a link's token", n, table)
			}
		}
	}
}

func TestAnInvitationToARevokedShareIsDroppedAndItsSealedTokenEmptied(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Mail: true, MailWorkersOff: true})
	share, org := shareSetup(t, env)
	guest := guestAddress("late")
	id, _ := share("", map[string]string{"email": guest})
	ctx := context.Background()
	waitState := func(want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			var state string
			err := env.DB.Pool.QueryRow(ctx, "SELECT state FROM notifications WHERE share_id = $1 AND email = $2", id, guest).Scan(&state)
			if err == nil && state == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("state %q (%v), want %s", state, err, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitState("queued")
	if _, err := env.DB.Pool.Exec(ctx, "UPDATE shares SET revoked_at = now() WHERE id = $1 AND organization_id = $2", id, org); err != nil {
		t.Fatal(err)
	}
	testenv.StartEmailWorkers(t, env.DB, env.Email, slog.New(slog.NewTextHandler(io.Discard, nil)))
	waitState("dropped")
	var sealed int
	if err := env.DB.Pool.QueryRow(ctx, "SELECT count(token_sealed) FROM share_invitations WHERE share_id = $1", id).Scan(&sealed); err != nil || sealed != 0 {
		t.Fatalf("%d sealed tokens left (%v)", sealed, err)
	}
	waitFor(t, env.Mail, guest, 0)
}
