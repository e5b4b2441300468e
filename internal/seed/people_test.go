package seed_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"

	"creativeapi/internal/auth"
	"creativeapi/internal/seed"
	"creativeapi/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestSeedingTwiceAddsNoDuplicatePeople(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testenv.NewDB(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	counts := func() [3]int {
		t.Helper()
		var c [3]int
		err := d.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM users), (SELECT count(*) FROM organizations),
			(SELECT count(*) FROM memberships)`).Scan(&c[0], &c[1], &c[2])
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if err := seed.Run(ctx, d.Store, log, seed.Options{}); err != nil {
		t.Fatal(err)
	}
	first := counts()
	if err := seed.Run(ctx, d.Store, log, seed.Options{}); err != nil {
		t.Fatal(err)
	}
	if second := counts(); second != first || first != [3]int{6, 2, 5} {
		t.Fatalf("users, organizations, memberships: first run %v, second run %v, want [6 2 5] both times", first, second)
	}

	rows, err := d.Pool.Query(ctx, `SELECT o.slug || ' ' || o.name || ' ' || u.email || ' ' || m.role
		FROM memberships m JOIN users u ON u.id = m.user_id JOIN organizations o ON o.id = m.organization_id
		ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	want := []string{
		"acme Acme Ads admin@acme.test admin",
		"acme Acme Ads author@acme.test author",
		"acme Acme Ads reviewer@acme.test reviewer",
		"acme Acme Ads viewer@acme.test viewer",
		"globex Globex admin@globex.test admin",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("memberships\n%q\nwant\n%q", got, want)
	}

	var operators []string
	rows, err = d.Pool.Query(ctx, "SELECT email FROM users WHERE operator ORDER BY email")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		operators = append(operators, s)
	}
	if !slices.Equal(operators, []string{"operator@creativeapi.test"}) {
		t.Fatalf("operators %q, want the demo operator alone", operators)
	}

	var hash string
	if err := d.Pool.QueryRow(ctx, "SELECT password_hash FROM users WHERE email = 'author@acme.test'").Scan(&hash); err != nil {
		t.Fatal(err)
	}
	if ok, err := auth.VerifyPassword(hash, seed.DemoPassword); !ok || err != nil {
		t.Fatalf("the demo password does not verify (%v)", err)
	}
}
