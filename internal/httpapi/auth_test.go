package httpapi_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"creativeapi/internal/testenv"
)

const (
	signInPath  = "/api/v1/auth/sign-in"
	signOutPath = "/api/v1/auth/sign-out"
	mePath      = "/api/v1/me"
)

// sessionBody is the Session schema.
type sessionBody struct {
	User struct {
		ID    uuid.UUID `json:"id"`
		Email string    `json:"email"`
		Name  string    `json:"name"`
	} `json:"user"`
	Memberships []struct {
		Organization struct {
			ID   uuid.UUID `json:"id"`
			Name string    `json:"name"`
		} `json:"organization"`
		Role string `json:"role"`
	} `json:"memberships"`
	CSRFToken string `json:"csrfToken"`
}

// setCookie parses the response's one Set-Cookie header.
func setCookie(t *testing.T, r *testenv.Response) *http.Cookie {
	t.Helper()
	lines := r.Header.Values("Set-Cookie")
	if len(lines) != 1 {
		t.Fatalf("want one Set-Cookie, got %q", lines)
	}
	c, err := http.ParseSetCookie(lines[0])
	if err != nil {
		t.Fatalf("parse Set-Cookie %q: %v", lines[0], err)
	}
	return c
}

func signInBody(email, password string) map[string]string {
	return map[string]string{"email": email, "password": password}
}

func TestSignInAnswersTheSessionAndSetsAnHttpOnlyLaxCookie(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	user, email := env.DB.User(t, "Ada Admin")
	zeta, alpha := env.DB.Org(t, "Zeta Media"), env.DB.Org(t, "Alpha Ads")
	env.DB.Member(t, zeta, user, "viewer")
	env.DB.Member(t, alpha, user, "admin")

	c := env.Client(t)
	r := c.SignIn(strings.ToUpper(email), testenv.Password)
	if r.Status != http.StatusOK {
		t.Fatalf("sign-in: %d %s", r.Status, r.Body)
	}
	var s sessionBody
	r.JSON(t, &s)
	if s.User.ID != user || s.User.Email != email || s.User.Name != "Ada Admin" {
		t.Errorf("user = %+v", s.User)
	}
	if len(s.Memberships) != 2 || s.Memberships[0].Organization.ID != alpha || s.Memberships[0].Organization.Name != "Alpha Ads" ||
		s.Memberships[0].Role != "admin" || s.Memberships[1].Organization.ID != zeta || s.Memberships[1].Role != "viewer" {
		t.Errorf("memberships (want by organization name) = %+v", s.Memberships)
	}
	if len(s.CSRFToken) != 43 {
		t.Errorf("csrfToken %q is not 256 bits in base64url", s.CSRFToken)
	}

	cookie := setCookie(t, r)
	raw := r.Header.Get("Set-Cookie")
	if cookie.Name != "session" || len(cookie.Value) != 43 || !cookie.HttpOnly || cookie.SameSite != http.SameSiteLaxMode ||
		cookie.Path != "/" || cookie.Secure || cookie.MaxAge != int(env.Config.SessionAbsoluteTTL.Seconds()) {
		t.Errorf("Set-Cookie %q", raw)
	}
	for _, attr := range []string{"; Path=/", "; HttpOnly", "; SameSite=Lax", "; Max-Age=604800"} {
		if !strings.Contains(raw, attr) {
			t.Errorf("Set-Cookie %q lacks %q", raw, attr)
		}
	}
	if strings.Contains(raw, "Secure") {
		t.Errorf("Set-Cookie %q is Secure although COOKIE_SECURE=false", raw)
	}

	me := c.Do(http.MethodGet, mePath, nil)
	if me.Status != http.StatusOK {
		t.Fatalf("me: %d %s", me.Status, me.Body)
	}
	if !bytes.Equal(me.Body, r.Body) {
		t.Errorf("GET /me answers\n%s\nwant the sign-in body\n%s", me.Body, r.Body)
	}
}

func TestSecureCookieIsHostPrefixed(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Env: map[string]string{"COOKIE_SECURE": "true"}})
	_, email := env.DB.User(t, "Sam Secure")
	c := env.Client(t)
	r := c.SignIn(email, testenv.Password)
	if r.Status != http.StatusOK {
		t.Fatalf("sign-in: %d %s", r.Status, r.Body)
	}
	cookie := setCookie(t, r)
	if cookie.Name != "__Host-session" || !cookie.Secure || !cookie.HttpOnly || cookie.Path != "/" || cookie.Domain != "" || cookie.SameSite != http.SameSiteLaxMode {
		t.Fatalf("Set-Cookie %q", r.Header.Get("Set-Cookie"))
	}
	// The jar keeps a Secure cookie off plain http, as a browser would; send it by hand.
	sent := testenv.Header{Name: "Cookie", Value: cookie.Name + "=" + cookie.Value}
	if me := c.Do(http.MethodGet, mePath, nil, sent); me.Status != http.StatusOK {
		t.Fatalf("me with the __Host- cookie: %d %s", me.Status, me.Body)
	}
	out := c.Do(http.MethodPost, signOutPath, nil, sent)
	if out.Status != http.StatusNoContent {
		t.Fatalf("sign-out: %d %s", out.Status, out.Body)
	}
	cleared := setCookie(t, out)
	if cleared.Name != "__Host-session" || cleared.Value != "" || cleared.MaxAge != -1 || !cleared.Secure || cleared.Path != "/" {
		t.Errorf("clearing Set-Cookie %q", out.Header.Get("Set-Cookie"))
	}
}

func TestSignOutRevokesTheSessionAndClearsTheCookie(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	_, email := env.DB.User(t, "Olga Out")
	c := env.Client(t)
	in := c.SignIn(email, testenv.Password)
	token := setCookie(t, in).Value

	r := c.Do(http.MethodPost, signOutPath, nil)
	if r.Status != http.StatusNoContent || len(r.Body) != 0 {
		t.Fatalf("sign-out: %d %s", r.Status, r.Body)
	}
	raw := r.Header.Get("Set-Cookie")
	if !strings.HasPrefix(raw, "session=;") || !strings.Contains(raw, "Max-Age=0") || !strings.Contains(raw, "HttpOnly") || !strings.Contains(raw, "Path=/") {
		t.Errorf("clearing Set-Cookie %q", raw)
	}
	var revoked bool
	if err := env.DB.Pool.QueryRow(context.Background(), "SELECT revoked_at IS NOT NULL FROM sessions").Scan(&revoked); err != nil || !revoked {
		t.Errorf("session revoked = %v (%v)", revoked, err)
	}

	// The same cookie, replayed (a copy kept by an attacker): 401 on both endpoints.
	again := env.Client(t)
	again.SetCookie(env.Config, token)
	again.CSRFToken = c.CSRFToken
	if r := again.Do(http.MethodPost, signOutPath, nil); r.Status != http.StatusUnauthorized || r.Problem(t).Code != "unauthenticated" {
		t.Errorf("second sign-out: %d %s", r.Status, r.Body)
	}
	if r := again.Do(http.MethodGet, mePath, nil); r.Status != http.StatusUnauthorized {
		t.Errorf("me after sign-out: %d %s", r.Status, r.Body)
	}
}

func TestWrongPasswordAndUnknownEmailGetTheSameAnswer(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	_, email := env.DB.User(t, "Wanda Wrong")
	c := env.Client(t)
	wrong := c.Do(http.MethodPost, signInPath, signInBody(email, "not-the-password"))
	unknown := c.Do(http.MethodPost, signInPath, signInBody("nobody@example.test", testenv.Password))
	for _, r := range []*testenv.Response{wrong, unknown} {
		if r.Status != http.StatusUnauthorized || r.Problem(t).Code != "invalid_credentials" {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
		if r.Header.Get("Set-Cookie") != "" {
			t.Errorf("a failed sign-in sets a cookie: %q", r.Header.Get("Set-Cookie"))
		}
	}
	pw, pu := wrong.Problem(t), unknown.Problem(t)
	if pw.TraceID == pu.TraceID {
		t.Errorf("trace ids should differ")
	}
	body := func(r *testenv.Response, traceID string) string {
		return strings.Replace(string(r.Body), traceID, "TRACE", 1)
	}
	if a, b := body(wrong, pw.TraceID), body(unknown, pu.TraceID); a != b {
		t.Errorf("bodies differ:\nwrong password: %s\nunknown email:  %s", a, b)
	}
}

func TestSessionsThatAreNoLongerLiveAreRefused(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	tests := []struct {
		name   string
		update string
	}{
		{"idle expiry passed", "UPDATE sessions SET idle_expires_at = now() - interval '1 second' WHERE user_id = $1"},
		{"absolute expiry passed", "UPDATE sessions SET absolute_expires_at = now() - interval '1 second' WHERE user_id = $1"},
		{"revoked", "UPDATE sessions SET revoked_at = now() WHERE user_id = $1"},
		{"user deleted", "DELETE FROM users WHERE id = $1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, user := env.SignedIn(t, "Eve Expired")
			if r := c.Do(http.MethodGet, mePath, nil); r.Status != http.StatusOK {
				t.Fatalf("before: %d %s", r.Status, r.Body)
			}
			if _, err := env.DB.Pool.Exec(context.Background(), tt.update, user); err != nil {
				t.Fatal(err)
			}
			r := c.Do(http.MethodGet, mePath, nil)
			if r.Status != http.StatusUnauthorized || r.Problem(t).Code != "unauthenticated" {
				t.Fatalf("got %d %s", r.Status, r.Body)
			}
		})
	}
	forged := []struct{ name, token string }{
		{"forged token", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"},
		{"overlong token", strings.Repeat("x", 500)},
		{"empty token", ""},
	}
	for _, tt := range forged {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := env.Client(t)
			c.SetCookie(env.Config, tt.token)
			if r := c.Do(http.MethodGet, mePath, nil); r.Status != http.StatusUnauthorized || r.Problem(t).Code != "unauthenticated" {
				t.Fatalf("got %d %s", r.Status, r.Body)
			}
		})
	}
	t.Run("no cookie", func(t *testing.T) {
		t.Parallel()
		if r := env.Client(t).Do(http.MethodGet, mePath, nil); r.Status != http.StatusUnauthorized {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
	})
}

func TestSignOutNeedsTheSessionsCSRFToken(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	tests := []struct {
		name  string
		token string
	}{
		{"missing token", ""},
		{"wrong token", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, _ := env.SignedIn(t, "Carl CSRF")
			csrf := c.CSRFToken
			c.CSRFToken = ""
			r := c.Do(http.MethodPost, signOutPath, nil, testenv.Header{Name: "X-CSRF-Token", Value: tt.token})
			if r.Status != http.StatusForbidden || r.Problem(t).Code != "csrf_failed" {
				t.Fatalf("got %d %s", r.Status, r.Body)
			}
			if r := c.Do(http.MethodGet, mePath, nil); r.Status != http.StatusOK {
				t.Fatalf("the session should still be live: %d", r.Status)
			}
			c.CSRFToken = csrf
			if r := c.Do(http.MethodPost, signOutPath, nil); r.Status != http.StatusNoContent {
				t.Fatalf("with the token: %d %s", r.Status, r.Body)
			}
		})
	}
}

func TestCrossOriginSignInIsRefusedUnlessTheOriginIsTrusted(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Env: map[string]string{"ALLOWED_ORIGINS": "https://app.example"}})
	_, email := env.DB.User(t, "Lena Login")
	tests := []struct {
		name   string
		origin string
		site   string
		status int
	}{
		{"a cross-site browser request is refused (login CSRF)", "https://evil.example", "cross-site", http.StatusForbidden},
		{"an Origin that is not the host is refused", "https://evil.example", "", http.StatusForbidden},
		{"a trusted origin passes", "https://app.example", "cross-site", http.StatusOK},
		{"a same-origin request passes", "", "same-origin", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := env.Client(t)
			r := c.Do(http.MethodPost, signInPath, signInBody(email, testenv.Password),
				testenv.Header{Name: "Origin", Value: tt.origin}, testenv.Header{Name: "Sec-Fetch-Site", Value: tt.site})
			if r.Status != tt.status {
				t.Fatalf("got %d %s", r.Status, r.Body)
			}
			if r.Status == http.StatusForbidden && r.Problem(t).Code != "csrf_failed" {
				t.Errorf("code %s", r.Body)
			}
		})
	}
}

func TestEverySignInStartsANewSession(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	_, email := env.DB.User(t, "Nina New")
	first, second := env.Client(t), env.Client(t)
	r1, r2 := first.SignIn(email, testenv.Password), second.SignIn(email, testenv.Password)
	if setCookie(t, r1).Value == setCookie(t, r2).Value || first.CSRFToken == second.CSRFToken {
		t.Fatal("two sign-ins share a token")
	}
	var n int
	if err := env.DB.Pool.QueryRow(context.Background(), "SELECT count(DISTINCT token_hash) FROM sessions").Scan(&n); err != nil || n != 2 {
		t.Fatalf("sessions = %d (%v), want 2", n, err)
	}
	// A session planted before sign-in (session fixation) is not reused.
	fixed := env.Client(t)
	fixed.SetCookie(env.Config, "planted-token-planted-token-planted-token-x")
	r3 := fixed.SignIn(email, testenv.Password)
	if setCookie(t, r3).Value == "planted-token-planted-token-planted-token-x" {
		t.Fatal("sign-in kept the planted token")
	}
}

func TestSessionTokenIsStoredOnlyAsItsHash(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	_, email := env.DB.User(t, "Hal Hash")
	r := env.Client(t).SignIn(email, testenv.Password)
	token := setCookie(t, r).Value
	var row string
	var hash []byte
	err := env.DB.Pool.QueryRow(context.Background(), "SELECT row_to_json(s)::text, token_hash FROM sessions s").Scan(&row, &hash)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(row, token) {
		t.Fatalf("the sessions row holds the cookie value: %s", row)
	}
	if sum := sha256.Sum256([]byte(token)); !bytes.Equal(hash, sum[:]) {
		t.Fatalf("token_hash is not sha256(token)")
	}
}

func TestFailedSignInsAreThrottled(t *testing.T) {
	t.Parallel()
	retryAfter := func(t *testing.T, r *testenv.Response) {
		t.Helper()
		if r.Status != http.StatusTooManyRequests || r.Problem(t).Code != "too_many_attempts" {
			t.Fatalf("got %d %s, want 429 too_many_attempts", r.Status, r.Body)
		}
		s, err := strconv.Atoi(r.Header.Get("Retry-After"))
		if err != nil || s < 1 || s > 900 {
			t.Fatalf("Retry-After %q, want 1..900 seconds", r.Header.Get("Retry-After"))
		}
	}
	t.Run("the sixth attempt for one email is refused, even with the right password", func(t *testing.T) {
		t.Parallel()
		env := testenv.New(t)
		_, email := env.DB.User(t, "Tom Throttled")
		c := env.Client(t)
		for i := range 5 {
			if r := c.SignIn(email, "wrong-password"); r.Status != http.StatusUnauthorized {
				t.Fatalf("failure %d: %d %s", i+1, r.Status, r.Body)
			}
		}
		retryAfter(t, c.SignIn(strings.ToUpper(email), testenv.Password))
		// Another email from the same address is not affected.
		_, other := env.DB.User(t, "Olive Other")
		if r := c.SignIn(other, testenv.Password); r.Status != http.StatusOK {
			t.Fatalf("another email: %d %s", r.Status, r.Body)
		}
		// When the window has ended, the email may try again and counts from 1.
		if _, err := env.DB.Pool.Exec(context.Background(), "UPDATE sign_in_failures SET window_start = now() - interval '15 minutes'"); err != nil {
			t.Fatal(err)
		}
		if r := c.SignIn(email, "wrong-password"); r.Status != http.StatusUnauthorized {
			t.Fatalf("after the window: %d %s", r.Status, r.Body)
		}
		var failures int
		if err := env.DB.Pool.QueryRow(context.Background(), "SELECT failures FROM sign_in_failures WHERE subject = $1", "email:"+email).Scan(&failures); err != nil || failures != 1 {
			t.Fatalf("failures after a new window = %d (%v), want 1", failures, err)
		}
	})
	t.Run("a successful sign-in resets the email's count", func(t *testing.T) {
		t.Parallel()
		env := testenv.New(t)
		_, email := env.DB.User(t, "Rory Reset")
		c := env.Client(t)
		for range 4 {
			c.SignIn(email, "wrong-password")
		}
		if r := c.SignIn(email, testenv.Password); r.Status != http.StatusOK {
			t.Fatalf("sign-in: %d %s", r.Status, r.Body)
		}
		for i := range 5 {
			if r := c.SignIn(email, "wrong-password"); r.Status != http.StatusUnauthorized {
				t.Fatalf("failure %d after the reset: %d %s", i+1, r.Status, r.Body)
			}
		}
	})
	t.Run("the twenty-first attempt from one address is refused", func(t *testing.T) {
		t.Parallel()
		env := testenv.New(t)
		c := env.Client(t)
		for i := range 20 {
			email := "guess" + strconv.Itoa(i%4) + "@example.test"
			if r := c.SignIn(email, "guess"); r.Status != http.StatusUnauthorized {
				t.Fatalf("failure %d: %d %s", i+1, r.Status, r.Body)
			}
		}
		_, email := env.DB.User(t, "Ivy Innocent")
		retryAfter(t, c.SignIn(email, testenv.Password))
	})
}

func TestAuthEndpointsAnswerEveryDeclaredStatus(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	tests := []struct {
		name    string
		body    any
		headers []testenv.Header
		status  int
		code    string
	}{
		{"malformed JSON is 400", `{"email":`, nil, 400, "malformed_json"},
		{"a form body is 415", "email=a&password=b", []testenv.Header{{Name: "Content-Type", Value: "application/x-www-form-urlencoded"}}, 415, "unsupported_media_type"},
		{"a missing password is 422", `{"email":"ada@example.test"}`, nil, 422, "invalid_request"},
		{"an unknown field is 422", `{"email":"ada@example.test","password":"x","remember":true}`, nil, 422, "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := env.Client(t).Do(http.MethodPost, signInPath, tt.body, tt.headers...)
			if r.Status != tt.status || r.Problem(t).Code != tt.code {
				t.Fatalf("got %d %s, want %d %s", r.Status, r.Body, tt.status, tt.code)
			}
		})
	}
	t.Run("sign-out without a session is 401", func(t *testing.T) {
		t.Parallel()
		if r := env.Client(t).Do(http.MethodPost, signOutPath, nil); r.Status != http.StatusUnauthorized || r.Problem(t).Code != "unauthenticated" {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
	})
}

// statuses counts the answers of n parallel calls of do.
func statuses(n int, do func(i int) int) map[int]int {
	var mu sync.Mutex
	got := map[int]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			status := do(i)
			mu.Lock()
			got[status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	return got
}

func TestNoBurstOfParallelSignInsGetsMorePasswordChecksThanTheLimit(t *testing.T) {
	t.Parallel()
	t.Run("twelve wrong passwords at once for one email: five checked, seven refused", func(t *testing.T) {
		t.Parallel()
		env := testenv.New(t)
		_, email := env.DB.User(t, "Bart Burst")
		got := statuses(12, func(int) int { return env.Client(t).SignIn(email, "wrong-password").Status })
		if got[http.StatusUnauthorized] != 5 || got[http.StatusTooManyRequests] != 7 {
			t.Fatalf("answers %v, want 5 × 401 and 7 × 429", got)
		}
	})
	t.Run("thirty wrong passwords at once from one address: twenty checked", func(t *testing.T) {
		t.Parallel()
		env := testenv.New(t)
		got := statuses(30, func(i int) int {
			return env.Client(t).SignIn(fmt.Sprintf("burst%d@example.test", i), "wrong-password").Status
		})
		if got[http.StatusUnauthorized] != 20 || got[http.StatusTooManyRequests] != 10 {
			t.Fatalf("answers %v, want 20 × 401 and 10 × 429", got)
		}
	})
	t.Run("a success takes its attempt back from the address", func(t *testing.T) {
		t.Parallel()
		env := testenv.New(t)
		_, email := env.DB.User(t, "Sam Success")
		c := env.Client(t)
		for range 3 {
			if r := c.SignIn(email, testenv.Password); r.Status != http.StatusOK {
				t.Fatalf("sign-in: %d %s", r.Status, r.Body)
			}
		}
		var rows int
		if err := env.DB.Pool.QueryRow(context.Background(), "SELECT count(*) FROM sign_in_failures WHERE failures > 0").Scan(&rows); err != nil || rows != 0 {
			t.Fatalf("%d counters above zero after three successes (%v)", rows, err)
		}
	})
}

func TestEmailsMatchIgnoringTheCaseOfASCIILettersOnly(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	_, email := env.DB.User(t, "Vic Viewer") // vic.viewer-…@example.test
	lookalike := strings.Replace(email, "i", "\u0130", 1)
	tests := []struct {
		name   string
		email  string
		status int
	}{
		{"the stored form", email, http.StatusOK},
		{"ASCII letters in upper case", strings.ToUpper(email), http.StatusOK},
		{"a dotted capital I (U+0130) is another email", lookalike, http.StatusUnauthorized},
		{"a Kelvin sign (U+212A) is not K", strings.Replace(strings.ToUpper(email), "E", "\u212A", 1), http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := env.Client(t).SignIn(tt.email, testenv.Password)
			if r.Status != tt.status {
				t.Fatalf("%q: %d %s, want %d", tt.email, r.Status, r.Body, tt.status)
			}
			if r.Status == http.StatusOK {
				var s sessionBody
				r.JSON(t, &s)
				if s.User.Email != email {
					t.Fatalf("signed in as %q", s.User.Email)
				}
			}
		})
	}
	t.Run("the throttle counts by the same form", func(t *testing.T) {
		c := env.Client(t)
		for range 5 {
			c.SignIn(lookalike, "wrong-password")
		}
		// The lookalike's failures are not the user's.
		if r := c.SignIn(strings.ToUpper(email), testenv.Password); r.Status != http.StatusOK {
			t.Fatalf("the user after a lookalike's failures: %d %s", r.Status, r.Body)
		}
		for range 5 {
			c.SignIn(strings.ToUpper(email), "wrong-password")
		}
		if r := c.SignIn(email, testenv.Password); r.Status != http.StatusTooManyRequests {
			t.Fatalf("after five failures in upper case: %d %s", r.Status, r.Body)
		}
	})
	t.Run("the database stores only the normalised form", func(t *testing.T) {
		_, err := env.DB.Pool.Exec(context.Background(), "INSERT INTO users (email, name, password_hash) VALUES ('Mixed@Example.test', 'M', 'x')")
		if err == nil || !strings.Contains(err.Error(), "users_email_normalised") {
			t.Fatalf("a mixed-case email was stored: %v", err)
		}
	})
}

func TestThePerAddressThrottleCountsTheClientNamedByTrustedProxiesOnly(t *testing.T) {
	t.Parallel()
	forwardedFor := func(ip string) testenv.Header { return testenv.Header{Name: "X-Forwarded-For", Value: ip} }
	// fail makes 20 failed sign-ins, the address limit, each forwarded for
	// the address xff returns.
	fail := func(t *testing.T, env *testenv.Env, xff func(i int) string) {
		t.Helper()
		for i := range 20 {
			r := env.Client(t).Do(http.MethodPost, signInPath, signInBody(fmt.Sprintf("guess%d@example.test", i%4), "guess"), forwardedFor(xff(i)))
			if r.Status != http.StatusUnauthorized {
				t.Fatalf("failure %d: %d %s", i+1, r.Status, r.Body)
			}
		}
	}
	signIn := func(t *testing.T, env *testenv.Env, xff string) int {
		t.Helper()
		_, email := env.DB.User(t, "Bea Behind")
		return env.Client(t).Do(http.MethodPost, signInPath, signInBody(email, testenv.Password), forwardedFor(xff)).Status
	}
	t.Run("behind a trusted proxy each client has its own count", func(t *testing.T) {
		t.Parallel()
		// The test's connections come from 127.0.0.1: the proxy.
		env := testenv.New(t, testenv.Options{Env: map[string]string{"TRUSTED_PROXIES": "127.0.0.1/32"}})
		fail(t, env, func(int) string { return "203.0.113.7" })
		if got := signIn(t, env, "203.0.113.7"); got != http.StatusTooManyRequests {
			t.Fatalf("the client that failed: %d, want 429", got)
		}
		if got := signIn(t, env, "203.0.113.8"); got != http.StatusOK {
			t.Fatalf("another client behind the same proxy: %d, want 200", got)
		}
		// A client cannot escape its count by naming another address first.
		if got := signIn(t, env, "198.51.100.99, 203.0.113.7"); got != http.StatusTooManyRequests {
			t.Fatalf("a spoofed hop before the client: %d, want 429", got)
		}
	})
	t.Run("without trusted proxies X-Forwarded-For is ignored", func(t *testing.T) {
		t.Parallel()
		env := testenv.New(t)
		fail(t, env, func(i int) string { return fmt.Sprintf("203.0.113.%d", i) })
		if got := signIn(t, env, "198.51.100.1"); got != http.StatusTooManyRequests {
			t.Fatalf("a new forwarded address from the same peer: %d, want 429", got)
		}
	})
}

func TestAnOriginMustBeTheServersOwnOrTrustedWhateverTheHostSays(t *testing.T) {
	t.Parallel()
	// PUBLIC_BASE_URL is http://api.test; the test server listens elsewhere.
	env := testenv.New(t, testenv.Options{Env: map[string]string{"ALLOWED_ORIGINS": "https://app.example"}})
	_, email := env.DB.User(t, "Ossie Origin")
	host := strings.TrimPrefix(env.Server.URL, "http://")
	tests := []struct {
		name   string
		origin string
		host   string
		status int
	}{
		{"the request's own Host as Origin is not enough", env.Server.URL, "", http.StatusForbidden},
		{"a Host made to match a foreign Origin is not enough", "http://evil.example", "evil.example", http.StatusForbidden},
		{"the server's own origin (PUBLIC_BASE_URL)", "http://api.test", "", http.StatusOK},
		{"a trusted origin", "https://app.example", "", http.StatusOK},
		{"no Origin at all (no browser)", "", "", http.StatusOK},
		{"the opaque origin null", "null", "", http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, env.Server.URL+signInPath, strings.NewReader(`{"email":"`+email+`","password":"`+testenv.Password+`"}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			req.Host = host
			if tt.host != "" {
				req.Host = tt.host
			}
			r := send(t, req)
			if r.Status != tt.status {
				t.Fatalf("got %d %s, want %d", r.Status, r.Body, tt.status)
			}
			if r.Status == http.StatusForbidden && r.Problem(t).Code != "csrf_failed" {
				t.Fatalf("code: %s", r.Body)
			}
		})
	}
}
