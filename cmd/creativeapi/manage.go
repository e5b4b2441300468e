package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"creativeapi/internal/directory"
	"creativeapi/internal/review"
	"creativeapi/internal/store"
)

const usersUsage = `usage:
  creativeapi users create --email E --name N --password-stdin [--operator]
  creativeapi users list
  creativeapi users set-password --email E --password-stdin
  creativeapi users set-operator --email E [--off]

Passwords are read from stdin (one line), never from arguments:
  echo "$PASSWORD" | creativeapi users create --email ada@example.com --name "Ada" --password-stdin
`

const orgsUsage = `usage:
  creativeapi orgs create --name N --slug S
  creativeapi orgs add-member --org SLUG --email E --role admin|reviewer|author|viewer
  creativeapi orgs remove-member --org SLUG --email E
`

// cmdUsers runs `creativeapi users …`.
func cmdUsers(ctx context.Context, e env, args []string) error {
	sub, args, err := subcommand("users", args, "create", "list", "set-password", "set-operator")
	if err != nil {
		return err
	}
	fs := newFlags("users " + sub)
	switch sub {
	case "create":
		email := fs.String("email", "", "the user's email (unique, case-insensitive)")
		name := fs.String("name", "", "the user's display name")
		stdin := fs.Bool("password-stdin", false, "read the password from stdin")
		operator := fs.Bool("operator", false, "make the user a platform operator (settles chain transfers)")
		if err := parse(fs, args); err != nil {
			return err
		}
		password, err := readPassword(e.stdin, *stdin)
		if err != nil {
			return err
		}
		return withDirectory(ctx, e, func(m *directory.Manager) error {
			u, err := m.CreateUser(ctx, *email, *name, password)
			if err != nil {
				return err
			}
			kind := "user"
			if *operator {
				if err := m.SetOperator(ctx, u.Email, true); err != nil {
					return err
				}
				kind = "operator"
			}
			fmt.Fprintf(e.stdout, "created %s %s %s\n", kind, u.Email, u.ID)
			return nil
		})
	case "list":
		if err := parse(fs, args); err != nil {
			return err
		}
		return withDirectory(ctx, e, func(m *directory.Manager) error {
			users, err := m.ListUsers(ctx)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tEMAIL\tNAME\tMEMBERSHIPS")
			for _, u := range users {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", u.ID, u.Email, u.Name, strings.Join(u.Memberships, ","))
			}
			return tw.Flush()
		})
	case "set-password":
		email := fs.String("email", "", "the user's email")
		stdin := fs.Bool("password-stdin", false, "read the new password from stdin")
		if err := parse(fs, args); err != nil {
			return err
		}
		password, err := readPassword(e.stdin, *stdin)
		if err != nil {
			return err
		}
		return withDirectory(ctx, e, func(m *directory.Manager) error {
			revoked, err := m.SetPassword(ctx, *email, password)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "password of %s changed; %d session(s) signed out\n", *email, revoked)
			return nil
		})
	case "set-operator":
		email := fs.String("email", "", "the user's email")
		off := fs.Bool("off", false, "make the user an operator no longer")
		if err := parse(fs, args); err != nil {
			return err
		}
		return withDirectory(ctx, e, func(m *directory.Manager) error {
			if err := m.SetOperator(ctx, *email, !*off); err != nil {
				return err
			}
			state := "now"
			if *off {
				state = "no longer"
			}
			fmt.Fprintf(e.stdout, "%s is %s an operator\n", *email, state)
			return nil
		})
	}
	return fmt.Errorf("%s: subcommand not handled", sub)
}

// cmdOrgs runs `creativeapi orgs …`.
func cmdOrgs(ctx context.Context, e env, args []string) error {
	sub, args, err := subcommand("orgs", args, "create", "add-member", "remove-member")
	if err != nil {
		return err
	}
	fs := newFlags("orgs " + sub)
	switch sub {
	case "create":
		name := fs.String("name", "", "the organization's name")
		slug := fs.String("slug", "", "its short unique name (lowercase letters, digits, hyphens)")
		if err := parse(fs, args); err != nil {
			return err
		}
		return withDirectory(ctx, e, func(m *directory.Manager) error {
			o, err := m.CreateOrg(ctx, *name, *slug)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "created organization %s (%s) %s\n", o.Slug, o.Name, o.ID)
			return nil
		})
	case "add-member", "remove-member":
		org := fs.String("org", "", "the organization's slug")
		email := fs.String("email", "", "the user's email")
		role := new(string)
		if sub == "add-member" {
			role = fs.String("role", "", "one of "+strings.Join(review.RoleNames(), ", "))
		}
		if err := parse(fs, args); err != nil {
			return err
		}
		return withDirectory(ctx, e, func(m *directory.Manager) error {
			if sub == "remove-member" {
				if err := m.RemoveMember(ctx, *org, *email); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "removed %s from %s\n", *email, *org)
				return nil
			}
			previous, err := m.AddMember(ctx, *org, *email, *role)
			if err != nil {
				return err
			}
			if previous == "" {
				fmt.Fprintf(e.stdout, "added %s to %s as %s\n", *email, *org, *role)
			} else {
				fmt.Fprintf(e.stdout, "changed the role of %s in %s from %s to %s\n", *email, *org, previous, *role)
			}
			return nil
		})
	}
	return fmt.Errorf("%s: subcommand not handled", sub)
}

// maxPasswordInput bounds what is read from stdin.
const maxPasswordInput = 4096

// readPassword reads the password's line from stdin; --password-stdin is
// required so a password never lands in argv or the shell history.
func readPassword(stdin io.Reader, fromStdin bool) (string, error) {
	if !fromStdin {
		return "", usagef("--password-stdin is required: pipe the password on stdin (passwords are never taken from arguments)")
	}
	b, err := io.ReadAll(io.LimitReader(stdin, maxPasswordInput+1))
	if err != nil {
		return "", fmt.Errorf("read the password from stdin: %w", err)
	}
	if len(b) > maxPasswordInput {
		return "", fmt.Errorf("stdin holds more than %d bytes; pipe only the password", maxPasswordInput)
	}
	s := strings.TrimSuffix(string(b), "\n")
	s = strings.TrimSuffix(s, "\r")
	if strings.ContainsAny(s, "\r\n") {
		return "", errors.New("stdin holds more than one line; pipe only the password")
	}
	return s, nil
}

// withDirectory opens the configured database for one management command.
func withDirectory(ctx context.Context, e env, fn func(*directory.Manager) error) error {
	return withStore(ctx, e, func(st *store.Store) error { return fn(directory.New(st)) })
}
