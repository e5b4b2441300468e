package httpapi_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/testenv"
)

// seedTokens gives user n live tokens straight in the database.
func seedTokens(t *testing.T, env *testenv.Env, user uuid.UUID, n int) {
	t.Helper()
	if _, err := env.DB.Pool.Exec(context.Background(), `
		INSERT INTO access_tokens (user_id, name, scopes, token_hash, expires_at)
		SELECT $1, 'seeded ' || g, '{creatives:read}', decode(md5(random()::text || g::text), 'hex'), now() + interval '1 day'
		FROM generate_series(1, $2) g`, user, n); err != nil {
		t.Fatal(err)
	}
}

// TestAUserHoldsAtMost50LiveTokensAlsoUnderConcurrentCreates: each token
// is a principal with a rate budget of its own, so a user holds at most 50
// that still work (docs/tokens.md): ten creates at once with 45 held make
// exactly 5, the others are 409 too_many_tokens; a revoked or expired
// token makes room again.
func TestAUserHoldsAtMost50LiveTokensAlsoUnderConcurrentCreates(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	user, _ := env.DB.User(t, "Tilly Tokens")
	seedTokens(t, env, user, 45)
	sessions := make([]*testenv.Client, 10)
	for i := range sessions {
		sessions[i] = env.SessionFor(t, user)
	}
	outcomes := make([]string, len(sessions))
	var wg sync.WaitGroup
	for i, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := s.Do(http.MethodPost, "/api/v1/me/tokens", map[string]any{"name": "burst", "scopes": []string{"creatives:read"}})
			outcomes[i] = outcome(t, r)
		}()
	}
	wg.Wait()
	counts := map[string]int{}
	for _, o := range outcomes {
		counts[o]++
	}
	if counts["201"] != 5 || counts["409 too_many_tokens"] != 5 {
		t.Fatalf("ten creates at once with 45 held: %v, want 5 × 201 and 5 × 409 too_many_tokens", counts)
	}
	var live int
	if err := env.DB.Pool.QueryRow(context.Background(),
		"SELECT count(*) FROM access_tokens WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > now()", user).Scan(&live); err != nil || live != 50 {
		t.Fatalf("%d live tokens (%v), want 50", live, err)
	}
	s := sessions[0]
	again := func() string {
		return outcome(t, s.Do(http.MethodPost, "/api/v1/me/tokens", map[string]any{"name": "one more", "scopes": []string{"creatives:read"}}))
	}
	if got := again(); got != "409 too_many_tokens" {
		t.Fatalf("the 51st: %s", got)
	}
	if _, err := env.DB.Pool.Exec(context.Background(),
		"UPDATE access_tokens SET expires_at = now() WHERE id = (SELECT id FROM access_tokens WHERE user_id = $1 AND name = 'seeded 1')", user); err != nil {
		t.Fatal(err)
	}
	if got := again(); got != "201" {
		t.Fatalf("after one expired: %s, want 201", got)
	}
	var page api.AccessTokenList
	s.Do(http.MethodGet, "/api/v1/me/tokens?limit=1", nil).JSON(t, &page)
	if r := s.Do(http.MethodDelete, "/api/v1/me/tokens/"+page.Items[0].Id.String(), nil); r.Status != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	if got := again(); got != "201" {
		t.Fatalf("after one revoked: %s, want 201", got)
	}
	// Another user's tokens are their own count.
	other, _ := env.DB.User(t, "Olga Other")
	if got := outcome(t, env.SessionFor(t, other).Do(http.MethodPost, "/api/v1/me/tokens", map[string]any{"name": "x", "scopes": []string{"creatives:read"}})); got != "201" {
		t.Errorf("another user: %s", got)
	}
}

// TestAccessTokensAreACursorList: GET /me/tokens pages as every list does
// (limit, cursor, nextCursor), newest first, each token once; a cursor it
// did not make is 422.
func TestAccessTokensAreACursorList(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	user, _ := env.DB.User(t, "Paula Pages")
	seedTokens(t, env, user, 25)
	s := env.SessionFor(t, user)
	seen := map[uuid.UUID]bool{}
	var pages []int
	path := "/api/v1/me/tokens?limit=10"
	for range 5 {
		r := s.Do(http.MethodGet, path, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", path, r.Status, r.Body)
		}
		var p api.AccessTokenList
		r.JSON(t, &p)
		pages = append(pages, len(p.Items))
		for _, tk := range p.Items {
			if seen[tk.Id] {
				t.Errorf("token %s on two pages", tk.Id)
			}
			seen[tk.Id] = true
		}
		next, err := p.NextCursor.Get()
		if err != nil {
			break
		}
		path = "/api/v1/me/tokens?limit=10&cursor=" + next
	}
	if len(seen) != 25 || len(pages) != 3 || pages[0] != 10 || pages[2] != 5 {
		t.Errorf("pages %v, %d tokens seen, want 10, 10, 5 and all 25", pages, len(seen))
	}
	var def api.AccessTokenList
	s.Do(http.MethodGet, "/api/v1/me/tokens", nil).JSON(t, &def)
	if len(def.Items) != 20 || def.NextCursor.IsNull() {
		t.Errorf("the default page: %d tokens, nextCursor null %v", len(def.Items), def.NextCursor.IsNull())
	}
	if got := outcome(t, s.Do(http.MethodGet, "/api/v1/me/tokens?cursor=garbage", nil)); got != "422 invalid_request" {
		t.Errorf("a garbage cursor: %s", got)
	}
}
