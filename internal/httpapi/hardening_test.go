package httpapi_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"

	"creativeapi/internal/httpapi"
	"creativeapi/internal/review"
	"creativeapi/internal/testenv"
)

// Regression tests of the rules an outside review found broken: each is
// named after the rule and goes through the real server.

// fieldError is the one field error a test expects.
type fieldError struct{ field, code string }

// only fails unless r is a 422 naming exactly want.
func only(t *testing.T, r *testenv.Response, want fieldError) {
	t.Helper()
	if r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("got %d %s, want 422 on %s", r.Status, r.Body, want.field)
	}
	p := r.Problem(t)
	if len(p.FieldErrors) != 1 || p.FieldErrors[0].Field != want.field || p.FieldErrors[0].Code != want.code {
		t.Fatalf("field errors %s, want only %s %s", r.Body, want.field, want.code)
	}
}

func TestExpectedVersionIsComparedWithoutBeingCutToFit(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{status: review.StatusDraft, versions: 1}) // version 1
	tests := []struct {
		name string
		body string
		want int
		code string
	}{
		// 4294967297 is 2^32 + 1: cut to 32 bits, it would be 1.
		{"2^32 + 1 is out of range, not version 1", `{"action":"submit","expectedVersion":4294967297}`, 422, "out_of_range"},
		{"2^31 is out of range", `{"action":"submit","expectedVersion":2147483648}`, 422, "out_of_range"},
		{"beyond int64 is out of range", `{"action":"submit","expectedVersion":9223372036854775808}`, 422, "out_of_range"},
		{"2^31 - 1 is a version, not this one", `{"action":"submit","expectedVersion":2147483647}`, 409, "version_conflict"},
		{"the current version", `{"action":"submit","expectedVersion":1}`, 200, ""},
	}
	for _, tt := range tests {
		r := d.act("author", id, tt.body)
		if tt.want == 422 {
			only(t, r, fieldError{"expectedVersion", tt.code})
			continue
		}
		if r.Status != tt.want || tt.code != "" && problemCode(t, r) != tt.code {
			t.Fatalf("%s: %d %s", tt.name, r.Status, r.Body)
		}
	}
}

func TestEveryRequestIntegerHasARange(t *testing.T) {
	t.Parallel()
	spec, err := httpapi.Spec()
	if err != nil {
		t.Fatal(err)
	}
	var unbounded []string
	var visit func(where string, s *openapi3.Schema)
	visit = func(where string, s *openapi3.Schema) {
		if s == nil {
			return
		}
		if s.Type != nil && s.Type.Is("integer") && len(s.Enum) == 0 {
			limit := float64(math.MaxInt32)
			if s.Format == "int64" {
				limit = math.MaxInt64
			}
			if s.Min == nil || s.Max == nil || *s.Max > limit || *s.Min < -limit-1 {
				unbounded = append(unbounded, where)
			}
		}
		for name, p := range s.Properties {
			visit(where+"."+name, p.Value)
		}
		if s.Items != nil {
			visit(where+"[]", s.Items.Value)
		}
		for _, sub := range append(append(append(openapi3.SchemaRefs{}, s.AllOf...), s.OneOf...), s.AnyOf...) {
			visit(where, sub.Value)
		}
	}
	for path, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			for _, p := range append(append(openapi3.Parameters{}, item.Parameters...), op.Parameters...) {
				if p.Value != nil && p.Value.Schema != nil {
					visit(fmt.Sprintf("%s %s %s", method, path, p.Value.Name), p.Value.Schema.Value)
				}
			}
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				for _, mt := range op.RequestBody.Value.Content {
					visit(fmt.Sprintf("%s %s body", method, path), mt.Schema.Value)
				}
			}
		}
	}
	if len(unbounded) > 0 {
		t.Fatalf("request integers without a minimum and a maximum that fit their format (int32 unless int64):\n  %s", strings.Join(unbounded, "\n  "))
	}
}

func TestNULAndControlCharactersAreRefusedAtTheGate(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{status: review.StatusInReview, versions: 1})
	t.Run("a NUL in a comment is 422 on the comment, and stays so when retried with its key", func(t *testing.T) {
		k := key(uuid.NewString())
		for range 2 {
			only(t, d.act("reviewer", id, `{"action":"request_changes","comment":"Crop\u0000 it."}`, k), fieldError{"comment", "invalid_format"})
		}
		if _, version, _ := d.state(t, id); version != 1 {
			t.Fatalf("the creative moved to v%d", version)
		}
	})
	t.Run("a comment may span lines", func(t *testing.T) {
		d := newReviewDesk(t)
		id := d.creative(t, creativeSpec{status: review.StatusInReview, versions: 1})
		if r := d.act("reviewer", id, `{"action":"request_changes","comment":"Crop the logo.\nAnd the tagline.\t(2)"}`); r.Status != http.StatusOK {
			t.Fatalf("got %d %s", r.Status, r.Body)
		}
	})
	signIn := func(body string) *testenv.Response { return d.env.Client(t).Do(http.MethodPost, signInPath, body) }
	for name, tt := range map[string]struct {
		body string
		want fieldError
	}{
		"a NUL in an email":        {`{"email":"x\u0000@acme.test","password":"p"}`, fieldError{"email", "invalid_format"}},
		"a line break in an email": {`{"email":"x\n@acme.test","password":"p"}`, fieldError{"email", "invalid_format"}},
		"a C1 control in an email": {`{"email":"x\u0085@acme.test","password":"p"}`, fieldError{"email", "invalid_format"}},
		"DEL in an email":          {`{"email":"x\u007f@acme.test","password":"p"}`, fieldError{"email", "invalid_format"}},
		"a NUL in a password":      {`{"email":"x@acme.test","password":"pass\u0000word"}`, fieldError{"password", "invalid_format"}},
	} {
		t.Run(name, func(t *testing.T) { only(t, signIn(tt.body), tt.want) })
	}
	if r := signIn(`{"email":"x@acme.test","password":"a password\twith a tab"}`); r.Status != http.StatusUnauthorized {
		t.Fatalf("a tab in a password: %d %s", r.Status, r.Body)
	}
}

func TestIntegersAreReadAsJSONSchemaReadsThem(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Env: map[string]string{"DEPOSIT_MAX_OPEN_PER_USER": "100"}})
	c, _ := env.SignedIn(t, "Ivan Integer")
	deposit := func(scale string) *testenv.Response {
		return c.Do(http.MethodPost, depositsPath, `{"amount":{"amountMinor":"10000000","currency":"USDT","scale":`+scale+`}}`)
	}
	for _, scale := range []string{"6", "6.0", "6e0", "60e-1", "0.6e1", "6.000"} {
		if r := deposit(scale); r.Status != http.StatusCreated {
			t.Errorf("scale %s: %d %s", scale, r.Status, r.Body)
		}
	}
	for scale, want := range map[string]fieldError{
		"6.5":                 {"amount.scale", "invalid_value"},
		"9223372036854775808": {"amount.scale", "invalid_value"},
		`"6"`:                 {"amount.scale", "invalid_type"},
		"null":                {"amount.scale", "invalid_type"},
	} {
		only(t, deposit(scale), want)
	}

	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{status: review.StatusDraft, versions: 1})
	if r := d.act("author", id, `{"action":"submit","expectedVersion":1.0}`); r.Status != http.StatusOK {
		t.Fatalf("expectedVersion 1.0: %d %s", r.Status, r.Body)
	}
	if r := d.act("admin", id, `{"action":"approve","expectedVersion":2e0}`); r.Status != http.StatusOK {
		t.Fatalf("expectedVersion 2e0: %d %s", r.Status, r.Body)
	}
	only(t, d.act("admin", id, `{"action":"archive","expectedVersion":2.5}`), fieldError{"expectedVersion", "invalid_type"})
	only(t, d.act("admin", id, `{"action":null}`), fieldError{"action", "invalid_type"})
	only(t, d.act("admin", id, `{"action":7}`), fieldError{"action", "invalid_type"})
	only(t, c.Do(http.MethodGet, depositsPath+"?limit=9223372036854775808", nil), fieldError{"limit", "out_of_range"})
}

func TestAParameterSentTwiceIsRefusedByName(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, user := env.SignedIn(t, "Petra Twice")
	org := env.DB.Org(t, "Twice Org")
	env.DB.Member(t, org, user, "viewer")
	for _, path := range []string{depositsPath, creativesURL(org)} {
		only(t, c.Do(http.MethodGet, path+"?limit=1&limit=2", nil), fieldError{"limit", "invalid_value"})
		only(t, c.Do(http.MethodGet, path+"?cursor=a&cursor=b", nil), fieldError{"cursor", "invalid_value"})
		if r := c.Do(http.MethodGet, path+"?limit=1", nil); r.Status != http.StatusOK {
			t.Fatalf("%s once: %d %s", path, r.Status, r.Body)
		}
	}
	token, csrf := rawSession(t, env)
	req, err := http.NewRequest(http.MethodPost, env.Server.URL+depositsPath, strings.NewReader(`{"amount":{"amountMinor":"10000000","currency":"USDT","scale":6}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Cookie", "session="+token)
	req.Header.Set("X-CSRF-Token", csrf)
	req.Header.Add("Idempotency-Key", "first")
	req.Header.Add("Idempotency-Key", "second")
	only(t, send(t, req), fieldError{"Idempotency-Key", "invalid_value"})
	if n := count(t, env, "SELECT count(*) FROM deposits"); n != 0 {
		t.Fatalf("%d deposits from a request with two keys", n)
	}
}

func TestRequestChangesNeedsACommentThatSaysSomething(t *testing.T) {
	t.Parallel()
	d := newReviewDesk(t)
	id := d.creative(t, creativeSpec{status: review.StatusInReview, versions: 1})
	for _, comment := range []string{" ", "   ", "\n\t ", "\u00a0\u2003"} {
		body, _ := json.Marshal(map[string]string{"action": "request_changes", "comment": comment})
		only(t, d.act("reviewer", id, string(body)), fieldError{"comment", "required"})
	}
	// Other actions take a comment as it comes.
	if r := d.act("reviewer", id, `{"action":"approve","comment":" "}`); r.Status != http.StatusOK {
		t.Fatalf("approve with a blank note: %d %s", r.Status, r.Body)
	}
}

func TestEveryListRefusesACursorItDidNotMakeTheSameWay(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, user := env.SignedIn(t, "Cyril Cursor")
	org := env.DB.Org(t, "Cursor Org")
	env.DB.Member(t, org, user, "viewer")
	b64 := base64.RawURLEncoding.EncodeToString
	for name, path := range map[string]string{
		"deposits at -2^63 µs":          depositsPath + "?cursor=" + b64([]byte("d1.-9223372036854775808."+uuid.NewString())),
		"deposits at 0 µs":              depositsPath + "?cursor=" + b64([]byte("d1.0."+uuid.NewString())),
		"deposits with a creatives one": depositsPath + "?cursor=" + b64([]byte("c1.5")),
		"deposits with garbage":         depositsPath + "?cursor=garbage",
		"creatives with a deposits one": creativesURL(org) + "?cursor=" + b64([]byte("d1.1700000000000000."+uuid.NewString())),
		"creatives beyond int32":        creativesURL(org) + "?cursor=" + b64([]byte("c1.2147483648")),
		"creatives at 0":                creativesURL(org) + "?cursor=" + b64([]byte("c1.0")),
		"creatives with garbage":        creativesURL(org) + "?cursor=garbage",
	} {
		r := c.Do(http.MethodGet, path, nil)
		if r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("%s: %d %s", name, r.Status, r.Body)
		}
		p := r.Problem(t)
		if len(p.FieldErrors) != 1 || p.FieldErrors[0].Field != "cursor" || p.FieldErrors[0].Code != "invalid_format" ||
			p.FieldErrors[0].Message != "Is not a cursor of this list. Pass the nextCursor of the previous page as is." {
			t.Fatalf("%s: %s", name, r.Body)
		}
	}
}

func TestAnEncodedBodyIs415(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, _ := signedInOperator(t, env, "Zip Gzip") // the operator API reads bodies for operators only
	env.AddGuest(t, c)                           // the guest paths for guests only
	for _, call := range bodyCalls(t) {
		for _, enc := range []string{"gzip", "br", "identity, gzip"} {
			r := c.Do(call.method, call.path, call.body, testenv.Header{Name: "Content-Encoding", Value: enc})
			if r.Status != http.StatusUnsupportedMediaType || r.Problem(t).Code != "unsupported_media_type" {
				t.Fatalf("%s with Content-Encoding %s: %d %s", call.operationID, enc, r.Status, r.Body)
			}
		}
	}
	if r := c.Do(http.MethodPost, depositsPath, depositBody("10000000"), testenv.Header{Name: "Content-Encoding", Value: "identity"}); r.Status != http.StatusCreated {
		t.Fatalf("Content-Encoding identity: %d %s", r.Status, r.Body)
	}
}

func TestFieldErrorsAreCutAtAHundredAndTheDetailSaysSo(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, _ := env.SignedIn(t, "Fanny Fields")
	var b strings.Builder
	b.WriteString(`{"action":"submit"`)
	for i := range 3000 {
		fmt.Fprintf(&b, `,"f%d":1`, i)
	}
	b.WriteString("}")
	r := c.Do(http.MethodPost, actionPath, b.String())
	if r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("got %d", r.Status)
	}
	p := r.Problem(t)
	if len(p.FieldErrors) != 100 || p.Detail != "3000 fields failed validation; fieldErrors lists the first 100." {
		t.Fatalf("%d field errors, detail %q", len(p.FieldErrors), p.Detail)
	}
	if len(r.Body) > b.Len() {
		t.Fatalf("a %d-byte body got a %d-byte answer", b.Len(), len(r.Body))
	}
	if !bytes.Contains(r.Body, []byte(`"field":"f`)) {
		t.Fatalf("the unknown fields are not named: %s", r.Body[:200])
	}
}

func TestEveryParameterIsUTF8TextBeforeItReachesTheDatabase(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, user := env.SignedIn(t, "Ursula Utf")
	org := env.DB.Org(t, "UTF Org")
	env.DB.Member(t, org, user, "viewer")
	for _, q := range []string{"%ff", "a%ffb", "%c0%af", "%ed%a0%80"} {
		only(t, c.Do(http.MethodGet, creativesURL(org)+"?q="+q, nil), fieldError{"q", "invalid_format"})
	}
	if r := c.Do(http.MethodGet, creativesURL(org)+"?q=caf%C3%A9", nil); r.Status != http.StatusOK {
		t.Fatalf("q=café: %d %s", r.Status, r.Body)
	}
}
