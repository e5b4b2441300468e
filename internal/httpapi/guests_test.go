package httpapi_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"creativeapi/gen/api"
	"creativeapi/internal/auth"
	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
)

const guestSessionsPath = "/api/v1/guest/sessions"

// newShare makes a share of a draft as the desk's admin and returns it
// with its token.
func (d *reviewDesk) newShare(t *testing.T, body map[string]any) api.Share {
	t.Helper()
	if body == nil {
		body = map[string]any{}
	}
	if body["creativeIds"] == nil {
		body["creativeIds"] = []uuid.UUID{d.creative(t, creativeSpec{versions: 1})}
	}
	if body["permission"] == nil {
		body["permission"] = "decide"
	}
	r := d.createShare(t, "admin", body)
	if r.Status != http.StatusCreated {
		t.Fatalf("share: %d %s", r.Status, r.Body)
	}
	var sh api.Share
	r.JSON(t, &sh)
	return sh
}

func guestBody(token, email string) map[string]any {
	return map[string]any{"token": token, "name": "Brand Legal", "email": email}
}

func TestAGuestSessionHasItsOwnCookieAndTheSameEmailIsTheSameGuest(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	sh := d.newShare(t, map[string]any{"invite": []map[string]string{{"email": "legal@brand.test"}}})
	token, _ := sh.Token.Get()
	var first, second api.GuestSession
	for i, out := range []*api.GuestSession{&first, &second} {
		r := d.env.Client(t).Do(http.MethodPost, guestSessionsPath, guestBody(token, []string{"legal@brand.test", "LEGAL@brand.test"}[i]))
		if r.Status != http.StatusCreated {
			t.Fatalf("guest session: %d %s", r.Status, r.Body)
		}
		cookie := r.Header.Get("Set-Cookie")
		if !strings.HasPrefix(cookie, "guest=") && !strings.HasPrefix(cookie, "__Host-guest=") || !strings.Contains(cookie, "HttpOnly") ||
			!strings.Contains(cookie, "SameSite=Lax") {
			t.Errorf("Set-Cookie %q is not the guest cookie", cookie)
		}
		r.JSON(t, out)
	}
	if first.Guest.Id != second.Guest.Id || first.CsrfToken == second.CsrfToken || first.Share.Permission != api.SharePermissionDecide ||
		first.Share.Organization.Id != d.org || !first.Share.ExpiresAt.Equal(sh.ExpiresAt) {
		t.Errorf("sessions %+v and %+v", first, second)
	}
	var got api.Share
	d.clients["admin"].Do(http.MethodGet, sharesURL(d.org)+"/"+sh.Id.String(), nil).JSON(t, &got)
	if got.Invitations[0].LastSeenAt.IsNull() {
		t.Errorf("the invitation was not seen: %+v", got.Invitations)
	}
}

func TestAnUnknownARevokedAndAnExpiredTokenAreTheSame404(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	revoked, expired := d.newShare(t, nil), d.newShare(t, nil)
	if r := d.clients["admin"].Do(http.MethodDelete, sharesURL(d.org)+"/"+revoked.Id.String(), nil); r.Status != http.StatusNoContent {
		t.Fatal(r.Status)
	}
	if _, err := d.env.DB.Pool.Exec(context.Background(), "UPDATE shares SET expires_at = now() WHERE id = $1", expired.Id); err != nil {
		t.Fatal(err)
	}
	revokedToken, _ := revoked.Token.Get()
	expiredToken, _ := expired.Token.Get()
	var details []string
	for _, token := range []string{"never-made", revokedToken, expiredToken} {
		r := d.env.Client(t).Do(http.MethodPost, guestSessionsPath, guestBody(token, "legal@brand.test"))
		p := r.Problem(t)
		if r.Status != http.StatusNotFound || p.Code != "share_not_found" {
			t.Fatalf("%d %s, want 404 share_not_found", r.Status, r.Body)
		}
		details = append(details, p.Detail)
	}
	if details[0] != details[1] || details[1] != details[2] {
		t.Errorf("the answers differ: %q", details)
	}
}

func TestRevokingAShareEndsEveryGuestSessionOfItAtOnce(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	sh := d.newShare(t, nil)
	token, _ := sh.Token.Get()
	var cookies []string
	for _, email := range []string{"a@brand.test", "b@brand.test"} {
		r := d.env.Client(t).Do(http.MethodPost, guestSessionsPath, guestBody(token, email))
		if r.Status != http.StatusCreated {
			t.Fatal(r.Status)
		}
		value, _, _ := strings.Cut(r.Header.Get("Set-Cookie"), ";")
		_, value, _ = strings.Cut(value, "=")
		cookies = append(cookies, value)
	}
	// The guest session lookup (GuestSessionGet) of each cookie.
	live := func() (n int) {
		for _, c := range cookies {
			_, err := d.env.DB.Store.Q.GuestSessionGet(context.Background(), auth.HashToken(c))
			switch {
			case err == nil:
				n++
			case !errors.Is(err, store.ErrNotFound):
				t.Fatal(err)
			}
		}
		return n
	}
	if n := live(); n != 2 {
		t.Fatalf("%d live guest sessions, want 2", n)
	}
	d.clients["admin"].Do(http.MethodDelete, sharesURL(d.org)+"/"+sh.Id.String(), nil)
	if n := live(); n != 0 {
		t.Errorf("%d guest sessions live after the revocation", n)
	}
}

func TestASharePasswordIsAskedAndThrottledPerShare(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	sh := d.newShare(t, map[string]any{"password": "correct horse"})
	token, _ := sh.Token.Get()
	try := func(password *string) *testenv.Response {
		body := guestBody(token, "legal@brand.test")
		if password != nil {
			body["password"] = *password
		}
		return d.env.Client(t).Do(http.MethodPost, guestSessionsPath, body)
	}
	wrong, right := "wrong horse", "correct horse"
	// A missing password guesses nothing and is not counted.
	for range 6 {
		if r := try(nil); r.Status != http.StatusUnauthorized || r.Problem(t).Code != "share_password_required" {
			t.Fatalf("no password: %d %s", r.Status, r.Body)
		}
	}
	if r := try(&right); r.Status != http.StatusCreated {
		t.Fatalf("the right password: %d %s", r.Status, r.Body)
	}
	for range 5 {
		if r := try(&wrong); r.Status != http.StatusUnauthorized || r.Problem(t).Code != "share_password_required" {
			t.Fatalf("a wrong password: %d %s", r.Status, r.Body)
		}
	}
	r := try(&right)
	if r.Status != http.StatusTooManyRequests || r.Problem(t).Code != "too_many_attempts" || r.Header.Get("Retry-After") == "" {
		t.Errorf("after 5 wrong passwords: %d %s, want 429 with Retry-After", r.Status, r.Body)
	}
}

func TestAGuestSessionIsRefusedCrossOriginAndWithoutAName(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	sh := d.newShare(t, nil)
	token, _ := sh.Token.Get()
	r := d.env.Client(t).Do(http.MethodPost, guestSessionsPath, guestBody(token, "legal@brand.test"),
		testenv.Header{Name: "Origin", Value: "https://evil.example"}, testenv.Header{Name: "Sec-Fetch-Site", Value: "cross-site"})
	if r.Status != http.StatusForbidden || r.Problem(t).Code != "csrf_failed" {
		t.Errorf("cross-origin: %d %s", r.Status, r.Body)
	}
	r = d.env.Client(t).Do(http.MethodPost, guestSessionsPath, map[string]any{"token": token, "email": "legal@brand.test"})
	if p := r.Problem(t); r.Status != http.StatusUnprocessableEntity || p.FieldErrors[0].Field != "name" {
		t.Errorf("without a name: %d %s", r.Status, r.Body)
	}
}

func TestGuestSessionsArePurgedADayAfterTheirShareEnded(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	ended, live := d.newShare(t, nil), d.newShare(t, nil)
	for _, sh := range []api.Share{ended, live} {
		token, _ := sh.Token.Get()
		if r := d.env.Client(t).Do(http.MethodPost, guestSessionsPath, guestBody(token, "legal@brand.test")); r.Status != http.StatusCreated {
			t.Fatal(r.Status)
		}
	}
	ctx := context.Background()
	if _, err := d.env.DB.Pool.Exec(ctx, "UPDATE shares SET revoked_at = now() - interval '25 hours' WHERE id = $1", ended.Id); err != nil {
		t.Fatal(err)
	}
	if err := auth.PurgeGuestSessions(ctx, d.env.DB.Store, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	rows, err := d.env.DB.Pool.Query(ctx, "SELECT g.share_id FROM guest_sessions gs JOIN guests g ON g.id = gs.guest_id")
	if err != nil {
		t.Fatal(err)
	}
	left, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil || len(left) != 1 || left[0] != live.Id {
		t.Errorf("sessions left of shares %v (%v), want only the live share's %s", left, err, live.Id)
	}
}
