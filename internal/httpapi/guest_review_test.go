package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/review"
	"creativeapi/internal/testenv"
)

const guestCreativesPath = "/api/v1/guest/creatives"

// guestOn opens a guest session as email on a share of the desk's
// creatives with permission, made by the admin, on a new client.
func (d *reviewDesk) guestOn(t *testing.T, permission, email string, creatives ...uuid.UUID) (*testenv.Client, uuid.UUID) {
	t.Helper()
	share, token := d.env.DB.Share(t, d.org, d.users["admin"], permission, creatives...)
	c := d.env.Client(t)
	if r := c.OpenShare(token, email); r.Status != http.StatusCreated {
		t.Fatalf("guest session: %d %s", r.Status, r.Body)
	}
	return c, share
}

func TestAGuestSessionOpensTheGuestPathsAndNothingElse(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{versions: 1})
	guest, _ := d.guestOn(t, "decide", "legal@brand.test", id)
	for _, path := range []string{"/api/v1/me", creativesURL(d.org), creativesURL(d.org) + "/" + id.String()} {
		if r := guest.Do(http.MethodGet, path, nil); r.Status != http.StatusUnauthorized || r.Problem(t).Code != "unauthenticated" {
			t.Errorf("a guest session on %s: %d %s", path, r.Status, r.Body)
		}
	}
	if r := guest.Do(http.MethodGet, guestCreativesPath, nil); r.Status != http.StatusOK {
		t.Errorf("a guest session on the guest list: %d %s", r.Status, r.Body)
	}
	// A member's session, even with a guest cookie of another member's
	// making, opens no guest path by itself; nor does a token.
	r := d.clients["admin"].Do(http.MethodPost, "/api/v1/me/tokens", map[string]any{"name": "guest paths", "scopes": []string{"creatives:read"}})
	var token api.CreatedAccessToken
	r.JSON(t, &token)
	for name, call := range map[string]func() *testenv.Response{
		"a user session": func() *testenv.Response {
			return d.clients["admin"].Do(http.MethodGet, guestCreativesPath+"/"+id.String(), nil)
		},
		"a token": func() *testenv.Response {
			return d.env.Client(t).Do(http.MethodGet, guestCreativesPath+"/"+id.String(), nil, bearer(token.Token))
		},
		"nothing": func() *testenv.Response {
			return d.env.Client(t).Do(http.MethodGet, guestCreativesPath+"/"+id.String(), nil)
		},
	} {
		want := "unauthenticated"
		if name == "a token" {
			want = "invalid_token" // as on every operation that takes none
		}
		if r := call(); r.Status != http.StatusUnauthorized || r.Problem(t).Code != want {
			t.Errorf("%s on a guest path: %d %s", name, r.Status, r.Body)
		}
	}
	// A browser holding both sessions is each on its own paths.
	both := d.env.SessionFor(t, d.users["admin"])
	both.CopyCookies(guest)
	for _, path := range []string{"/api/v1/me", guestCreativesPath} {
		if r := both.Do(http.MethodGet, path, nil); r.Status != http.StatusOK {
			t.Errorf("both sessions on %s: %d %s", path, r.Status, r.Body)
		}
	}
}

func TestAGuestListsTheSharedCreativesInTheShareOrderWithTheirActions(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	inReview := d.creative(t, creativeSpec{versions: 1, status: review.StatusInReview})
	draft := d.creative(t, creativeSpec{versions: 1})
	notShared := d.creative(t, creativeSpec{versions: 1, status: review.StatusInReview})
	for _, tc := range []struct {
		permission string
		want       []api.CreativeAction
	}{
		{"view", []api.CreativeAction{}},
		{"comment", []api.CreativeAction{}},
		{"decide", []api.CreativeAction{api.CreativeActionRequestChanges, api.CreativeActionApprove}},
	} {
		guest, _ := d.guestOn(t, tc.permission, tc.permission+"@brand.test", inReview, draft)
		var got []api.CreativeDetail
		next := ""
		for {
			path := guestCreativesPath + "?limit=1"
			if next != "" {
				path += "&cursor=" + next
			}
			r := guest.Do(http.MethodGet, path, nil)
			var page api.CreativeList
			r.JSON(t, &page)
			if r.Status != http.StatusOK || len(page.Items) != 1 {
				t.Fatalf("%s: %d %s", tc.permission, r.Status, r.Body)
			}
			got = append(got, page.Items...)
			if page.NextCursor.IsNull() {
				break
			}
			next, _ = page.NextCursor.Get()
		}
		if len(got) != 2 || got[0].Id != inReview || got[1].Id != draft {
			t.Fatalf("%s: listed %v", tc.permission, got)
		}
		if !equalActions(got[0].AvailableActions, tc.want) || len(got[1].AvailableActions) != 0 ||
			got[0].Permissions != (api.CreativePermissions{}) {
			t.Errorf("%s: actions %v and %v, permissions %+v", tc.permission, got[0].AvailableActions, got[1].AvailableActions, got[0].Permissions)
		}
		var one api.CreativeDetail
		if r := guest.Do(http.MethodGet, guestCreativesPath+"/"+inReview.String(), nil); r.Status != http.StatusOK {
			t.Errorf("%s: get %d %s", tc.permission, r.Status, r.Body)
		} else if r.JSON(t, &one); !equalActions(one.AvailableActions, tc.want) {
			t.Errorf("%s: get's actions %v", tc.permission, one.AvailableActions)
		}
		for _, id := range []uuid.UUID{notShared, uuid.New()} {
			if r := guest.Do(http.MethodGet, guestCreativesPath+"/"+id.String(), nil); r.Status != http.StatusNotFound || r.Problem(t).Code != "not_found" {
				t.Errorf("%s: a creative not in the share: %d %s", tc.permission, r.Status, r.Body)
			}
		}
	}
}

func equalActions(a, b []api.CreativeAction) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestARevokedOrExpiredShareEndsItsGuestsAccessAtOnce(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{versions: 1})
	revoked, revokedShare := d.guestOn(t, "decide", "a@brand.test", id)
	expired, expiredShare := d.guestOn(t, "decide", "b@brand.test", id)
	if r := d.clients["admin"].Do(http.MethodDelete, sharesURL(d.org)+"/"+revokedShare.String(), nil); r.Status != http.StatusNoContent {
		t.Fatal(r.Status)
	}
	if _, err := d.env.DB.Pool.Exec(context.Background(), "UPDATE shares SET expires_at = now() WHERE id = $1", expiredShare); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*testenv.Client{"revoked": revoked, "expired": expired} {
		if r := c.Do(http.MethodGet, guestCreativesPath, nil); r.Status != http.StatusUnauthorized || r.Problem(t).Code != "unauthenticated" {
			t.Errorf("%s: %d %s", name, r.Status, r.Body)
		}
	}
}

func TestGuestReadsRefuseAMalformedRequest(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	guest, _ := d.guestOn(t, "view", "v@brand.test", d.creative(t, creativeSpec{versions: 1}))
	for _, path := range []string{guestCreativesPath + "?limit=0", guestCreativesPath + "?cursor=garbage", guestCreativesPath + "/not-a-uuid"} {
		if r := guest.Do(http.MethodGet, path, nil); r.Status != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %s", path, r.Status, r.Body)
		}
	}
}
