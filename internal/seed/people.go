package seed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/auth"
	"creativeapi/internal/store"
)

// demoOrgs and demoUsers are the demo logins of README.md ("Two commands").
var (
	demoOrgs = []struct{ name, slug string }{
		{"Acme Ads", "acme"},
		{"Globex", "globex"},
	}
	demoUsers = []struct{ email, name, org, role string }{
		{"admin@acme.test", "Ada Admin", "acme", "admin"},
		{"reviewer@acme.test", "Rita Reviewer", "acme", "reviewer"},
		{"author@acme.test", "Alex Author", "acme", "author"},
		{"viewer@acme.test", "Vic Viewer", "acme", "viewer"},
		{"admin@globex.test", "Gus Globex", "globex", "admin"},
	}
	// demoOperator is platform staff (users.operator), a member of no
	// organization: the operator API's demo login.
	demoOperator = struct{ email, name string }{"operator@creativeapi.test", "Opal Operator"}
)

// DemoEmails are the demo users' emails, in the order `serve --seed` lists them.
func DemoEmails() []string {
	emails := make([]string, 0, len(demoUsers)+1)
	for _, u := range demoUsers {
		emails = append(emails, u.email)
	}
	return append(emails, demoOperator.email)
}

// seedPeople adds the demo organizations, users and memberships that are
// missing. The password is hashed only when a user is created, so re-runs
// are quick, and once per run: the demo users share one hash (one salt) of
// the published demo password, one argon2id run and its memory instead of
// one per user, which kept a first start-up's peak memory above the rest
// of its life.
func seedPeople(ctx context.Context, s *store.Store, log *slog.Logger) (People, error) {
	hash := sync.OnceValues(func() (string, error) { return auth.HashPassword(DemoPassword, auth.DefaultPasswordParams) })
	orgs := map[string]uuid.UUID{}
	for _, o := range demoOrgs {
		id, created, err := ensureOrg(ctx, s.Q, o.name, o.slug)
		if err != nil {
			return People{}, fmt.Errorf("organization %s: %w", o.slug, err)
		}
		orgs[o.slug] = id
		log.Info("seed organization", "slug", o.slug, "created", created)
	}
	people := People{Acme: orgs["acme"], Globex: orgs["globex"], Users: map[string]uuid.UUID{}}
	for _, u := range demoUsers {
		id, created, err := ensureUser(ctx, s.Q, u.email, u.name, hash)
		if err != nil {
			return People{}, fmt.Errorf("user %s: %w", u.email, err)
		}
		people.Users[u.email] = id
		n, err := s.Q.MembershipInsertIfAbsent(ctx, db.MembershipInsertIfAbsentParams{OrganizationID: orgs[u.org], UserID: id, Role: u.role})
		if err != nil {
			return People{}, fmt.Errorf("membership of %s: %w", u.email, err)
		}
		log.Info("seed user", "email", u.email, "created", created, "membership_created", n == 1, "org", u.org, "role", u.role)
	}
	id, created, err := ensureUser(ctx, s.Q, demoOperator.email, demoOperator.name, hash)
	if err != nil {
		return People{}, fmt.Errorf("user %s: %w", demoOperator.email, err)
	}
	if _, err := s.Q.UserSetOperator(ctx, db.UserSetOperatorParams{Email: demoOperator.email, Operator: true}); err != nil {
		return People{}, fmt.Errorf("make %s an operator: %w", demoOperator.email, err)
	}
	people.Users[demoOperator.email] = id
	log.Info("seed operator", "email", demoOperator.email, "created", created)
	return people, nil
}

// ensureOrg returns the id of the organization with slug, creating it if absent.
func ensureOrg(ctx context.Context, q *db.Queries, name, slug string) (uuid.UUID, bool, error) {
	id, err := q.OrganizationInsertIfAbsent(ctx, db.OrganizationInsertIfAbsentParams{Name: name, Slug: slug})
	if err == nil {
		return id, true, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return uuid.Nil, false, err
	}
	org, err := q.OrganizationGetBySlug(ctx, slug)
	return org.ID, false, err
}

// ensureUser returns the id of the user with email, creating it with the
// demo password's hash if absent.
func ensureUser(ctx context.Context, q *db.Queries, email, name string, hashed func() (string, error)) (uuid.UUID, bool, error) {
	u, err := q.UserGetByEmail(ctx, email)
	if err == nil {
		return u.ID, false, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return uuid.Nil, false, err
	}
	hash, err := hashed()
	if err != nil {
		return uuid.Nil, false, err
	}
	id, err := q.UserInsertIfAbsent(ctx, db.UserInsertIfAbsentParams{Email: email, Name: name, PasswordHash: hash})
	if err == nil {
		return id, true, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return uuid.Nil, false, err
	}
	// Another seed run created it in between.
	u, err = q.UserGetByEmail(ctx, email)
	return u.ID, false, err
}
