package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"creativeapi/gen/api"
	"creativeapi/internal/config"
	"creativeapi/internal/email"
	"creativeapi/internal/httpapi"
	"creativeapi/internal/testenv"
	"creativeapi/internal/tron"
)

// caller is who calls an operation in the authorization matrix.
type caller string

const (
	anonymous    caller = "anonymous"
	acmeAdmin    caller = "acme admin"
	acmeReviewer caller = "acme reviewer"
	acmeAuthor   caller = "acme author"
	acmeViewer   caller = "acme viewer"
	globexAdmin  caller = "globex admin"
	revokedAdmin caller = "revoked session"
	// The guests hold a guest session of a share of the cell's creative
	// (made by Acme's admin, inviting the guest) with its permission; the
	// last two of a decide share since revoked, or expired.
	guestView     caller = "guest view"
	guestComment  caller = "guest comment"
	guestDecide   caller = "guest decide"
	guestRevoked  caller = "guest of a revoked share"
	guestExpired  caller = "guest of an expired share"
	matrixCallers        = 12
)

var (
	callers = []caller{anonymous, acmeAdmin, acmeReviewer, acmeAuthor, acmeViewer, globexAdmin, revokedAdmin,
		guestView, guestComment, guestDecide, guestRevoked, guestExpired}
	guestCallers = []caller{guestView, guestComment, guestDecide, guestRevoked, guestExpired}
)

// sharePermission is the permission of a guest caller's share.
var sharePermission = map[caller]string{guestView: "view", guestComment: "comment", guestDecide: "decide",
	guestRevoked: "decide", guestExpired: "decide"}

// authzMatrix is the expected answer of every operation of openapi.yaml for
// every caller: "status" or "status code". The calls target Acme: its
// organization, a draft creative of Acme's author (submit, for the
// action), and a deposit of Acme's author. The revoked session belonged to
// an Acme admin. An operation missing here fails the test, so a new
// operation cannot ship without its row.
var authzMatrix = map[string]map[caller]string{
	"getHealth":    all("200"),
	"getReadiness": all("200"),
	"signIn":       all("200"),
	"signOut":      signedIn("204"),
	"getMe":        signedIn("200"),
	// Everyone signed in has their own stream (their deposits, their
	// organizations' creatives).
	"streamMyEvents": signedIn("200"),
	"listCreatives": {anonymous: "401 unauthenticated", acmeAdmin: "200", acmeReviewer: "200", acmeAuthor: "200",
		acmeViewer: "200", globexAdmin: "404 not_found", revokedAdmin: "401 unauthenticated"},
	"getCreative": {anonymous: "401 unauthenticated", acmeAdmin: "200", acmeReviewer: "200", acmeAuthor: "200",
		acmeViewer: "200", globexAdmin: "404 not_found", revokedAdmin: "401 unauthenticated"},
	"executeCreativeAction": {anonymous: "401 unauthenticated", acmeAdmin: "200", acmeReviewer: "403 action_forbidden",
		acmeAuthor: "200", acmeViewer: "403 action_forbidden", globexAdmin: "404 not_found", revokedAdmin: "401 unauthenticated"},
	"createCreative": {anonymous: "401 unauthenticated", acmeAdmin: "201", acmeReviewer: "403 action_forbidden",
		acmeAuthor: "201", acmeViewer: "403 action_forbidden", globexAdmin: "404 not_found", revokedAdmin: "401 unauthenticated"},
	"updateCreative": {anonymous: "401 unauthenticated", acmeAdmin: "200", acmeReviewer: "403 action_forbidden",
		acmeAuthor: "200", acmeViewer: "403 action_forbidden", globexAdmin: "404 not_found", revokedAdmin: "401 unauthenticated"},
	// The review plan: the author or an admin, as for an edit.
	"putCreativeReviewPlan": {anonymous: "401 unauthenticated", acmeAdmin: "200", acmeReviewer: "403 action_forbidden",
		acmeAuthor: "200", acmeViewer: "403 action_forbidden", globexAdmin: "404 not_found", revokedAdmin: "401 unauthenticated"},
	"deleteCreativeReviewPlan": {anonymous: "401 unauthenticated", acmeAdmin: "200", acmeReviewer: "403 action_forbidden",
		acmeAuthor: "200", acmeViewer: "403 action_forbidden", globexAdmin: "404 not_found", revokedAdmin: "401 unauthenticated"},
	"addCreativeVersion": {anonymous: "401 unauthenticated", acmeAdmin: "201", acmeReviewer: "403 action_forbidden",
		acmeAuthor: "201", acmeViewer: "403 action_forbidden", globexAdmin: "404 not_found", revokedAdmin: "401 unauthenticated"},
	// The matrix's creative is a draft, never approved: 404 for every
	// member too (approvals_test.go reads an approved one).
	"getCreativeApproval": signedIn("404 not_found"),
	"getApprovalKeys":     all("200"),
	"listCreativeEvents": {anonymous: "401 unauthenticated", acmeAdmin: "200", acmeReviewer: "200", acmeAuthor: "200",
		acmeViewer: "200", globexAdmin: "404 not_found", revokedAdmin: "401 unauthenticated"},
	// Comments: on a creative of Acme's author with a version, the comment
	// (for its edit and deletion) written by Acme's reviewer.
	"listCreativeComments": {anonymous: "401 unauthenticated", acmeAdmin: "200", acmeReviewer: "200", acmeAuthor: "200",
		acmeViewer: "200", globexAdmin: "404 not_found", revokedAdmin: "401 unauthenticated"},
	"createCreativeComment": {anonymous: "401 unauthenticated", acmeAdmin: "201", acmeReviewer: "201", acmeAuthor: "201",
		acmeViewer: "403 action_forbidden", globexAdmin: "404 not_found", revokedAdmin: "401 unauthenticated"},
	"updateCreativeComment": {anonymous: "401 unauthenticated", acmeAdmin: "200", acmeReviewer: "200", acmeAuthor: "200",
		acmeViewer: "403 action_forbidden", globexAdmin: "404 not_found", revokedAdmin: "401 unauthenticated"},
	"deleteCreativeComment": {anonymous: "401 unauthenticated", acmeAdmin: "204", acmeReviewer: "204", acmeAuthor: "403 action_forbidden",
		acmeViewer: "403 action_forbidden", globexAdmin: "404 not_found", revokedAdmin: "401 unauthenticated"},
	"listOrganizationMembers": {anonymous: "401 unauthenticated", acmeAdmin: "200", acmeReviewer: "200", acmeAuthor: "200",
		acmeViewer: "200", globexAdmin: "404 not_found", revokedAdmin: "401 unauthenticated"},
	"listWebhookEndpoints":  adminOnly("200"),
	"createWebhookEndpoint": adminOnly("201"),
	"getWebhookEndpoint":    adminOnly("200"),
	"updateWebhookEndpoint": adminOnly("200"),
	"deleteWebhookEndpoint": adminOnly("204"),
	"listWebhookDeliveries": adminOnly("200"),
	"rotateWebhookSecret":   adminOnly("200"),
	// The webhook tools: a test of the call's endpoint, a redelivery of a
	// finished delivery of it.
	"sendWebhookTest":          adminOnly("202"),
	"redeliverWebhookDelivery": adminOnly("202"),
	"getNotificationSettings":  signedIn("200"),
	// Tokens are a session's to manage; the token revoked is Acme's
	// author's, another user's is the 404 of an unknown one.
	"listAccessTokens":  signedIn("200"),
	"createAccessToken": signedIn("201"),
	"revokeAccessToken": {anonymous: "401 unauthenticated", acmeAdmin: "404 not_found", acmeReviewer: "404 not_found",
		acmeAuthor: "204", acmeViewer: "404 not_found", globexAdmin: "404 not_found", revokedAdmin: "401 unauthenticated"},
	"putNotificationSettings": signedIn("200"),
	// Unsubscribing needs no session: the signed token is the right.
	"unsubscribe":          all("200"),
	"getAccountBalance":    signedIn("200"),
	"listAccountDeposits":  signedIn("200"),
	"listLedgerEntries":    signedIn("200"),
	"createAccountDeposit": signedIn("201"),
	"getAccountDeposit": {anonymous: "401 unauthenticated", acmeAdmin: "404 not_found", acmeReviewer: "404 not_found",
		acmeAuthor: "200", acmeViewer: "404 not_found", globexAdmin: "404 not_found", revokedAdmin: "401 unauthenticated"},
	// Shares: admins, and authors for creatives they wrote; the matrix's
	// share was made by Acme's author, so both see it.
	"listShares":  sharers("200"),
	"createShare": sharers("201"),
	"getShare":    sharers("200"),
	"revokeShare": sharers("204"),
	// A guest session needs no user session; the matrix's token is none,
	// so every caller gets the one answer of an unknown token.
	"createGuestSession": all("404 share_not_found"),
	"createUpload":       uploaders("201"),
	"getUpload":          uploaders("200"),
	"completeUpload":     uploaders("200"),
	// Its creator (Acme's author, whose upload every cell gets) or an admin.
	"deleteUpload": uploaders("204"),
	"getAssetContent": {anonymous: "401 unauthenticated", acmeAdmin: "302", acmeReviewer: "302", acmeAuthor: "302",
		acmeViewer: "302", globexAdmin: "404 not_found", revokedAdmin: "401 unauthenticated"},
	// The owner gets past every check to the chain: the transaction was
	// never seen.
	"claimAccountDeposit": {anonymous: "401 unauthenticated", acmeAdmin: "404 not_found", acmeReviewer: "404 not_found",
		acmeAuthor: "409 transfer_unknown", acmeViewer: "404 not_found", globexAdmin: "404 not_found", revokedAdmin: "401 unauthenticated"},
	// The owner's deposit awaits its transfer: no top-up, no refund
	// address (both are for a deposit under review).
	"topUpAccountDeposit": {anonymous: "401 unauthenticated", acmeAdmin: "404 not_found", acmeReviewer: "404 not_found",
		acmeAuthor: "409 invalid_transition", acmeViewer: "404 not_found", globexAdmin: "404 not_found", revokedAdmin: "401 unauthenticated"},
	"putAccountDepositRefundAddress": {anonymous: "401 unauthenticated", acmeAdmin: "404 not_found", acmeReviewer: "404 not_found",
		acmeAuthor: "409 invalid_transition", acmeViewer: "404 not_found", globexAdmin: "404 not_found", revokedAdmin: "401 unauthenticated"},
	// A deposit of its own (the owner's cancel is final), so the other
	// rows still find theirs awaiting its transfer.
	"cancelAccountDeposit": {anonymous: "401 unauthenticated", acmeAdmin: "404 not_found", acmeReviewer: "404 not_found",
		acmeAuthor: "200", acmeViewer: "404 not_found", globexAdmin: "404 not_found", revokedAdmin: "401 unauthenticated"},
	// The operator API does not exist for anyone who is not a platform
	// operator (none of the matrix's callers is one).
	"listOperatorTransfers":  signedIn("404 not_found"),
	"getOperatorTransfer":    signedIn("404 not_found"),
	"settleOperatorTransfer": signedIn("404 not_found"),
	// The platform's webhooks are the operator API too.
	"listPlatformWebhookEndpoints":     signedIn("404 not_found"),
	"createPlatformWebhookEndpoint":    signedIn("404 not_found"),
	"getPlatformWebhookEndpoint":       signedIn("404 not_found"),
	"updatePlatformWebhookEndpoint":    signedIn("404 not_found"),
	"deletePlatformWebhookEndpoint":    signedIn("404 not_found"),
	"rotatePlatformWebhookSecret":      signedIn("404 not_found"),
	"listPlatformWebhookDeliveries":    signedIn("404 not_found"),
	"sendPlatformWebhookTest":          signedIn("404 not_found"),
	"redeliverPlatformWebhookDelivery": signedIn("404 not_found"),
	// The guest paths: a live guest session of a share holding the
	// cell's creative, nobody else.
	"listGuestCreatives":         guestsOnly("200", "200", "200"),
	"getGuestCreative":           guestsOnly("200", "200", "200"),
	"listGuestCreativeComments":  guestsOnly("200", "200", "200"),
	"createGuestCreativeComment": guestsOnly("403 action_forbidden", "201", "201"),
	// The comment is Acme's reviewer's: no guest's to change (their own:
	// guest_review_test.go).
	"updateGuestCreativeComment": guestsOnly("403 action_forbidden", "403 action_forbidden", "403 action_forbidden"),
	// The matrix's creative is a draft: a decide guest may decide, but
	// not now.
	"executeGuestCreativeAction": guestsOnly("403 action_forbidden", "403 action_forbidden", "409 invalid_transition"),
	"getGuestAssetContent":       guestsOnly("302", "302", "302"),
	// Any live guest session asks for a code (the matrix's are verified
	// already: asking again is allowed); none was asked in the cell's new
	// session, so a code is 409 code_expired.
	"requestGuestVerification": guestsOnly("202", "202", "202"),
	"confirmGuestVerification": guestsOnly("409 code_expired", "409 code_expired", "409 code_expired"),
	"streamGuestEvents":        guestsOnly("200", "200", "200"),
}

// membersOnly completes the row of an operation of members (every one
// outside /api/v1/guest/ that takes a session): a guest session is no
// user's, 401 whatever its permission.
func membersOnly(row map[caller]string) map[caller]string {
	out := make(map[caller]string, matrixCallers)
	for c, want := range row {
		out[c] = want
	}
	for _, g := range guestCallers {
		if _, ok := out[g]; !ok {
			out[g] = "401 unauthenticated"
		}
	}
	return out
}

// guestsOnly is the row of a guest operation: refused (401) to everyone
// but a live guest session, whose answers by permission are given.
func guestsOnly(view, comment, decide string) map[caller]string {
	row := map[caller]string{guestView: view, guestComment: comment, guestDecide: decide}
	for _, c := range callers {
		if _, ok := row[c]; !ok {
			row[c] = "401 unauthenticated"
		}
	}
	return row
}

// uploaders is the row of an upload operation: authors and admins.
func uploaders(want string) map[caller]string {
	return map[caller]string{anonymous: "401 unauthenticated", acmeAdmin: want, acmeReviewer: "403 action_forbidden",
		acmeAuthor: want, acmeViewer: "403 action_forbidden", globexAdmin: "404 not_found", revokedAdmin: "401 unauthenticated"}
}

// sharers is the row of a share operation: admins, and authors for
// their own creatives and shares.
func sharers(want string) map[caller]string {
	return map[caller]string{anonymous: "401 unauthenticated", acmeAdmin: want, acmeReviewer: "403 action_forbidden",
		acmeAuthor: want, acmeViewer: "403 action_forbidden", globexAdmin: "404 not_found", revokedAdmin: "401 unauthenticated"}
}

// all is the row of an operation that answers everyone alike.
func all(want string) map[caller]string {
	row := map[caller]string{}
	for _, c := range callers {
		row[c] = want
	}
	return row
}

// adminOnly is the row of an operation of Acme's admins only: other
// members are refused, non-members do not see the organization.
func adminOnly(want string) map[caller]string {
	return map[caller]string{anonymous: "401 unauthenticated", acmeAdmin: want, acmeReviewer: "403 action_forbidden",
		acmeAuthor: "403 action_forbidden", acmeViewer: "403 action_forbidden", globexAdmin: "404 not_found", revokedAdmin: "401 unauthenticated"}
}

// signedIn is the row of an operation open to every live user session.
func signedIn(want string) map[caller]string {
	row := all(want)
	row[anonymous], row[revokedAdmin] = "401 unauthenticated", "401 unauthenticated"
	for _, g := range guestCallers {
		row[g] = "401 unauthenticated"
	}
	return row
}

// matrixDesk is Acme (four roles and a revoked admin) and Globex (an admin).
type matrixDesk struct {
	env     *testenv.Env
	org     uuid.UUID
	users   map[caller]uuid.UUID
	emails  map[caller]string
	deposit string
	// cancelDeposit is the author's deposit that cancelAccountDeposit
	// cancels.
	cancelDeposit string
	asset         string
	// assetCreative is a draft whose current version is asset's file.
	assetCreative uuid.UUID
	// creative is the creative of the cell being built (uuid.Nil: none),
	// which a guest caller's share holds.
	creative uuid.UUID
	// guestShare is the share of the last guest cell, revoked when the
	// next is made: Acme stays under its limit of live shares.
	guestShare uuid.UUID
}

func newMatrixDesk(t *testing.T) *matrixDesk {
	t.Helper()
	env := testenv.New(t, testenv.Options{Objects: true})
	d := &matrixDesk{env: env, org: env.DB.Org(t, "Acme Ads"), users: map[caller]uuid.UUID{}, emails: map[caller]string{}}
	globex := env.DB.Org(t, "Globex")
	for c, role := range map[caller]string{acmeAdmin: "admin", acmeReviewer: "reviewer", acmeAuthor: "author", acmeViewer: "viewer", revokedAdmin: "admin", globexAdmin: "admin"} {
		id, email := env.DB.User(t, string(c))
		org := d.org
		if c == globexAdmin {
			org = globex
		}
		env.DB.Member(t, org, id, role)
		d.users[c], d.emails[c] = id, email
	}
	r := env.SessionFor(t, d.users[acmeAuthor]).Do("POST", "/api/v1/me/balance/deposits", depositBody("30000000"))
	if r.Status != http.StatusCreated {
		t.Fatalf("fixture deposit: %d %s", r.Status, r.Body)
	}
	d.deposit = r.Header.Get("Location")[strings.LastIndex(r.Header.Get("Location"), "/")+1:]
	r = env.SessionFor(t, d.users[acmeAuthor]).Do("POST", "/api/v1/me/balance/deposits", depositBody("31000000"))
	if r.Status != http.StatusCreated {
		t.Fatalf("fixture deposit to cancel: %d %s", r.Status, r.Body)
	}
	d.cancelDeposit = r.Header.Get("Location")[strings.LastIndex(r.Header.Get("Location"), "/")+1:]
	up := d.sentUpload(t)
	r = env.SessionFor(t, d.users[acmeAuthor]).Do("POST", uploadsURL(d.org)+"/"+up+"/complete", map[string]any{})
	var ready struct{ Asset struct{ ID string } }
	r.JSON(t, &ready)
	if r.Status != http.StatusOK || ready.Asset.ID == "" {
		t.Fatalf("fixture asset: %d %s", r.Status, r.Body)
	}
	d.asset = ready.Asset.ID
	// A draft whose version is that file: the guest download's creative.
	d.assetCreative = d.env.DB.DraftCreative(t, d.org, d.users[acmeAuthor])
	r = env.SessionFor(t, d.users[acmeAuthor]).Do("POST", creativeURL(d.org, d.assetCreative)+"/versions",
		map[string]any{"assets": []any{map[string]string{"uploadId": up}}})
	if r.Status != http.StatusCreated {
		t.Fatalf("fixture version of the upload: %d %s", r.Status, r.Body)
	}
	return d
}

// sentUpload is an upload of Acme's author whose one part is in the store.
// The cells run one at a time, so the uploads of earlier cells are done
// with: they are let expire, so that the author's pending limits (20)
// never refuse the next.
func (d *matrixDesk) sentUpload(t *testing.T) string {
	t.Helper()
	if _, err := d.env.DB.Pool.Exec(context.Background(),
		"UPDATE uploads SET expires_at = now() - interval '1 second' WHERE status = 'pending' AND created_by = $1", d.users[acmeAuthor]); err != nil {
		t.Fatal(err)
	}
	file := pngFile(t, 2, 2, 100)
	r := d.env.SessionFor(t, d.users[acmeAuthor]).Do("POST", uploadsURL(d.org),
		map[string]any{"fileName": "m.png", "mimeType": "image/png", "sizeBytes": len(file), "sha256": sha(file)})
	var u api.Upload
	r.JSON(t, &u)
	if r.Status != http.StatusCreated {
		t.Fatalf("fixture upload: %d %s", r.Status, r.Body)
	}
	put(t, u, file, 1)
	return u.Id.String()
}

// client is c's client with a session of its own (so signing out in one
// cell leaves the others alone); the revoked caller's session is revoked.
func (d *matrixDesk) client(t *testing.T, c caller) *testenv.Client {
	t.Helper()
	if c == anonymous {
		return d.env.Client(t)
	}
	if permission, ok := sharePermission[c]; ok {
		return d.guest(t, c, permission)
	}
	client := d.env.SessionFor(t, d.users[c])
	if c == revokedAdmin {
		if _, err := d.env.DB.Pool.Exec(context.Background(), "UPDATE sessions SET revoked_at = now() WHERE user_id = $1", d.users[c]); err != nil {
			t.Fatal(err)
		}
	}
	return client
}

var pathParam = regexp.MustCompile(`\{([^}]+)\}`)

// call builds the request of operationID for one cell: path parameters
// name Acme's resources, bodies are valid.
func (d *matrixDesk) call(t *testing.T, operationID, path string) (string, any) {
	t.Helper()
	var bad []string
	var commented, comment uuid.UUID
	if strings.Contains(path, "/comments") {
		commented, comment = d.commentFixture(t)
	}
	d.creative = uuid.Nil
	var hook, delivery uuid.UUID
	if strings.Contains(path, "{deliveryId}") {
		// A delivery must be of the call's endpoint, and finished (a
		// redelivery makes it pending).
		hook = d.env.DB.WebhookEndpoint(t, d.org)
		delivery = finishedDelivery(t, d.env, hook, d.org)
	}
	path = pathParam.ReplaceAllStringFunc(path, func(p string) string {
		switch p {
		case "{organizationId}":
			return d.org.String()
		case "{creativeId}":
			if commented != uuid.Nil {
				d.creative = commented
				return commented.String()
			}
			d.creative = d.env.DB.DraftCreative(t, d.org, d.users[acmeAuthor])
			return d.creative.String()
		case "{commentId}":
			return comment.String()
		case "{depositId}":
			if strings.HasSuffix(path, "/cancel") {
				return d.cancelDeposit
			}
			return d.deposit
		case "{webhookId}":
			if hook != uuid.Nil {
				return hook.String()
			}
			return d.env.DB.WebhookEndpoint(t, d.org).String()
		case "{deliveryId}":
			return delivery.String()
		case "{uploadId}":
			return d.sentUpload(t)
		case "{transferId}":
			return uuid.NewString() // none: operators get 404 too
		case "{assetId}":
			d.creative = d.assetCreative // a guest's share holds it
			return d.asset
		case "{shareId}":
			return d.share(t).String()
		case "{tokenId}":
			return d.token(t, d.users[acmeAuthor], "creatives:read").id
		}
		bad = append(bad, p)
		return p
	})
	if len(bad) > 0 {
		t.Fatalf("%s: the matrix knows no value for %v", operationID, bad)
	}
	bodies := map[string]any{
		"signIn":                         map[string]string{"email": d.emails[acmeAuthor], "password": testenv.Password},
		"executeCreativeAction":          map[string]string{"action": "submit"},
		"createAccountDeposit":           depositBody("25000000"),
		"claimAccountDeposit":            map[string]string{"transactionId": strings.Repeat("ab", 32)},
		"putAccountDepositRefundAddress": map[string]string{"address": tron.EncodeAddress(bytes.Repeat([]byte{0x22}, 20))},
		"createCreative":                 map[string]string{"title": "Matrix creative", "type": "static", "aspectRatio": "1:1", "geo": "DE", "language": "de"},
		"updateCreative":                 map[string]string{"title": "Renamed in the matrix"},
		"addCreativeVersion":             map[string]any{"assets": []any{pngAsset("matrix.png")}},
		"createWebhookEndpoint":          map[string]any{"url": "https://hooks.example.test/matrix", "eventTypes": []string{"creative.approved"}},
		"updateWebhookEndpoint":          map[string]any{"enabled": false},
		"createCreativeComment":          map[string]string{"body": "Matrix remark"},
		"updateCreativeComment":          map[string]bool{"resolved": true},
		"createUpload":                   map[string]any{"fileName": "m.png", "mimeType": "image/png", "sizeBytes": 100, "sha256": strings.Repeat("a", 64)},
		"completeUpload":                 map[string]any{},
		"createGuestSession":             map[string]string{"token": "not-a-share-token", "name": "Matrix guest", "email": "guest@brand.test"},
		"createPlatformWebhookEndpoint":  map[string]any{"url": "https://hooks.example.test/platform", "eventTypes": []string{"deposit.*"}},
		"updatePlatformWebhookEndpoint":  map[string]any{"enabled": false},
		"createGuestCreativeComment":     map[string]string{"body": "Guest remark"},
		"updateGuestCreativeComment":     map[string]bool{"resolved": true},
		"executeGuestCreativeAction":     map[string]string{"action": "approve"},
		"confirmGuestVerification":       map[string]string{"code": "123456"},
		// A comment share: authors make those too (a decide share is an
		// admin's: TestOnlyAnAdminMakesADecideShare).
		"createShare": map[string]any{"creativeIds": []uuid.UUID{d.env.DB.DraftCreative(t, d.org, d.users[acmeAuthor])},
			"permission": "comment"},
		"createAccessToken": map[string]any{"name": "matrix", "scopes": []string{"creatives:read"}},
		"putCreativeReviewPlan": map[string]any{"stages": []any{map[string]any{
			"name": "Matrix stage", "rule": "all", "reviewerIds": []uuid.UUID{d.users[acmeReviewer]}}}},

		"settleOperatorTransfer": map[string]string{"decision": "refund", "note": "matrix"},

		"putNotificationSettings": map[string]any{"email": "daily", "kinds": map[string]bool{
			"mention": true, "review_requested": true, "decision": true, "due": true, "deposit": false}},
	}
	if operationID == "unsubscribe" {
		// The right is the signed token (as the test servers sign it), not
		// a session: Acme's author unsubscribes from mentions.
		path += "?token=" + email.NewTokens(config.DevUnsubscribeSecret).Sign(d.users[acmeAuthor], "mention")
	}
	return path, bodies[operationID]
}

// TestAuthorizationMatrix calls every operation of openapi.yaml as every
// kind of caller and compares the answers with authzMatrix.
func TestAuthorizationMatrix(t *testing.T) {
	t.Parallel()
	spec, err := httpapi.Spec()
	if err != nil {
		t.Fatal(err)
	}
	d := newMatrixDesk(t)
	seen := map[string]bool{}
	cells := 0
	for path, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			id := op.OperationID
			seen[id] = true
			row, ok := authzMatrix[id]
			if !ok {
				t.Errorf("%s (%s %s) has no row in authzMatrix: state who may call it", id, method, path)
				continue
			}
			if !strings.HasPrefix(path, "/api/v1/guest/") && (op.Security == nil || len(*op.Security) > 0) {
				row = membersOnly(row)
			}
			if len(row) != matrixCallers {
				t.Errorf("%s: the row has %d callers, want %d", id, len(row), matrixCallers)
			}
			t.Run(id, func(t *testing.T) {
				for _, c := range callers {
					want := row[c]
					p, body := d.call(t, id, path)
					if op.RequestBody != nil && body == nil {
						t.Fatalf("%s takes a body the matrix does not know", id)
					}
					r := d.client(t, c).Do(method, p, body)
					got := strconv.Itoa(r.Status)
					if r.Status >= 400 {
						got += " " + r.Problem(t).Code
					}
					if got != want {
						t.Errorf("%s as %s: got %s, want %s", id, c, got, want)
					}
					cells++
				}
			})
		}
	}
	var stale []string
	for id := range authzMatrix {
		if !seen[id] {
			stale = append(stale, id)
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Errorf("authzMatrix has rows for operations openapi.yaml does not have: %v", stale)
	}
	t.Logf("%d operations × %d callers = %d calls", len(seen), len(callers), cells)

	// updateCreative has a right of its own: setting the reviewer.
	t.Run("updateCreative with reviewerId", func(t *testing.T) {
		want := membersOnly(map[caller]string{anonymous: "401 unauthenticated", acmeAdmin: "200", acmeReviewer: "403 action_forbidden",
			acmeAuthor: "403 action_forbidden", acmeViewer: "403 action_forbidden", globexAdmin: "404 not_found", revokedAdmin: "401 unauthenticated"})
		for _, c := range callers {
			id := d.env.DB.DraftCreative(t, d.org, d.users[acmeAuthor])
			d.creative = id
			r := d.client(t, c).Do(http.MethodPatch, fmt.Sprintf("/api/v1/organizations/%s/creatives/%s", d.org, id),
				map[string]any{"reviewerId": d.users[acmeReviewer]})
			got := strconv.Itoa(r.Status)
			if r.Status >= 400 {
				got += " " + r.Problem(t).Code
			}
			if got != want[c] {
				t.Errorf("as %s: got %s, want %s", c, got, want[c])
			}
		}
	})
}

// pngAsset is a valid image asset of a new version.
func pngAsset(name string) map[string]any {
	return map[string]any{"fileName": name, "mimeType": "image/png", "sizeBytes": 1000, "width": 100, "height": 100,
		"url": "https://cdn.example.test/" + name, "sha256": strings.Repeat("ab", 32)}
}

// commentFixture is a draft of Acme's author (with a version), and a
// comment on it by Acme's reviewer.
func (d *matrixDesk) commentFixture(t *testing.T) (creative, comment uuid.UUID) {
	t.Helper()
	creative = d.env.DB.DraftCreative(t, d.org, d.users[acmeAuthor])
	err := d.env.DB.Pool.QueryRow(context.Background(), `
		INSERT INTO comments (creative_id, version_id, version_number, author_id, body)
		SELECT c.id, c.current_version_id, 1, $2, 'Matrix fixture' FROM creatives c WHERE c.id = $1 RETURNING id`,
		creative, d.users[acmeReviewer]).Scan(&comment)
	if err != nil {
		t.Fatal(err)
	}
	return creative, comment
}

// share is a live share, made by Acme's author, of a draft of theirs: a
// comment share, since a decide share is an admin's.
func (d *matrixDesk) share(t *testing.T) uuid.UUID {
	t.Helper()
	creative := d.env.DB.DraftCreative(t, d.org, d.users[acmeAuthor])
	var id uuid.UUID
	err := d.env.DB.Pool.QueryRow(context.Background(), `
		WITH s AS (INSERT INTO shares (organization_id, token_hash, permission, expires_at, created_by)
		           VALUES ($1, sha256(gen_random_uuid()::text::bytea), 'comment', now() + interval '1 day', $2) RETURNING id)
		INSERT INTO share_creatives (share_id, creative_id, position) SELECT id, $3, 1 FROM s RETURNING share_id`,
		d.org, d.users[acmeAuthor], creative).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// guest is a client holding a guest session of a share of the cell's
// creative (a new draft when the cell has none) with permission, made by
// Acme's admin and inviting the guest's email; c's share is then revoked
// or expired as c says.
func (d *matrixDesk) guest(t *testing.T, c caller, permission string) *testenv.Client {
	t.Helper()
	creative := d.creative
	if creative == uuid.Nil {
		creative = d.env.DB.DraftCreative(t, d.org, d.users[acmeAuthor])
	}
	if _, err := d.env.DB.Pool.Exec(context.Background(), "UPDATE shares SET revoked_at = now() WHERE id = $1", d.guestShare); err != nil {
		t.Fatal(err)
	}
	share, token := d.env.DB.Share(t, d.org, d.users[acmeAdmin], permission, creative)
	d.guestShare = share
	client := d.env.Client(t)
	// A decide guest comes by the invitation's own link: verified.
	if r := d.env.OpenInvited(t, client, share, token, "guest@brand.test"); r.Status != http.StatusCreated {
		t.Fatalf("guest session: %d %s", r.Status, r.Body)
	}
	ended := map[caller]string{guestRevoked: "revoked_at = now()", guestExpired: "expires_at = now()"}
	if set, ok := ended[c]; ok {
		if _, err := d.env.DB.Pool.Exec(context.Background(), "UPDATE shares SET "+set+" WHERE id = $1", share); err != nil {
			t.Fatal(err)
		}
	}
	return client
}

// decisionCell is one row of the decisions' matrix: who decides a new
// in_review creative (written by "author admin", its version by "version
// admin") on one path, and whether they may.
type decisionCell struct {
	name string
	// path: "member" (no plan), or "stage" (a plan of one stage listing
	// the reviewer and the version's author, and a guest's email when the
	// caller is a guest).
	path string
	// who is a member of the desk, or an email; a guest signs in with it
	// (a member's name: that member's email) on an admin's decide share,
	// which invited them when invited.
	who                     string
	guest, invited, decides bool
}

// TestAuthorizationMatrixOfDecisions proves "nobody approves their own
// work" (docs/review.md) on every decision path through the API: a
// member's decision, a stage member's, an admin's override, and a guest's
// of a decide share, with or without a plan. Neither the creative's author
// nor the author of the version under review decides on any of them (403
// action_forbidden and no decision in availableActions); a guest decides
// only when the share invited them or the active stage lists them.
func TestAuthorizationMatrixOfDecisions(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	emails := map[string]string{}
	for _, name := range []string{"author admin", "version admin", "other admin"} {
		id, email := d.env.DB.User(t, name)
		d.env.DB.Member(t, d.org, id, "admin")
		d.users[name], d.clients[name], emails[name] = id, d.env.SessionFor(t, id), email
	}
	cells := []decisionCell{
		{"a reviewer", "member", "reviewer", false, false, true},
		{"an admin", "member", "other admin", false, false, true},
		{"an admin who wrote the creative", "member", "author admin", false, false, false},
		{"an admin who wrote the version", "member", "version admin", false, false, false},
		{"a stage's reviewer", "stage", "reviewer", false, false, true},
		{"a stage's admin who wrote the version", "stage", "version admin", false, false, false},
		{"an admin's override", "stage", "other admin", false, false, true},
		{"an override by the creative's author", "stage", "author admin", false, false, false},
		{"an invited guest", "member", "legal@brand.test", true, true, true},
		{"a guest the share did not invite", "member", "anyone@brand.test", true, false, false},
		{"the creative's author as an invited guest", "member", "author admin", true, true, false},
		{"the version's author as an invited guest", "member", "version admin", true, true, false},
		{"a stage's guest, not invited", "stage", "legal@brand.test", true, false, true},
		{"the creative's author as a stage's guest", "stage", "author admin", true, true, false},
	}
	for _, cell := range cells {
		t.Run(cell.name, func(t *testing.T) {
			id := d.creative(t, creativeSpec{versions: 1, author: "author admin"})
			if _, err := d.env.DB.Pool.Exec(context.Background(),
				"UPDATE creative_versions SET author_id = $1 WHERE creative_id = $2", d.users["version admin"], id); err != nil {
				t.Fatal(err)
			}
			email := cell.who
			if e, ok := emails[cell.who]; ok {
				email = e
			}
			if cell.path == "stage" {
				stage := map[string]any{"name": "Sign-off", "rule": "any", "reviewerIds": []uuid.UUID{d.users["reviewer"], d.users["version admin"]}}
				if cell.guest {
					stage["guestEmails"] = []string{email}
				}
				if r := d.putPlan("other admin", id, map[string]any{"stages": []any{stage}}); r.Status != http.StatusOK {
					t.Fatalf("put plan: %d %s", r.Status, r.Body)
				}
			}
			if r := d.act("author admin", id, map[string]any{"action": "submit"}); r.Status != http.StatusOK {
				t.Fatalf("submit: %d %s", r.Status, r.Body)
			}
			client, detail, action := d.clients[cell.who], creativeURL(d.org, id), creativeActionURL(d.org, id)
			if cell.guest {
				share, token := d.env.DB.Share(t, d.org, d.users["other admin"], "decide", id)
				if cell.invited {
					d.env.DB.Invite(t, share, email)
				}
				client = d.env.Client(t)
				if r := client.OpenShare(token, email); r.Status != http.StatusCreated {
					t.Fatalf("guest session: %d %s", r.Status, r.Body)
				}
				// Who decides is asked of verified sessions only (an
				// unverified one is guest_unverified first): the row's
				// session is marked proven, as a code or its link would.
				d.env.DB.VerifyGuest(t, share, email)
				detail, action = guestCreativesPath+"/"+id.String(), guestActionURL(id)
			}
			var c api.CreativeDetail
			client.Do(http.MethodGet, detail, nil).JSON(t, &c)
			offered := false
			for _, a := range c.AvailableActions {
				offered = offered || a == api.CreativeActionApprove || a == api.CreativeActionRequestChanges
			}
			if offered != cell.decides {
				t.Errorf("availableActions %v, decides %t", c.AvailableActions, cell.decides)
			}
			r := client.Do(http.MethodPost, action, map[string]any{"action": "approve"})
			switch {
			case cell.decides && r.Status != http.StatusOK:
				t.Errorf("approve: %d %s, want 200", r.Status, r.Body)
			case !cell.decides && (r.Status != http.StatusForbidden || r.Problem(t).Code != "action_forbidden"):
				t.Errorf("approve: %d %s, want 403 action_forbidden", r.Status, r.Body)
			}
		})
	}
}
