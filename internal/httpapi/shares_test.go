package httpapi_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/review"
	"creativeapi/internal/testenv"
)

func sharesURL(org uuid.UUID) string { return "/api/v1/organizations/" + org.String() + "/shares" }

// createShare makes a share as who and returns the answer.
func (d *reviewDesk) createShare(t *testing.T, who string, body map[string]any, headers ...testenv.Header) *testenv.Response {
	t.Helper()
	return d.clients[who].Do(http.MethodPost, sharesURL(d.org), body, headers...)
}

// shareOf is a comment share of ids, which authors make too (a decide
// share is an admin's).
func shareOf(ids ...uuid.UUID) map[string]any {
	return map[string]any{"creativeIds": ids, "permission": "comment"}
}

func TestAShareTokenIsShownOnceAndStoredOnlyAsItsHash(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	c := d.creative(t, creativeSpec{versions: 1})
	r := d.createShare(t, "admin", map[string]any{"creativeIds": []uuid.UUID{c}, "permission": "comment",
		"password": "correct horse", "invite": []map[string]string{{"email": "Legal@Brand.test", "name": "Legal"}}}, key("share-1"))
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var sh api.Share
	r.JSON(t, &sh)
	token, err := sh.Token.Get()
	if err != nil {
		t.Fatalf("no token in the create answer: %s", r.Body)
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) != 32 {
		t.Fatalf("token %q: %d bytes (%v), want 32 random bytes in base64url", token, len(raw), err)
	}
	if url, _ := sh.Url.Get(); !strings.HasSuffix(url, "/share/"+token) {
		t.Errorf("url %q does not end in /share/{token}", url)
	}
	if got := r.Header.Get("Location"); got != sharesURL(d.org)+"/"+sh.Id.String() {
		t.Errorf("Location %q", got)
	}
	if !sh.HasPassword || sh.Permission != api.SharePermissionComment || sh.CreatedBy.Id != d.users["admin"] ||
		len(sh.Invitations) != 1 || sh.Invitations[0].Email != "legal@brand.test" {
		t.Errorf("share %+v", sh)
	}
	if days := time.Until(sh.ExpiresAt).Hours() / 24; days < 13.9 || days > 14 {
		t.Errorf("expiresAt %s is not 14 days ahead", sh.ExpiresAt)
	}

	// The same key replays the same share with its token to its creator.
	again := d.createShare(t, "admin", map[string]any{"creativeIds": []uuid.UUID{c}, "permission": "comment",
		"password": "correct horse", "invite": []map[string]string{{"email": "Legal@Brand.test", "name": "Legal"}}}, key("share-1"))
	if again.Status != http.StatusCreated || !bytes.Equal(again.Body, r.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %d %s", again.Status, again.Body)
	}

	// Reads never show it.
	for _, path := range []string{sharesURL(d.org) + "/" + sh.Id.String(), sharesURL(d.org)} {
		got := d.clients["admin"].Do(http.MethodGet, path, nil)
		if got.Status != http.StatusOK || bytes.Contains(got.Body, []byte(token)) || !bytes.Contains(got.Body, []byte(`"token":null`)) {
			t.Errorf("GET %s shows the token or no null token: %d %s", path, got.Status, got.Body)
		}
	}

	// The row holds its SHA-256 and an argon2id hash of the password, not
	// the token or the password.
	var hash []byte
	var password string
	if err := d.env.DB.Pool.QueryRow(context.Background(), "SELECT token_hash, password_hash FROM shares WHERE id = $1", sh.Id).
		Scan(&hash, &password); err != nil {
		t.Fatal(err)
	}
	if want := sha256.Sum256([]byte(token)); !bytes.Equal(hash, want[:]) {
		t.Errorf("token_hash is not the token's SHA-256")
	}
	if !strings.HasPrefix(password, "$argon2id$") {
		t.Errorf("password stored as %q, want an argon2id hash", password)
	}
}

func TestSharesAreMadeByAdminsAndByAuthorsOfTheirOwnCreatives(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	mine := d.creative(t, creativeSpec{})
	admins := d.creative(t, creativeSpec{author: "admin"})
	tests := []struct {
		who    string
		ids    []uuid.UUID
		status int
		code   string
	}{
		{"admin", []uuid.UUID{mine, admins}, http.StatusCreated, ""},
		{"author", []uuid.UUID{mine}, http.StatusCreated, ""},
		{"author", []uuid.UUID{mine, admins}, http.StatusForbidden, "action_forbidden"},
		{"reviewer", []uuid.UUID{mine}, http.StatusForbidden, "action_forbidden"},
		{"viewer", []uuid.UUID{mine}, http.StatusForbidden, "action_forbidden"},
		{"outsider", []uuid.UUID{mine}, http.StatusNotFound, "not_found"},
	}
	for _, tt := range tests {
		r := d.createShare(t, tt.who, shareOf(tt.ids...))
		if r.Status != tt.status || tt.code != "" && r.Problem(t).Code != tt.code {
			t.Errorf("%s sharing %d creatives: %d %s, want %d %s", tt.who, len(tt.ids), r.Status, r.Body, tt.status, tt.code)
		}
	}
}

func TestACreativeOfAnotherWorkspaceAndAMissingOneAreTheSame422(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	mine := d.creative(t, creativeSpec{})
	other := d.env.DB.Org(t, "Globex Shares")
	theirs := d.env.DB.DraftCreative(t, other, d.users["outsider"])
	var bodies [][]byte
	for _, id := range []uuid.UUID{theirs, uuid.New()} {
		r := d.createShare(t, "admin", shareOf(mine, id))
		p := r.Problem(t)
		if r.Status != http.StatusUnprocessableEntity || len(p.FieldErrors) != 1 || p.FieldErrors[0].Field != "creativeIds[1]" {
			t.Fatalf("%d %s, want 422 on creativeIds[1]", r.Status, r.Body)
		}
		bodies = append(bodies, []byte(p.Detail+string(p.FieldErrors[0].Code)+p.FieldErrors[0].Message))
	}
	if !bytes.Equal(bodies[0], bodies[1]) {
		t.Errorf("the answers differ: %s / %s", bodies[0], bodies[1])
	}
}

func TestAnArchivedCreativeCannotBeShared(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	c := d.creative(t, creativeSpec{status: review.StatusArchived})
	r := d.createShare(t, "admin", shareOf(c))
	if r.Status != http.StatusConflict || r.Problem(t).Code != "invalid_transition" {
		t.Errorf("%d %s, want 409 invalid_transition", r.Status, r.Body)
	}
}

func TestAShareExpiresInTheFutureAtMost90DaysAhead(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	c := d.creative(t, creativeSpec{})
	for _, at := range []time.Time{time.Now().Add(-time.Minute), time.Now().Add(91 * 24 * time.Hour)} {
		body := shareOf(c)
		body["expiresAt"] = at.UTC().Format(time.RFC3339)
		r := d.createShare(t, "admin", body)
		if p := r.Problem(t); r.Status != http.StatusUnprocessableEntity || p.FieldErrors[0].Field != "expiresAt" {
			t.Errorf("expiresAt %s: %d %s, want 422 on expiresAt", at, r.Status, r.Body)
		}
	}
	body := shareOf(c)
	body["expiresAt"] = time.Now().Add(89 * 24 * time.Hour).UTC().Format(time.RFC3339)
	if r := d.createShare(t, "admin", body); r.Status != http.StatusCreated {
		t.Errorf("89 days: %d %s", r.Status, r.Body)
	}
}

func TestShareLimitIs50CreativesAnd100LiveSharesPerOrganization(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	c := d.creative(t, creativeSpec{})
	t.Run("51 creatives", func(t *testing.T) {
		ids := []uuid.UUID{c}
		for len(ids) < 51 {
			ids = append(ids, uuid.New())
		}
		r := d.createShare(t, "admin", shareOf(ids...))
		if r.Status != http.StatusConflict || r.Problem(t).Code != "share_limit" {
			t.Errorf("%d %s, want 409 share_limit", r.Status, r.Body)
		}
	})
	t.Run("101st live share", func(t *testing.T) {
		// 99 live shares, one expired and one revoked (which do not count).
		if _, err := d.env.DB.Pool.Exec(context.Background(), `
			INSERT INTO shares (organization_id, token_hash, permission, expires_at, created_by, revoked_at)
			SELECT $1, sha256(i::text::bytea), 'view',
			       CASE WHEN i = 100 THEN now() - interval '1 second' ELSE now() + interval '1 day' END, $2,
			       CASE WHEN i = 101 THEN now() END
			FROM generate_series(1, 101) AS i`, d.org, d.users["admin"]); err != nil {
			t.Fatal(err)
		}
		if r := d.createShare(t, "admin", shareOf(c)); r.Status != http.StatusCreated {
			t.Fatalf("100th live share: %d %s", r.Status, r.Body)
		}
		r := d.createShare(t, "admin", shareOf(c))
		if r.Status != http.StatusConflict || r.Problem(t).Code != "share_limit" {
			t.Errorf("101st live share: %d %s, want 409 share_limit", r.Status, r.Body)
		}
	})
}

func TestARevokedShareStaysReadableAndAuthorsSeeOnlyTheirOwn(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	var byAdmin, byAuthor api.Share
	d.createShare(t, "admin", shareOf(d.creative(t, creativeSpec{}))).JSON(t, &byAdmin)
	d.createShare(t, "author", shareOf(d.creative(t, creativeSpec{}))).JSON(t, &byAuthor)

	var list api.ShareList
	d.clients["author"].Do(http.MethodGet, sharesURL(d.org), nil).JSON(t, &list)
	if len(list.Items) != 1 || list.Items[0].Id != byAuthor.Id {
		t.Errorf("the author's list: %+v, want only their share", list.Items)
	}
	d.clients["admin"].Do(http.MethodGet, sharesURL(d.org)+"?limit=1", nil).JSON(t, &list)
	next, err := list.NextCursor.Get()
	if len(list.Items) != 1 || list.Items[0].Id != byAuthor.Id || err != nil {
		t.Fatalf("the admin's first page: %+v", list)
	}
	d.clients["admin"].Do(http.MethodGet, sharesURL(d.org)+"?limit=1&cursor="+next, nil).JSON(t, &list)
	if len(list.Items) != 1 || list.Items[0].Id != byAdmin.Id || !list.NextCursor.IsNull() {
		t.Errorf("the admin's second page: %+v", list)
	}

	adminShare := sharesURL(d.org) + "/" + byAdmin.Id.String()
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		if r := d.clients["author"].Do(m, adminShare, nil); r.Status != http.StatusNotFound {
			t.Errorf("%s of the admin's share by the author: %d, want 404", m, r.Status)
		}
	}
	for range 2 { // revoking again answers the same
		if r := d.clients["admin"].Do(http.MethodDelete, adminShare, nil); r.Status != http.StatusNoContent {
			t.Fatalf("revoke: %d %s", r.Status, r.Body)
		}
	}
	var got api.Share
	d.clients["admin"].Do(http.MethodGet, adminShare, nil).JSON(t, &got)
	if got.RevokedAt.IsNull() {
		t.Errorf("revokedAt is null after the revocation")
	}
}

func TestAShareIdThatIsNoUUIDAndACursorOfAnotherListAre422(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	for _, call := range []struct{ method, path, field string }{
		{http.MethodGet, sharesURL(d.org) + "/not-a-uuid", "shareId"},
		{http.MethodDelete, sharesURL(d.org) + "/not-a-uuid", "shareId"},
		{http.MethodGet, sharesURL(d.org) + "?cursor=" + base64.RawURLEncoding.EncodeToString([]byte("c1.5")), "cursor"},
	} {
		r := d.clients["admin"].Do(call.method, call.path, nil)
		if p := r.Problem(t); r.Status != http.StatusUnprocessableEntity || len(p.FieldErrors) != 1 || p.FieldErrors[0].Field != call.field {
			t.Errorf("%s %s: %d %s, want 422 on %s", call.method, call.path, r.Status, r.Body, call.field)
		}
	}
}

func TestMakingAndRevokingAShareWriteTheirEventsWithoutTheToken(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	c := d.creative(t, creativeSpec{versions: 1})
	r := d.createShare(t, "author", map[string]any{"creativeIds": []uuid.UUID{c}, "permission": "view",
		"invite": []map[string]string{{"email": "legal@brand.test"}}}, key("share-events"))
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var sh api.Share
	r.JSON(t, &sh)
	token, _ := sh.Token.Get()
	path := sharesURL(d.org) + "/" + sh.Id.String()
	for range 2 { // revoking twice is one revocation
		if got := d.clients["author"].Do(http.MethodDelete, path, nil); got.Status != http.StatusNoContent {
			t.Fatalf("revoke: %d %s", got.Status, got.Body)
		}
	}
	read := d.clients["author"].Do(http.MethodGet, path, nil)
	var evs []outboxRow
	for _, e := range outbox(t, d) {
		if strings.HasPrefix(e.Type, "share.") {
			evs = append(evs, e)
		}
	}
	if len(evs) != 2 || evs[0].Type != "share.created" || evs[1].Type != "share.revoked" {
		t.Fatalf("share events %+v; want share.created, share.revoked", evs)
	}
	// The created event is the answer without its token and url; the
	// revoked one the share as read after.
	var created map[string]any
	r.JSON(t, &created)
	created["token"], created["url"] = nil, nil
	for i, want := range []map[string]any{created, nil} {
		if want == nil {
			read.JSON(t, &want)
		}
		ev := evs[i]
		gotData, _ := json.Marshal(ev.Payload["data"])
		wantData, _ := json.Marshal(want)
		if ev.Org == nil || *ev.Org != d.org || string(gotData) != string(wantData) {
			t.Errorf("%s of %v:\n event:  %s\n want:   %s", ev.Type, ev.Org, gotData, wantData)
		}
		if bytes.Contains(gotData, []byte(token)) {
			t.Errorf("%s holds the token", ev.Type)
		}
	}
	var after map[string]any
	read.JSON(t, &after)
	if evs[0].Payload["timestamp"] != created["createdAt"] || evs[1].Payload["timestamp"] != after["revokedAt"] {
		t.Errorf("timestamps %v, %v", evs[0].Payload["timestamp"], evs[1].Payload["timestamp"])
	}
}

// TestOnlyAnAdminMakesADecideShare: an author shares the creatives they
// wrote for view or comment; a decide share, which lets its guests
// approve, is 403 to them and made by an admin (docs/review.md).
func TestOnlyAnAdminMakesADecideShare(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	mine := d.creative(t, creativeSpec{})
	for _, tt := range []struct {
		who, permission string
		status          int
	}{
		{"author", "view", http.StatusCreated},
		{"author", "comment", http.StatusCreated},
		{"author", "decide", http.StatusForbidden},
		{"admin", "decide", http.StatusCreated},
	} {
		r := d.createShare(t, tt.who, map[string]any{"creativeIds": []uuid.UUID{mine}, "permission": tt.permission,
			"invite": []map[string]string{{"email": "legal@brand.test"}}})
		if r.Status != tt.status || r.Status == http.StatusForbidden && r.Problem(t).Code != "action_forbidden" {
			t.Errorf("%s sharing for %s: %d %s, want %d", tt.who, tt.permission, r.Status, r.Body, tt.status)
		}
	}
	var n int
	if err := d.env.DB.Pool.QueryRow(context.Background(),
		"SELECT count(*) FROM shares WHERE permission = 'decide' AND created_by = $1", d.users["author"]).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the author's decide shares: %d %v", n, err)
	}
}
