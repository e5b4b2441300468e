package directory_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"creativeapi/internal/auth"
	"creativeapi/internal/directory"
	"creativeapi/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func setup(t *testing.T) (*directory.Manager, *testenv.DB) {
	t.Helper()
	d := testenv.NewDB(t)
	return directory.New(d.Store), d
}

func TestUsersAreCreatedListedAndGetNewPasswords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, d := setup(t)

	u, err := m.CreateUser(ctx, " Ada@Example.test ", "Ada Lovelace", "first-password")
	if err != nil {
		t.Fatal(err)
	}
	// Stored in the one form sign-in looks emails up by.
	if u.Email != "ada@example.test" || u.Name != "Ada Lovelace" {
		t.Errorf("created %+v", u)
	}
	var hash string
	if err := d.Pool.QueryRow(ctx, "SELECT password_hash FROM users WHERE id = $1", u.ID).Scan(&hash); err != nil {
		t.Fatal(err)
	}
	if ok, err := auth.VerifyPassword(hash, "first-password"); !ok || err != nil || !strings.HasPrefix(hash, "$argon2id$v=19$m=7168,t=5,p=1$") {
		t.Fatalf("stored hash %q does not verify with the default parameters (%v)", hash, err)
	}

	if _, err := m.CreateUser(ctx, "bob@example.test", "Bob", "bob-password"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.CreateOrg(ctx, "Acme Ads", "acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.AddMember(ctx, "acme", "ada@example.test", "reviewer"); err != nil {
		t.Fatal(err)
	}
	users, err := m.ListUsers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 2 || users[0].ID != u.ID || !slices.Equal(users[0].Memberships, []string{"acme:reviewer"}) ||
		users[1].Email != "bob@example.test" || users[1].Memberships != nil {
		t.Fatalf("list = %+v", users)
	}

	// A password change signs the user out everywhere.
	if _, err := d.Pool.Exec(ctx, `INSERT INTO sessions (user_id, token_hash, csrf_token, idle_expires_at, absolute_expires_at)
		VALUES ($1, 'x', 'y', now() + interval '1 hour', now() + interval '1 day')`, u.ID); err != nil {
		t.Fatal(err)
	}
	revoked, err := m.SetPassword(ctx, "ADA@example.test", "second-password")
	if err != nil || revoked != 1 {
		t.Fatalf("set-password: revoked %d, %v", revoked, err)
	}
	if err := d.Pool.QueryRow(ctx, "SELECT password_hash FROM users WHERE id = $1", u.ID).Scan(&hash); err != nil {
		t.Fatal(err)
	}
	if ok, _ := auth.VerifyPassword(hash, "second-password"); !ok {
		t.Error("the new password does not verify")
	}
	if ok, _ := auth.VerifyPassword(hash, "first-password"); ok {
		t.Error("the old password still verifies")
	}
}

func TestMembershipsAreAddedChangedAndRemoved(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, _ := setup(t)
	if _, err := m.CreateUser(ctx, "rita@example.test", "Rita", "rita-password"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.CreateOrg(ctx, "Globex", "globex"); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name     string
		role     string
		previous string
	}{
		{"a new member has no previous role", "author", ""},
		{"adding again changes the role", "admin", "author"},
	}
	for _, s := range steps {
		previous, err := m.AddMember(ctx, "globex", "Rita@example.test", s.role)
		if err != nil || previous != s.previous {
			t.Fatalf("%s: previous %q, %v", s.name, previous, err)
		}
	}
	if err := m.RemoveMember(ctx, "globex", "rita@example.test"); err != nil {
		t.Fatal(err)
	}
	err := m.RemoveMember(ctx, "globex", "rita@example.test")
	if err == nil || err.Error() != "rita@example.test is not a member of globex" {
		t.Fatalf("second removal: %v", err)
	}
}

func TestBadInputIsRefusedWithOneClearLine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, _ := setup(t)
	if _, err := m.CreateUser(ctx, "taken@example.test", "Taken", "taken-password"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.CreateOrg(ctx, "Acme Ads", "acme"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"a duplicate email, in any case, is refused", func() error {
			_, err := m.CreateUser(ctx, "TAKEN@example.test", "Other", "other-password")
			return err
		}, "a user with email taken@example.test already exists"},
		{"a short password is refused", func() error {
			_, err := m.CreateUser(ctx, "new@example.test", "New", "short")
			return err
		}, "the password is shorter than 8 characters"},
		{"an empty password is refused", func() error {
			_, err := m.CreateUser(ctx, "new@example.test", "New", "")
			return err
		}, "the password is empty: pipe it on stdin with --password-stdin"},
		{"a missing email is refused", func() error {
			_, err := m.CreateUser(ctx, "", "New", "long-enough")
			return err
		}, "--email is required"},
		{"a malformed email is refused", func() error {
			_, err := m.CreateUser(ctx, "not-an-email", "New", "long-enough")
			return err
		}, `"not-an-email" is not an email address`},
		{"a name with a control character is refused", func() error {
			_, err := m.CreateUser(ctx, "new@example.test", "New\nLine", "long-enough")
			return err
		}, `--name "New\nLine" contains a control character`},
		{"an email with a control character is refused", func() error {
			_, err := m.CreateUser(ctx, "new\x00@example.test", "New", "long-enough")
			return err
		}, `"new\x00@example.test" is not an email address`},
		{"a missing name is refused", func() error {
			_, err := m.CreateUser(ctx, "new@example.test", " ", "long-enough")
			return err
		}, "--name is required"},
		{"a password for an unknown user is refused", func() error {
			_, err := m.SetPassword(ctx, "ghost@example.test", "long-enough")
			return err
		}, "no user with email ghost@example.test"},
		{"a short new password is refused", func() error {
			_, err := m.SetPassword(ctx, "taken@example.test", "1234567")
			return err
		}, "the password is shorter than 8 characters"},
		{"a duplicate slug is refused", func() error {
			_, err := m.CreateOrg(ctx, "Acme Again", "acme")
			return err
		}, "an organization with slug acme already exists"},
		{"a slug with capitals is refused", func() error {
			_, err := m.CreateOrg(ctx, "Acme", "Acme")
			return err
		}, `slug "Acme": use 1-64 lowercase letters, digits and inner hyphens, such as acme-ads`},
		{"a missing slug is refused", func() error {
			_, err := m.CreateOrg(ctx, "Acme", "")
			return err
		}, "--slug is required"},
		{"an unknown role is refused", func() error {
			_, err := m.AddMember(ctx, "acme", "taken@example.test", "owner")
			return err
		}, `unknown role "owner" (want one of admin, reviewer, author, viewer)`},
		{"a missing role is refused", func() error {
			_, err := m.AddMember(ctx, "acme", "taken@example.test", "")
			return err
		}, "--role is required (one of admin, reviewer, author, viewer)"},
		{"an unknown organization is refused", func() error {
			_, err := m.AddMember(ctx, "nope", "taken@example.test", "viewer")
			return err
		}, "no organization with slug nope"},
		{"an unknown user is refused", func() error {
			_, err := m.AddMember(ctx, "acme", "ghost@example.test", "viewer")
			return err
		}, "no user with email ghost@example.test"},
		{"removing from an unknown organization is refused", func() error {
			return m.RemoveMember(ctx, "nope", "taken@example.test")
		}, "no organization with slug nope"},
		{"a missing --org is refused", func() error {
			return m.RemoveMember(ctx, "", "taken@example.test")
		}, "--org is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if err == nil || err.Error() != tt.want {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}
