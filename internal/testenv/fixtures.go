package testenv

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"creativeapi/internal/auth"
)

// Password is every fixture user's password.
const Password = "test-password-1"

var passwordHash = sync.OnceValue(func() string {
	h, err := auth.HashPassword(Password, auth.DefaultPasswordParams)
	if err != nil {
		panic(err)
	}
	return h
})

// User inserts a user with Password; the email is made unique per call
// from the given local part.
func (d *DB) User(t testing.TB, name string) (id uuid.UUID, email string) {
	t.Helper()
	// 48 random bits: benchmarks insert thousands of users into one
	// database, where 24 bits collided (users_email_key) about once a run.
	email = strings.ToLower(strings.ReplaceAll(name, " ", ".")) + "-" + randomName()[:12] + "@example.test"
	err := d.Pool.QueryRow(context.Background(),
		"INSERT INTO users (email, name, password_hash) VALUES ($1, $2, $3) RETURNING id",
		email, name, passwordHash()).Scan(&id)
	if err != nil {
		t.Fatalf("insert user: %v", err)
	}
	return id, email
}

// Org inserts an organization.
func (d *DB) Org(t testing.TB, name string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	err := d.Pool.QueryRow(context.Background(),
		"INSERT INTO organizations (name, slug) VALUES ($1, $2) RETURNING id", name, "org-"+randomName()).Scan(&id)
	if err != nil {
		t.Fatalf("insert organization: %v", err)
	}
	return id
}

// Member adds user to org with role.
func (d *DB) Member(t testing.TB, org, user uuid.UUID, role string) {
	t.Helper()
	if _, err := d.Pool.Exec(context.Background(),
		"INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, $3)", org, user, role); err != nil {
		t.Fatalf("insert membership: %v", err)
	}
}

// DraftCreative inserts a draft creative of org with one version, authored
// by author, numbered as the organization's next.
func (d *DB) DraftCreative(t testing.TB, org, author uuid.UUID) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	var id uuid.UUID
	if err := d.Pool.QueryRow(ctx, `
		WITH n AS (UPDATE organizations SET next_creative_number = next_creative_number + 1 WHERE id = $1 RETURNING next_creative_number - 1 AS number)
		INSERT INTO creatives (organization_id, number, title, type, aspect_ratio, geo, language, author_id)
		SELECT $1, number, 'Fixture creative', 'static', '9:16', 'DE', 'de-DE', $2 FROM n RETURNING id`, org, author).Scan(&id); err != nil {
		t.Fatalf("insert creative: %v", err)
	}
	if _, err := d.Pool.Exec(ctx, `
		WITH v AS (INSERT INTO creative_versions (creative_id, number, author_id) VALUES ($1, 1, $2) RETURNING id)
		UPDATE creatives SET current_version_id = v.id FROM v WHERE creatives.id = $1`, id, author); err != nil {
		t.Fatalf("insert creative version: %v", err)
	}
	return id
}

// WebhookEndpoint inserts an enabled webhook endpoint of org, subscribed
// to creative.approved, at an address nothing listens on.
func (d *DB) WebhookEndpoint(t testing.TB, org uuid.UUID) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	if err := d.Pool.QueryRow(context.Background(), `INSERT INTO webhook_endpoints (organization_id, url, event_types, secret)
		VALUES ($1, 'https://hooks.example.test/fixture', '{creative.approved}', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw') RETURNING id`, org).Scan(&id); err != nil {
		t.Fatalf("insert webhook endpoint: %v", err)
	}
	return id
}

// SignedIn returns a client signed in as a new user with a session created
// directly in the database (sign-in itself is tested on its own, and
// argon2id per test would only cost time).
func (e *Env) SignedIn(t testing.TB, name string) (*Client, uuid.UUID) {
	t.Helper()
	id, _ := e.DB.User(t, name)
	return e.SessionFor(t, id), id
}

// SessionFor returns a client holding a fresh session of user.
func (e *Env) SessionFor(t testing.TB, user uuid.UUID) *Client {
	t.Helper()
	token, csrf := e.DB.Session(t, user)
	c := e.Client(t)
	c.SetCookie(e.Config, token)
	c.CSRFToken = csrf
	return c
}

// Session inserts a live session of user and returns its cookie token and
// CSRF token.
func (d *DB) Session(t testing.TB, user uuid.UUID) (token, csrf string) {
	t.Helper()
	token, csrf = auth.NewToken(), auth.NewToken()
	_, err := d.Pool.Exec(context.Background(), `INSERT INTO sessions (user_id, token_hash, csrf_token, idle_expires_at, absolute_expires_at)
		VALUES ($1, $2, $3, now() + interval '1 hour', now() + interval '1 day')`, user, auth.HashToken(token), csrf)
	if err != nil {
		t.Fatalf("insert session: %v", err)
	}
	return token, csrf
}

// Share inserts a live share of org's creatives with permission, made by
// creator, and returns its id and token (shares are made through the API
// in their own tests).
func (d *DB) Share(t testing.TB, org, creator uuid.UUID, permission string, creatives ...uuid.UUID) (id uuid.UUID, token string) {
	t.Helper()
	token = auth.NewToken()
	err := d.Pool.QueryRow(context.Background(), `
		WITH s AS (INSERT INTO shares (organization_id, token_hash, permission, expires_at, created_by)
		           VALUES ($1, $2, $3, now() + interval '1 day', $4) RETURNING id),
		     c AS (INSERT INTO share_creatives (share_id, creative_id, position)
		           SELECT s.id, c.id, c.ord::integer FROM s, unnest($5::uuid[]) WITH ORDINALITY AS c(id, ord))
		SELECT id FROM s`, org, auth.HashToken(token), permission, creator, creatives).Scan(&id)
	if err != nil {
		t.Fatalf("insert share: %v", err)
	}
	return id, token
}

// Invite records emails as invited to share (share_invitations), as
// createShare's invite does, without sealing or sending anything.
func (d *DB) Invite(t testing.TB, share uuid.UUID, emails ...string) {
	t.Helper()
	_, err := d.Pool.Exec(context.Background(), `
		INSERT INTO share_invitations (share_id, email, position)
		SELECT $1, e.email, e.ord::integer FROM unnest($2::text[]) WITH ORDINALITY AS e(email, ord)`, share, emails)
	if err != nil {
		t.Fatalf("invite: %v", err)
	}
}

// Invitation records an invitation of email to share, as share creation
// does, and returns its own token (the #invitation= of its link), which
// opens a verified guest session.
func (d *DB) Invitation(t testing.TB, share uuid.UUID, email string) string {
	t.Helper()
	token := auth.NewToken()
	if _, err := d.Pool.Exec(context.Background(), `
		INSERT INTO share_invitations (share_id, email, position, token_hash)
		VALUES ($1, $2, coalesce((SELECT max(position) + 1 FROM share_invitations WHERE share_id = $1), 1), $3)`,
		share, auth.NormalizeEmail(email), auth.HashToken(token)); err != nil {
		t.Fatalf("insert invitation: %v", err)
	}
	return token
}

// OpenInvited opens on c a verified guest session of share (token) as
// email, by an invitation's own link: the way a deciding guest comes in.
func (e *Env) OpenInvited(t testing.TB, c *Client, share uuid.UUID, token, email string) *Response {
	t.Helper()
	return c.OpenShareWith(map[string]string{"token": token, "name": "Guest " + email, "email": email,
		"shareInvitationToken": e.DB.Invitation(t, share, email)})
}

// VerifyGuest marks the sessions of email on share verified, as its
// invitation's link or a mailed code would, for tests about what a
// verified session may do rather than how it was verified.
func (d *DB) VerifyGuest(t testing.TB, share uuid.UUID, email string) {
	t.Helper()
	tag, err := d.Pool.Exec(context.Background(), `
		UPDATE guest_sessions gs SET verified = true FROM guests g
		WHERE g.id = gs.guest_id AND g.share_id = $1 AND g.email = $2`, share, auth.NormalizeEmail(email))
	if err != nil || tag.RowsAffected() == 0 {
		t.Fatalf("verify guest %s: %v (%d sessions)", email, err, tag.RowsAffected())
	}
}

// AddGuest opens on c a verified guest session of a share (permission
// decide, made by an admin, the guest invited) of a draft of a new
// organization, beside whatever session c holds: the sweeps over every
// operation call the guest paths with it. It returns the shared creative.
func (e *Env) AddGuest(t testing.TB, c *Client) uuid.UUID {
	t.Helper()
	org := e.DB.Org(t, "Shared Ads "+uuid.NewString()[:8])
	author, _ := e.DB.User(t, "Sharing Author")
	admin, _ := e.DB.User(t, "Sharing Admin")
	e.DB.Member(t, org, author, "author")
	e.DB.Member(t, org, admin, "admin")
	creative := e.DB.DraftCreative(t, org, author)
	share, token := e.DB.Share(t, org, admin, "decide", creative)
	if r := e.OpenInvited(t, c, share, token, "guest-"+uuid.NewString()[:8]+"@brand.test"); r.Status != http.StatusCreated {
		t.Fatalf("guest session: %d %s", r.Status, r.Body)
	}
	return creative
}
