package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"creativeapi/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// cli runs the binary's commands in-process against one test database.
type cli struct {
	t  *testing.T
	db *testenv.DB
}

func newCLI(t *testing.T) *cli { return &cli{t: t, db: testenv.NewDB(t)} }

// run runs args with stdin and returns stdout and the error.
func (c *cli) run(stdin string, args ...string) (string, error) {
	c.t.Helper()
	getenv := func(k string) string {
		switch k {
		case "DATABASE_URL":
			return c.db.URL
		case "LOG_LEVEL":
			return "error"
		}
		return ""
	}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, getenv, strings.NewReader(stdin), &stdout, &stderr)
	return stdout.String(), err
}

func (c *cli) ok(stdin string, args ...string) string {
	c.t.Helper()
	out, err := c.run(stdin, args...)
	if err != nil {
		c.t.Fatalf("%s: %v", strings.Join(args, " "), err)
	}
	return out
}

func TestManagementCommandsManageUsersAndOrganizations(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	if out := c.ok("ada-password\n", "users", "create", "--email", "ada@example.test", "--name", "Ada Admin", "--password-stdin"); !strings.HasPrefix(out, "created user ada@example.test ") {
		t.Errorf("create: %q", out)
	}
	c.ok("", "orgs", "create", "--name", "Acme Ads", "--slug", "acme")
	if out := c.ok("", "orgs", "add-member", "--org", "acme", "--email", "ada@example.test", "--role", "author"); out != "added ada@example.test to acme as author\n" {
		t.Errorf("add-member: %q", out)
	}
	if out := c.ok("", "orgs", "add-member", "--org", "acme", "--email", "ada@example.test", "--role", "admin"); out != "changed the role of ada@example.test in acme from author to admin\n" {
		t.Errorf("add-member again: %q", out)
	}
	list := c.ok("", "users", "list")
	if lines := strings.Split(strings.TrimSpace(list), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "ID") ||
		!strings.Contains(lines[1], "ada@example.test") || !strings.Contains(lines[1], "Ada Admin") || !strings.HasSuffix(lines[1], "acme:admin") {
		t.Errorf("list:\n%s", list)
	}
	if out := c.ok("new-password\r\n", "users", "set-password", "--email", "ada@example.test", "--password-stdin"); out != "password of ada@example.test changed; 0 session(s) signed out\n" {
		t.Errorf("set-password: %q", out)
	}
	if out := c.ok("", "orgs", "remove-member", "--org", "acme", "--email", "ada@example.test"); out != "removed ada@example.test from acme\n" {
		t.Errorf("remove-member: %q", out)
	}
	if list := c.ok("", "users", "list"); strings.Contains(list, "acme:") {
		t.Errorf("membership still listed:\n%s", list)
	}
}

func TestManagementCommandsRefuseBadInput(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.ok("taken-password", "users", "create", "--email", "taken@example.test", "--name", "Taken", "--password-stdin")
	tests := []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"a password is never taken from argv", "", []string{"users", "create", "--email", "a@example.test", "--name", "A", "--password", "secret-pw"}, "flag provided but not defined: -password"},
		{"--password-stdin is required", "long-enough", []string{"users", "create", "--email", "a@example.test", "--name", "A"}, "--password-stdin is required: pipe the password on stdin (passwords are never taken from arguments)"},
		{"a missing email", "long-enough", []string{"users", "create", "--name", "A", "--password-stdin"}, "--email is required"},
		{"a duplicate email", "long-enough", []string{"users", "create", "--email", "Taken@example.test", "--name", "T", "--password-stdin"}, "a user with email taken@example.test already exists"},
		{"a short password", "short\n", []string{"users", "create", "--email", "a@example.test", "--name", "A", "--password-stdin"}, "the password is shorter than 8 characters"},
		{"more than one line on stdin", "one-line\ntwo-lines\n", []string{"users", "set-password", "--email", "taken@example.test", "--password-stdin"}, "stdin holds more than one line; pipe only the password"},
		{"an unknown user", "long-enough", []string{"users", "set-password", "--email", "ghost@example.test", "--password-stdin"}, "no user with email ghost@example.test"},
		{"an unknown role", "", []string{"orgs", "add-member", "--org", "acme", "--email", "taken@example.test", "--role", "owner"}, `unknown role "owner" (want one of admin, reviewer, author, viewer)`},
		{"an unknown organization", "", []string{"orgs", "add-member", "--org", "nope", "--email", "taken@example.test", "--role", "viewer"}, "no organization with slug nope"},
		{"a stray argument", "", []string{"orgs", "create", "--name", "Acme", "acme"}, `orgs create: unexpected argument "acme"`},
		{"an unknown subcommand", "", []string{"users", "delete"}, `users: unknown subcommand "delete"`},
		{"a missing subcommand", "", []string{"orgs"}, "orgs: missing subcommand"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.run(tt.stdin, tt.args...)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}

// TestUsersOperatorFlagIsSetAndClearedFromTheCommandLine: create
// --operator makes an operator; set-operator turns it off and on again.
func TestUsersOperatorFlagIsSetAndClearedFromTheCommandLine(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	operator := func(email string) bool {
		t.Helper()
		var on bool
		if err := c.db.Pool.QueryRow(context.Background(), "SELECT operator FROM users WHERE email = $1", email).Scan(&on); err != nil {
			t.Fatal(err)
		}
		return on
	}
	if out := c.ok("ops-password\n", "users", "create", "--email", "ops@example.test", "--name", "Otto Ops", "--password-stdin", "--operator"); !strings.HasPrefix(out, "created operator ops@example.test ") {
		t.Errorf("create --operator: %q", out)
	}
	c.ok("ada-password\n", "users", "create", "--email", "ada@example.test", "--name", "Ada", "--password-stdin")
	if !operator("ops@example.test") || operator("ada@example.test") {
		t.Fatal("create: want ops an operator and ada not")
	}
	if out := c.ok("", "users", "set-operator", "--email", "OPS@example.test", "--off"); out != "OPS@example.test is no longer an operator\n" || operator("ops@example.test") {
		t.Errorf("set-operator --off: %q, operator %v", out, operator("ops@example.test"))
	}
	if out := c.ok("", "users", "set-operator", "--email", "ada@example.test"); out != "ada@example.test is now an operator\n" || !operator("ada@example.test") {
		t.Errorf("set-operator: %q", out)
	}
	for args, want := range map[string]string{
		"--email ghost@example.test": "no user with email ghost@example.test",
		"--off":                      "--email is required",
	} {
		if _, err := c.run("", append([]string{"users", "set-operator"}, strings.Fields(args)...)...); err == nil || err.Error() != want {
			t.Errorf("set-operator %s: %v, want %q", args, err, want)
		}
	}
}
