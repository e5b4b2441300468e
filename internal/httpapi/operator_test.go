package httpapi_test

import (
	"net/http"
	"testing"

	"creativeapi/gen/api"
	"creativeapi/internal/testenv"
)

// TestUserOperatorIsShownInMeAndSignIn: user.operator is always present,
// false for everyone but the users the command line made operators.
func TestUserOperatorIsShownInMeAndSignIn(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, id := env.SignedIn(t, "Olga Operator")
	me := func() api.Session {
		t.Helper()
		var s api.Session
		r := c.Do(http.MethodGet, "/api/v1/me", nil)
		if r.Status != http.StatusOK {
			t.Fatalf("me: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &s)
		return s
	}
	if me().User.Operator {
		t.Fatal("a new user is an operator")
	}
	execDepositSQL(t, env, "UPDATE users SET operator = true WHERE id = $1", id)
	if !me().User.Operator {
		t.Fatal("an operator reads operator false in /me")
	}
	var email string
	if err := env.DB.Pool.QueryRow(t.Context(), "SELECT email FROM users WHERE id = $1", id).Scan(&email); err != nil {
		t.Fatal(err)
	}
	fresh := env.Client(t)
	r := fresh.SignIn(email, testenv.Password)
	var s api.Session
	r.JSON(t, &s)
	if r.Status != http.StatusOK || !s.User.Operator {
		t.Fatalf("sign-in: %d %s", r.Status, r.Body)
	}
}
