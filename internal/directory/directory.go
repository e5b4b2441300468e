// Package directory is organization membership's one home: who is a
// member of which organization with which role, as the API checks and
// lists it (membership.go), and the management of users, organizations
// and memberships for the command line (there is no sign-up endpoint in
// v1), whose refusals are errors fit to print as the command's one-line
// answer.
package directory

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"creativeapi/gen/db"
	"creativeapi/internal/auth"
	"creativeapi/internal/review"
	"creativeapi/internal/store"
)

const (
	// MinPasswordLen keeps trivially short passwords out.
	MinPasswordLen = 8
	// maxPasswordLen matches the sign-in schema, so every password set here
	// can be used to sign in.
	maxPasswordLen = 1024
	// maxEmailLen matches the sign-in schema.
	maxEmailLen = 254
)

var slugPattern = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$`)

// Manager runs the management commands on a store.
type Manager struct {
	store  *store.Store
	params auth.PasswordParams
}

// New returns a Manager hashing passwords with auth.DefaultPasswordParams.
func New(s *store.Store) *Manager {
	return &Manager{store: s, params: auth.DefaultPasswordParams}
}

// User is a user as the commands show it.
type User struct {
	ID    uuid.UUID
	Email string
	Name  string
	// Memberships are "slug:role" items, by slug.
	Memberships []string
}

// Org is an organization as the commands show it.
type Org struct {
	ID   uuid.UUID
	Name string
	Slug string
}

// CreateUser adds a user with password.
func (m *Manager) CreateUser(ctx context.Context, email, name, password string) (User, error) {
	email, name = auth.NormalizeEmail(strings.TrimSpace(email)), strings.TrimSpace(name)
	if err := checkEmail(email); err != nil {
		return User{}, err
	}
	if err := checkName(name); err != nil {
		return User{}, err
	}
	if err := checkPassword(password); err != nil {
		return User{}, err
	}
	hash, err := auth.HashPassword(password, m.params)
	if err != nil {
		return User{}, err
	}
	row, err := m.store.Q.UserInsert(ctx, db.UserInsertParams{Email: email, Name: name, PasswordHash: hash})
	if err != nil {
		if errors.Is(err, store.ErrConflict) {
			return User{}, fmt.Errorf("a user with email %s already exists", email)
		}
		return User{}, err
	}
	return User{ID: row.ID, Email: row.Email, Name: row.Name}, nil
}

// ListUsers returns every user with their memberships, by email.
func (m *Manager) ListUsers(ctx context.Context) ([]User, error) {
	rows, err := m.store.Q.UserList(ctx)
	if err != nil {
		return nil, err
	}
	users := make([]User, len(rows))
	for i, r := range rows {
		users[i] = User{ID: r.ID, Email: r.Email, Name: r.Name}
		if r.Memberships != "" {
			users[i].Memberships = strings.Split(r.Memberships, ",")
		}
	}
	return users, nil
}

// SetPassword replaces a user's password and revokes their sessions, so a
// password reset also ends any session an attacker may hold. It returns the
// number of sessions revoked.
func (m *Manager) SetPassword(ctx context.Context, email, password string) (int64, error) {
	email = auth.NormalizeEmail(strings.TrimSpace(email))
	if email == "" {
		return 0, errors.New("--email is required")
	}
	if err := checkPassword(password); err != nil {
		return 0, err
	}
	hash, err := auth.HashPassword(password, m.params)
	if err != nil {
		return 0, err
	}
	var revoked int64
	err = m.store.InTx(ctx, func(q store.Tx) error {
		id, err := q.UserSetPassword(ctx, db.UserSetPasswordParams{Email: email, PasswordHash: hash})
		if err != nil {
			return err
		}
		revoked, err = q.SessionRevokeAllForUser(ctx, id)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return 0, fmt.Errorf("no user with email %s", email)
	}
	return revoked, err
}

// SetOperator makes the user with email a platform operator (on) or not.
func (m *Manager) SetOperator(ctx context.Context, email string, on bool) error {
	email = auth.NormalizeEmail(strings.TrimSpace(email))
	if email == "" {
		return errors.New("--email is required")
	}
	_, err := m.store.Q.UserSetOperator(ctx, db.UserSetOperatorParams{Email: email, Operator: on})
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no user with email %s", email)
	}
	return err
}

// CreateOrg adds an organization.
func (m *Manager) CreateOrg(ctx context.Context, name, slug string) (Org, error) {
	name, slug = strings.TrimSpace(name), strings.TrimSpace(slug)
	if err := checkName(name); err != nil {
		return Org{}, err
	}
	if slug == "" {
		return Org{}, errors.New("--slug is required")
	}
	if !slugPattern.MatchString(slug) {
		return Org{}, fmt.Errorf("slug %q: use 1-64 lowercase letters, digits and inner hyphens, such as acme-ads", slug)
	}
	row, err := m.store.Q.OrganizationInsert(ctx, db.OrganizationInsertParams{Name: name, Slug: slug})
	if err != nil {
		if errors.Is(err, store.ErrConflict) {
			return Org{}, fmt.Errorf("an organization with slug %s already exists", slug)
		}
		return Org{}, err
	}
	return Org{ID: row.ID, Name: row.Name, Slug: row.Slug}, nil
}

// AddMember makes the user a member of the organization with role, or
// changes their role; previous is the role they had, "" when new.
func (m *Manager) AddMember(ctx context.Context, slug, email, role string) (previous string, err error) {
	if err := checkRole(role); err != nil {
		return "", err
	}
	org, user, err := m.orgAndUser(ctx, slug, email)
	if err != nil {
		return "", err
	}
	previous, err = m.store.Q.MembershipUpsert(ctx, db.MembershipUpsertParams{OrganizationID: org.ID, UserID: user.ID, Role: role})
	return previous, err
}

// RemoveMember ends the user's membership of the organization.
func (m *Manager) RemoveMember(ctx context.Context, slug, email string) error {
	org, user, err := m.orgAndUser(ctx, slug, email)
	if err != nil {
		return err
	}
	n, err := m.store.Q.MembershipDelete(ctx, db.MembershipDeleteParams{OrganizationID: org.ID, UserID: user.ID})
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%s is not a member of %s", user.Email, org.Slug)
	}
	return nil
}

func (m *Manager) orgAndUser(ctx context.Context, slug, email string) (db.OrganizationGetBySlugRow, db.UserGetByEmailRow, error) {
	slug, email = strings.TrimSpace(slug), auth.NormalizeEmail(strings.TrimSpace(email))
	if slug == "" {
		return db.OrganizationGetBySlugRow{}, db.UserGetByEmailRow{}, errors.New("--org is required")
	}
	if email == "" {
		return db.OrganizationGetBySlugRow{}, db.UserGetByEmailRow{}, errors.New("--email is required")
	}
	org, err := m.store.Q.OrganizationGetBySlug(ctx, slug)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			err = fmt.Errorf("no organization with slug %s", slug)
		}
		return db.OrganizationGetBySlugRow{}, db.UserGetByEmailRow{}, err
	}
	user, err := m.store.Q.UserGetByEmail(ctx, email)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			err = fmt.Errorf("no user with email %s", email)
		}
		return db.OrganizationGetBySlugRow{}, db.UserGetByEmailRow{}, err
	}
	return org, user, nil
}

func checkEmail(email string) error {
	switch {
	case email == "":
		return errors.New("--email is required")
	case len(email) > maxEmailLen:
		return fmt.Errorf("email is longer than %d characters", maxEmailLen)
	case strings.Count(email, "@") != 1 || strings.HasPrefix(email, "@") || strings.HasSuffix(email, "@") ||
		strings.ContainsAny(email, " ") || strings.ContainsFunc(email, unicode.IsControl):
		return fmt.Errorf("%q is not an email address", email)
	}
	return nil
}

// checkName refuses an empty name and control characters, which the API
// refuses in names too (openapi.yaml's single-line text).
func checkName(name string) error {
	switch {
	case name == "":
		return errors.New("--name is required")
	case strings.ContainsFunc(name, unicode.IsControl):
		return fmt.Errorf("--name %q contains a control character", name)
	}
	return nil
}

func checkPassword(password string) error {
	switch n := utf8.RuneCountInString(password); {
	case n == 0:
		return errors.New("the password is empty: pipe it on stdin with --password-stdin")
	case n < MinPasswordLen:
		return fmt.Errorf("the password is shorter than %d characters", MinPasswordLen)
	case n > maxPasswordLen:
		return fmt.Errorf("the password is longer than %d characters", maxPasswordLen)
	}
	return nil
}

// checkRole accepts the membership roles of the review rules (review.Roles).
func checkRole(role string) error {
	names := review.RoleNames()
	if role == "" {
		return fmt.Errorf("--role is required (one of %s)", strings.Join(names, ", "))
	}
	if !review.Role(role).Valid() {
		return fmt.Errorf("unknown role %q (want one of %s)", role, strings.Join(names, ", "))
	}
	return nil
}
