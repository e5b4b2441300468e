package email_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/internal/email"
	"creativeapi/internal/testenv"
)

const settingsPath = "/api/v1/me/notification-settings"

type settingsBody struct {
	Email string          `json:"email"`
	Kinds map[string]bool `json:"kinds"`
}

func TestNotificationSettingsDefaultToInstantAndEveryKind(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, _ := env.SignedIn(t, "Sue Settings")
	var got settingsBody
	r := c.Do(http.MethodGet, settingsPath, nil)
	if r.Status != 200 {
		t.Fatalf("get: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &got)
	if got.Email != "instant" || len(got.Kinds) != 5 || !got.Kinds["mention"] || !got.Kinds["deposit"] || !got.Kinds["due"] {
		t.Fatalf("defaults: %+v", got)
	}
	put := settingsBody{Email: "daily", Kinds: map[string]bool{"mention": true, "review_requested": false, "decision": true, "due": false, "deposit": false}}
	if r := c.Do(http.MethodPut, settingsPath, put); r.Status != 200 {
		t.Fatalf("put: %d %s", r.Status, r.Body)
	}
	c.Do(http.MethodGet, settingsPath, nil).JSON(t, &got)
	if got.Email != "daily" || got.Kinds["review_requested"] || !got.Kinds["decision"] || got.Kinds["deposit"] {
		t.Fatalf("after put: %+v", got)
	}
	for _, tt := range []struct {
		name   string
		body   any
		status int
	}{
		{"an unknown mode is 422", `{"email":"weekly","kinds":{"mention":true,"review_requested":true,"decision":true,"due":true,"deposit":true}}`, 422},
		{"a missing kind is 422", `{"email":"off","kinds":{"mention":true}}`, 422},
		{"malformed JSON is 400", `{"email":`, 400},
	} {
		if r := c.Do(http.MethodPut, settingsPath, tt.body); r.Status != tt.status {
			t.Errorf("%s: got %d %s", tt.name, r.Status, r.Body)
		}
	}
	if r := env.Client(t).Do(http.MethodGet, settingsPath, nil); r.Status != 401 {
		t.Errorf("get without a session: %d", r.Status)
	}
	if r := env.Client(t).Do(http.MethodPut, settingsPath, put); r.Status != 401 {
		t.Errorf("put without a session: %d", r.Status)
	}
	c.CSRFToken = ""
	if r := c.Do(http.MethodPut, settingsPath, put); r.Status != 403 {
		t.Errorf("put without the CSRF token: %d %s", r.Status, r.Body)
	}
}

// unsubscribeURL is the one-click URL of a delivered message.
func unsubscribeURL(t *testing.T, env *testenv.Env, id string) string {
	t.Helper()
	h, err := env.Mail.Headers(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(strings.TrimPrefix(h["List-Unsubscribe"][0], "<"), ">")
}

func TestOneClickUnsubscribeTurnsThatKindOffWithoutASession(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Mail: true})
	d := env.DB
	org := d.Org(t, "Acme")
	author, authorEmail := d.User(t, "Una Unsub")
	reviewer, _ := d.User(t, "Rob Reviewer")
	d.Member(t, org, author, "author")
	d.Member(t, org, reviewer, "reviewer")
	creative := d.DraftCreative(t, org, author)
	comments := fmt.Sprintf("/api/v1/organizations/%s/creatives/%s/comments", org, creative)
	asReviewer := env.SessionFor(t, reviewer)
	mention := func() {
		t.Helper()
		if r := asReviewer.Do(http.MethodPost, comments, map[string]any{"body": "see", "mentionUserIds": []uuid.UUID{author}}); r.Status != 201 {
			t.Fatalf("comment: %d %s", r.Status, r.Body)
		}
	}
	mention()
	list := waitFor(t, env.Mail, authorEmail, 1)
	link := unsubscribeURL(t, env, list[0].ID)
	path := strings.TrimPrefix(link, env.Config.PublicBaseURL)
	form := testenv.Header{Name: "Content-Type", Value: "application/x-www-form-urlencoded"}
	for range 2 { // 200 also when already off
		r := env.Client(t).Do(http.MethodPost, path, "List-Unsubscribe=One-Click", form)
		if r.Status != 200 || !strings.Contains(string(r.Body), `"kind":"mention"`) {
			t.Fatalf("unsubscribe: %d %s", r.Status, r.Body)
		}
	}
	var got settingsBody
	env.SessionFor(t, author).Do(http.MethodGet, settingsPath, nil).JSON(t, &got)
	if got.Kinds["mention"] || !got.Kinds["decision"] || got.Email != "instant" {
		t.Fatalf("settings after unsubscribe: %+v", got)
	}
	mention()
	time.Sleep(time.Second)
	waitFor(t, env.Mail, authorEmail, 1) // still one: the second mention was dropped

	forged := email.NewTokens("another-secret-of-thirty-two-bytes!!").Sign(author, "decision")
	for _, tt := range []struct {
		name, path string
		status     int
	}{
		{"a token signed with another secret is 404", "/api/v1/unsubscribe?token=" + forged, 404},
		{"a garbled token is 404", "/api/v1/unsubscribe?token=abc.def", 404},
		{"no token is 422", "/api/v1/unsubscribe", 422},
	} {
		if r := env.Client(t).Do(http.MethodPost, tt.path, "List-Unsubscribe=One-Click", form); r.Status != tt.status {
			t.Errorf("%s: got %d %s", tt.name, r.Status, r.Body)
		}
	}
}
