package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/auth"
	"creativeapi/internal/mailserver"
	"creativeapi/internal/review"
	"creativeapi/internal/testenv"
)

// The rules of docs/shares.md "A guest is who their inbox says" and
// "Members sign in" (docs/shares.md).

const (
	guestVerifyPath  = "/api/v1/guest/verify"
	guestConfirmPath = "/api/v1/guest/verify/confirm"
)

// guestActionsPath is where a guest decides on creative id.
func guestActionsPath(id uuid.UUID) string {
	return guestCreativesPath + "/" + id.String() + "/actions"
}

var codePattern = regexp.MustCompile(`Your code is ([0-9]{6})\.`)

// waitForCodes waits until to's inbox holds n code emails and returns
// their codes, newest first.
func waitForCodes(t *testing.T, mail *mailserver.Server, to string, n int) []string {
	t.Helper()
	var codes []string
	testenv.Eventually(t, fmt.Sprintf("%d code emails to %s", n, to), func() bool {
		list, err := mail.Messages(context.Background(), to)
		if err != nil {
			t.Fatal(err)
		}
		codes = codes[:0]
		for _, s := range list {
			m, err := mail.Message(context.Background(), s.ID)
			if err != nil {
				t.Fatal(err)
			}
			if c := codePattern.FindStringSubmatch(m.Text); c != nil {
				codes = append(codes, c[1])
			}
		}
		return len(codes) >= n
	})
	return codes
}

// confirm sends code for c's guest session; a 200 hands c the new
// session's CSRF token (the new cookie is in c's jar).
func confirm(t *testing.T, c *testenv.Client, code string) *testenv.Response {
	t.Helper()
	r := c.Do(http.MethodPost, guestConfirmPath, map[string]string{"code": code})
	if r.Status == http.StatusOK {
		var s api.GuestSession
		r.JSON(t, &s)
		c.GuestCSRFToken = s.CsrfToken
	}
	return r
}

// askCode asks a code for c's guest session and wants the 202.
func askCode(t *testing.T, c *testenv.Client) api.GuestVerification {
	t.Helper()
	r := c.Do(http.MethodPost, guestVerifyPath, nil)
	if r.Status != http.StatusAccepted {
		t.Fatalf("verify: %d %s", r.Status, r.Body)
	}
	var v api.GuestVerification
	r.JSON(t, &v)
	return v
}

func TestOnlyAVerifiedGuestSessionDecides(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{versions: 1, status: review.StatusInReview, reviewer: "reviewer"})
	share, token := d.env.DB.Share(t, d.org, d.users["admin"], "decide", id)
	typed := d.env.Client(t)
	if r := typed.OpenShare(token, "legal@brand.test"); r.Status != http.StatusCreated {
		t.Fatalf("guest session: %d %s", r.Status, r.Body)
	}
	var c api.CreativeDetail
	typed.Do(http.MethodGet, guestCreativesPath+"/"+id.String(), nil).JSON(t, &c)
	if len(c.AvailableActions) != 0 {
		t.Errorf("an unverified session is offered %v", c.AvailableActions)
	}
	r := typed.Do(http.MethodPost, guestActionsPath(id), map[string]any{"action": "approve"})
	if r.Status != http.StatusForbidden || r.Problem(t).Code != "guest_unverified" {
		t.Fatalf("an unverified session's decision: %d %s", r.Status, r.Body)
	}
	// The invitation's own link verifies the session, which decides.
	invited := d.env.Client(t)
	if r := d.env.OpenInvited(t, invited, share, token, "legal@brand.test"); r.Status != http.StatusCreated {
		t.Fatalf("invited session: %d %s", r.Status, r.Body)
	}
	invited.Do(http.MethodGet, guestCreativesPath+"/"+id.String(), nil).JSON(t, &c)
	if !slices.Contains(c.AvailableActions, api.CreativeActionApprove) {
		t.Errorf("a verified session is offered %v", c.AvailableActions)
	}
	if r := invited.Do(http.MethodPost, guestActionsPath(id), map[string]any{"action": "approve"}); r.Status != http.StatusOK {
		t.Fatalf("a verified session's decision: %d %s", r.Status, r.Body)
	}
	// The history records the decision's author as verified.
	var page api.CreativeEventList
	d.clients["admin"].Do(http.MethodGet, creativesURL(d.org)+"/"+id.String()+"/events", nil).JSON(t, &page)
	if a := page.Items[0].Actor; page.Items[0].Type != api.CreativeEventTypeApprove || a.Verified == nil || !*a.Verified {
		t.Errorf("the decision's history event %+v", page.Items[0])
	}
}

func TestAnInvitationsOwnTokenOpensAVerifiedSessionOfItsEmailOnly(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	sh := d.newShare(t, map[string]any{"password": "correct horse"})
	token, _ := sh.Token.Get()
	invitation := d.env.DB.Invitation(t, sh.Id, "legal@brand.test")
	open := func(body map[string]any) *testenv.Response {
		body["token"], body["name"] = token, "Brand Legal"
		return d.env.Client(t).Do(http.MethodPost, guestSessionsPath, body)
	}
	// The password is still asked.
	if r := open(map[string]any{"shareInvitationToken": invitation}); r.Status != http.StatusUnauthorized {
		t.Errorf("no password: %d %s", r.Status, r.Body)
	}
	r := open(map[string]any{"shareInvitationToken": invitation, "password": "correct horse"})
	var s api.GuestSession
	if r.Status != http.StatusCreated {
		t.Fatalf("by the invitation: %d %s", r.Status, r.Body)
	}
	if r.JSON(t, &s); !s.Guest.Verified || s.Guest.Email != "legal@brand.test" {
		t.Errorf("session %+v: want verified, the invitation's email", s.Guest)
	}
	if r := open(map[string]any{"shareInvitationToken": invitation, "password": "correct horse", "email": "LEGAL@brand.test"}); r.Status != http.StatusCreated {
		t.Errorf("the invitation's email again: %d %s", r.Status, r.Body)
	}
	if r := open(map[string]any{"shareInvitationToken": invitation, "password": "correct horse", "email": "cmo@brand.test"}); r.Status != http.StatusUnprocessableEntity ||
		len(r.Problem(t).FieldErrors) == 0 || r.Problem(t).FieldErrors[0].Field != "email" {
		t.Errorf("another email with the invitation: %d %s", r.Status, r.Body)
	}
	if r := open(map[string]any{"shareInvitationToken": auth.NewToken(), "password": "correct horse"}); r.Status != http.StatusNotFound ||
		r.Problem(t).Code != "share_not_found" {
		t.Errorf("an invitation token of no invitation: %d %s", r.Status, r.Body)
	}
	if r := open(map[string]any{"password": "correct horse"}); r.Status != http.StatusUnprocessableEntity {
		t.Errorf("neither email nor invitation: %d %s", r.Status, r.Body)
	}
	// Typed, the same email is the same guest, unverified.
	r = open(map[string]any{"email": "legal@brand.test", "password": "correct horse"})
	var typed api.GuestSession
	if r.JSON(t, &typed); typed.Guest.Verified || typed.Guest.Id != s.Guest.Id {
		t.Errorf("typed session %+v, invited %+v", typed.Guest, s.Guest)
	}
}

func TestAGuestVerifiesTheirEmailWithAMailedCode(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t, testenv.Options{Mail: true})
	id := d.creative(t, creativeSpec{versions: 1, status: review.StatusInReview, reviewer: "reviewer"})
	email := "code-" + uuid.NewString()[:8] + "@brand.test"
	share, token := d.env.DB.Share(t, d.org, d.users["admin"], "decide", id)
	d.env.DB.Invite(t, share, email) // invited, so the verified session decides
	guest := d.env.Client(t)
	if r := guest.OpenShare(token, email); r.Status != http.StatusCreated {
		t.Fatal(r.Status)
	}
	// Both are commands of the guest session: its CSRF token is asked.
	csrf := guest.GuestCSRFToken
	guest.GuestCSRFToken = ""
	for path, body := range map[string]any{guestVerifyPath: nil, guestConfirmPath: map[string]string{"code": "123456"}} {
		if r := guest.Do(http.MethodPost, path, body); r.Status != http.StatusForbidden || r.Problem(t).Code != "csrf_failed" {
			t.Errorf("%s without the CSRF token: %d %s", path, r.Status, r.Body)
		}
	}
	guest.GuestCSRFToken = csrf
	v := askCode(t, guest)
	if left := time.Until(v.ExpiresAt); left < 9*time.Minute || left > 11*time.Minute {
		t.Errorf("the code expires in %s, want 10 minutes", left)
	}
	code := waitForCodes(t, d.env.Mail, email, 1)[0]
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	if r := confirm(t, guest, wrong); r.Status != http.StatusUnprocessableEntity || len(r.Problem(t).FieldErrors) == 0 || r.Problem(t).FieldErrors[0].Field != "code" {
		t.Fatalf("a wrong code: %d %s", r.Status, r.Body)
	}
	r := confirm(t, guest, code)
	if r.Status != http.StatusOK || r.Header.Get("Set-Cookie") == "" {
		t.Fatalf("the code: %d %s", r.Status, r.Body)
	}
	var s api.GuestSession
	if r.JSON(t, &s); !s.Guest.Verified {
		t.Errorf("confirmed session %+v", s.Guest)
	}
	if r := guest.Do(http.MethodPost, guestActionsPath(id), map[string]any{"action": "approve"}); r.Status != http.StatusOK {
		t.Fatalf("the verified session's decision: %d %s", r.Status, r.Body)
	}
	// The code is spent.
	if r := confirm(t, guest, code); r.Status != http.StatusConflict || r.Problem(t).Code != "code_expired" {
		t.Errorf("the code again: %d %s", r.Status, r.Body)
	}
}

func TestTheFifthWrongCodeAndAnExpiredCodeAreCodeExpired(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t, testenv.Options{Mail: true})
	id := d.creative(t, creativeSpec{versions: 1})
	email := "tries-" + uuid.NewString()[:8] + "@brand.test"
	guest, _ := d.guestOn(t, "comment", email, id)
	if r := confirm(t, guest, "123456"); r.Status != http.StatusConflict || r.Problem(t).Code != "code_expired" {
		t.Errorf("no code asked for: %d %s", r.Status, r.Body)
	}
	askCode(t, guest)
	code := waitForCodes(t, d.env.Mail, email, 1)[0]
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	for i := 1; i <= 5; i++ {
		want, code := http.StatusUnprocessableEntity, ""
		if i == 5 {
			want, code = http.StatusConflict, "code_expired"
		}
		r := confirm(t, guest, wrong)
		if r.Status != want || (code != "" && r.Problem(t).Code != code) {
			t.Fatalf("wrong code %d: %d %s", i, r.Status, r.Body)
		}
	}
	if r := confirm(t, guest, code); r.Status != http.StatusConflict || r.Problem(t).Code != "code_expired" {
		t.Errorf("the right code after five wrong ones: %d %s", r.Status, r.Body)
	}
	// An expired code (the clock moved past its 10 minutes).
	other, _ := d.guestOn(t, "comment", "expired-"+email, id)
	askCode(t, other)
	code = waitForCodes(t, d.env.Mail, "expired-"+email, 1)[0]
	if _, err := d.env.DB.Pool.Exec(context.Background(),
		"UPDATE guest_sessions SET code_expires_at = now() - interval '1 second' WHERE code_hash IS NOT NULL AND name = $1", "Guest expired-"+email); err != nil {
		t.Fatal(err)
	}
	if r := confirm(t, other, code); r.Status != http.StatusConflict || r.Problem(t).Code != "code_expired" {
		t.Errorf("an expired code: %d %s", r.Status, r.Body)
	}
}

func TestAMembersEmailIsRefusedOnceTheInboxIsProven(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t, testenv.Options{Mail: true})
	id := d.creative(t, creativeSpec{versions: 1})
	member, memberEmail := d.env.DB.User(t, "Mo Member")
	d.env.DB.Member(t, d.org, member, "viewer")
	// Typing a member's email is no oracle: the session opens.
	guest, _ := d.guestOn(t, "comment", memberEmail, id)
	askCode(t, guest)
	code := waitForCodes(t, d.env.Mail, memberEmail, 1)[0]
	if r := confirm(t, guest, code); r.Status != http.StatusConflict || r.Problem(t).Code != "member_email" {
		t.Errorf("a member's code: %d %s", r.Status, r.Body)
	}
	shareID, token := d.env.DB.Share(t, d.org, d.users["admin"], "decide", id)
	if r := d.env.OpenInvited(t, d.env.Client(t), shareID, token, memberEmail); r.Status != http.StatusConflict || r.Problem(t).Code != "member_email" {
		t.Errorf("a member's invitation link: %d %s", r.Status, r.Body)
	}
	// Nor may a share invite a member.
	r := d.createShare(t, "admin", map[string]any{"creativeIds": []uuid.UUID{id}, "permission": "comment",
		"invite": []map[string]string{{"email": "someone@brand.test"}, {"email": memberEmail}}})
	if r.Status != http.StatusUnprocessableEntity || len(r.Problem(t).FieldErrors) == 0 || r.Problem(t).FieldErrors[0].Field != "invite[1].email" {
		t.Errorf("inviting a member: %d %s", r.Status, r.Body)
	}
}

func TestAGuestWhoseEmailIsNowAMembersDoesNotDecide(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{versions: 1, status: review.StatusInReview, reviewer: "reviewer"})
	email := "joins-" + uuid.NewString()[:8] + "@brand.test"
	guest, _ := d.guestOn(t, "decide", email, id)
	if _, err := d.env.DB.Pool.Exec(context.Background(), `
		WITH u AS (INSERT INTO users (email, name, password_hash) VALUES ($1, 'Joined', 'x') RETURNING id)
		INSERT INTO memberships (organization_id, user_id, role) SELECT $2, id, 'reviewer' FROM u`, email, d.org); err != nil {
		t.Fatal(err)
	}
	if r := guest.Do(http.MethodPost, guestActionsPath(id), map[string]any{"action": "approve"}); r.Status != http.StatusForbidden ||
		r.Problem(t).Code != "action_forbidden" {
		t.Errorf("a decision by a guest who became a member: %d %s", r.Status, r.Body)
	}
}

func TestAnotherSessionCannotRenameAGuestsComments(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{versions: 1, status: review.StatusInReview})
	share, token := d.env.DB.Share(t, d.org, d.users["admin"], "decide", id)
	invited := d.env.Client(t)
	if r := d.env.OpenInvited(t, invited, share, token, "legal@brand.test"); r.Status != http.StatusCreated {
		t.Fatal(r.Status)
	}
	comments := guestCreativesPath + "/" + id.String() + "/comments"
	if r := invited.Do(http.MethodPost, comments, map[string]any{"body": "Footnote, please."}); r.Status != http.StatusCreated {
		t.Fatalf("comment: %d %s", r.Status, r.Body)
	}
	// Whoever types the same email is the same guest, yet renames nothing.
	impostor := d.env.Client(t)
	r := impostor.Do(http.MethodPost, guestSessionsPath, map[string]any{"token": token, "name": "Mallory", "email": "legal@brand.test"})
	if r.Status != http.StatusCreated {
		t.Fatal(r.Status)
	}
	var s api.GuestSession
	if r.JSON(t, &s); s.Guest.Name != "Mallory" || s.Guest.Verified {
		t.Errorf("impostor's session %+v", s.Guest)
	}
	impostor.GuestCSRFToken = s.CsrfToken
	if r := impostor.Do(http.MethodPost, comments, map[string]any{"body": "Approve it as is."}); r.Status != http.StatusCreated {
		t.Fatalf("impostor's comment: %d %s", r.Status, r.Body)
	}
	var list api.CommentList
	d.clients["admin"].Do(http.MethodGet, creativesURL(d.org)+"/"+id.String()+"/comments", nil).JSON(t, &list)
	if len(list.Items) != 2 {
		t.Fatalf("comments %+v", list.Items)
	}
	first, second := list.Items[0].Author, list.Items[1].Author
	if first.Name != "Guest legal@brand.test" || first.Verified == nil || !*first.Verified {
		t.Errorf("the invited guest's comment is shown as %+v", first)
	}
	if second.Name != "Mallory" || second.Id != first.Id || second.Verified == nil || *second.Verified {
		t.Errorf("the typed session's comment is shown as %+v", second)
	}
}

func TestWrongSharePasswordsAreThrottledPerShareAndAddress(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t, testenv.Options{Env: map[string]string{"TRUSTED_PROXIES": "127.0.0.1/32"}})
	sh := d.newShare(t, map[string]any{"password": "correct horse"})
	token, _ := sh.Token.Get()
	try := func(address, password string) *testenv.Response {
		body := guestBody(token, "legal@brand.test")
		body["password"] = password
		return d.env.Client(t).Do(http.MethodPost, guestSessionsPath, body, testenv.Header{Name: "X-Forwarded-For", Value: address})
	}
	if r := try("198.51.100.7", "correct horse"); r.Status != http.StatusCreated {
		t.Fatalf("an opener: %d %s", r.Status, r.Body)
	}
	for range 5 {
		if r := try("203.0.113.9", "wrong horse"); r.Status != http.StatusUnauthorized {
			t.Fatalf("a wrong password: %d %s", r.Status, r.Body)
		}
	}
	if r := try("203.0.113.9", "correct horse"); r.Status != http.StatusTooManyRequests || r.Problem(t).Code != "too_many_attempts" {
		t.Errorf("the guesser's address after 5: %d %s", r.Status, r.Body)
	}
	// One guesser locks out nobody else.
	if r := try("192.0.2.44", "correct horse"); r.Status != http.StatusCreated {
		t.Errorf("another address: %d %s", r.Status, r.Body)
	}
	// 100 failures in the hour: only addresses that opened the share try.
	if _, err := d.env.DB.Pool.Exec(context.Background(),
		"UPDATE sign_in_failures SET failures = 100 WHERE subject = $1", auth.ShareSubject(sh.Id)); err != nil {
		t.Fatal(err)
	}
	if r := try("192.0.2.200", "correct horse"); r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
		t.Errorf("a new address after 100: %d %s", r.Status, r.Body)
	}
	if r := try("198.51.100.7", "correct horse"); r.Status != http.StatusCreated {
		t.Errorf("an address that opened the share, after 100: %d %s", r.Status, r.Body)
	}
}

func TestGuestCodesHaveAPerRecipientCeilingOverWhichNothingIsSentOrChanged(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t, testenv.Options{Mail: true})
	id := d.creative(t, creativeSpec{versions: 1})
	email := "ceiling-" + uuid.NewString()[:8] + "@brand.test"
	guest, _ := d.guestOn(t, "comment", email, id)
	first := askCode(t, guest)
	code := waitForCodes(t, d.env.Mail, email, 1)[0]
	// Within the minute: the same answer, nothing sent, the code kept.
	again := askCode(t, guest)
	if !again.ExpiresAt.Equal(first.ExpiresAt) {
		t.Errorf("over the ceiling the code's expiry moved: %s, then %s", first.ExpiresAt, again.ExpiresAt)
	}
	// A later email to the same address (an invitation, which this
	// ceiling does not cap) arrives after any code the second ask sent.
	if r := d.createShare(t, "admin", map[string]any{"creativeIds": []uuid.UUID{id}, "permission": "view",
		"invite": []map[string]string{{"email": email}}}); r.Status != http.StatusCreated {
		t.Fatalf("share: %d %s", r.Status, r.Body)
	}
	var list []mailserver.Summary
	testenv.Eventually(t, "the invitation after the codes", func() bool {
		var err error
		if list, err = d.env.Mail.Messages(context.Background(), email); err != nil {
			t.Fatal(err)
		}
		return len(list) >= 2
	})
	if len(list) != 2 || waitForCodes(t, d.env.Mail, email, 1)[0] != code || len(waitForCodes(t, d.env.Mail, email, 1)) != 1 {
		t.Fatalf("%d emails: over the ceiling a code was sent", len(list))
	}
	if r := confirm(t, guest, code); r.Status != http.StatusOK {
		t.Errorf("the first code after the ceiling: %d %s", r.Status, r.Body)
	}
}

func TestInvitationsOverACeilingAre429AndMakeNothing(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{versions: 1})
	share := func(emails ...string) *testenv.Response {
		invite := make([]map[string]string, len(emails))
		for i, e := range emails {
			invite[i] = map[string]string{"email": e}
		}
		return d.createShare(t, "admin", map[string]any{"creativeIds": []uuid.UUID{id}, "permission": "view", "invite": invite})
	}
	count := func() int {
		var n int
		if err := d.env.DB.Pool.QueryRow(context.Background(), "SELECT count(*) FROM shares WHERE organization_id = $1", d.org).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// Three a day per (organization, address), revoked ones counted.
	for range 3 {
		r := share("x@brand.test")
		if r.Status != http.StatusCreated {
			t.Fatalf("share: %d %s", r.Status, r.Body)
		}
		var sh api.Share
		r.JSON(t, &sh)
		if r := d.clients["admin"].Do(http.MethodDelete, sharesURL(d.org)+"/"+sh.Id.String(), nil); r.Status != http.StatusNoContent {
			t.Fatalf("revoke: %d %s", r.Status, r.Body)
		}
	}
	before := count()
	r := share("y@brand.test", "x@brand.test")
	if r.Status != http.StatusTooManyRequests || r.Problem(t).Code != "email_quota_exceeded" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("a fourth invitation of an address: %d %s", r.Status, r.Body)
	}
	if count() != before {
		t.Errorf("over the ceiling a share was made")
	}
	// 50 an hour per organization: 3 made, 47 fit, one more does not.
	many := make([]string, 47)
	for i := range many {
		many[i] = "many-" + uuid.NewString()[:8] + "@brand.test"
	}
	if r := share(many...); r.Status != http.StatusCreated {
		t.Fatalf("the 50th invitation of the hour: %d %s", r.Status, r.Body)
	}
	if r := share("one-more@brand.test"); r.Status != http.StatusTooManyRequests || r.Problem(t).Code != "email_quota_exceeded" {
		t.Errorf("the 51st invitation of the hour: %d %s", r.Status, r.Body)
	}
}
