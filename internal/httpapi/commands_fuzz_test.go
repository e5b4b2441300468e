package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"creativeapi/internal/testenv"
)

// commandFuzzSeeds are bodies a careless or hostile client might send to
// either command; each fuzz target adds its own valid ones.
var commandFuzzSeeds = []string{
	``, ` `, `null`, `[]`, `{}`, `"x"`, `1e400`, `{`, `}`, `{"a":}`, `{"amount":`,
	`{"action":"submit","action":"archive"}`, `{"action":"submit","\u0061ction":"archive"}`,
	`{"amount":{"amountMinor":"1","amountMinor":"2"}}`,
	`{"action":"approve","expectedVersion":1e400}`, `{"action":"approve","expectedVersion":-1}`,
	`{"action":"approve","expectedVersion":2147483648}`, `{"action":"approve","expectedVersion":1.5}`,
	`{"action":"request_changes","comment":"\u0000\ud800"}`, `{"action":"request_changes","comment":""}`,
	`{"action":"request_changes","comment":` + `"` + strings.Repeat("é", 2001) + `"}`,
	`{"amount":{"amountMinor":"99999999999999999999999999","currency":"USDT","scale":6}}`,
	`{"amount":{"amountMinor":"-10000000","currency":"USDT","scale":6}}`,
	`{"amount":{"amountMinor":"1e7","currency":"USDT","scale":6}}`,
	`{"amount":{"amountMinor":10000000,"currency":"USDT","scale":6}}`,
	`{"amount":{"amountMinor":"10000000","currency":"usdt","scale":6.0}}`,
	`{"amount":{"amountMinor":"10000000","currency":"USDT","scale":"6"}}`,
	`{"amount":{"amountMinor":"10000000","currency":"USDT","scale":6},"extra":true}`,
	`{"AMOUNT":{"amountMinor":"10000000","currency":"USDT","scale":6}}`,
	`{"Action":"submit"}`, `{"action":"SUBMIT"}`, `{"action":null}`, `{"action":["submit"]}`,
	`{"amount":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`,
	strings.Repeat("[", 20000) + strings.Repeat("]", 20000),
	"\xef\xbb\xbf{\"action\":\"submit\"}", "{\"action\":\"submit\"}\x00", `{"action":"submit"} {}`,
	"{\"action\":\"\xff\xfe\"}",
}

// commandFuzzKeys are Idempotency-Key values to combine with the bodies.
var commandFuzzKeys = []string{"", "k-1", `"k-1"`, "ключ", strings.Repeat("k", 256), "a b", `"`, "\x7f"}

// fuzzTarget is one command called by a signed-in caller through the real
// handler chain (env.Echo: middleware, gate, handler, Problem writer).
type fuzzTarget struct {
	env          *testenv.Env
	path         string
	token, csrf  string
	validBodies  []string
	successCodes map[int]bool
}

// check sends body under key and fails on a 5xx, on a 4xx that is not a
// Problem, and on any answer openapi.yaml does not declare.
func (ft fuzzTarget) check(t *testing.T, body []byte, key string) {
	req := httptest.NewRequest(http.MethodPost, ft.path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Cookie", "session="+ft.token)
	req.Header.Set("X-CSRF-Token", ft.csrf)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	rec := httptest.NewRecorder()
	ft.env.Echo.ServeHTTP(rec, req)
	res := &testenv.Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	if res.Status >= 500 {
		t.Fatalf("body %q key %q: %d %s", body, key, res.Status, res.Body)
	}
	if res.Status >= 400 {
		var p testenv.Problem
		if err := json.Unmarshal(res.Body, &p); err != nil || p.Code == "" || p.Status != res.Status || res.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("body %q key %q: %d is not a Problem: %s", body, key, res.Status, res.Body)
		}
	} else if !ft.successCodes[res.Status] {
		t.Fatalf("body %q key %q: %d %s", body, key, res.Status, res.Body)
	}
	if err := testenv.CheckResponse(req, res, t.Name()); err != nil {
		t.Fatalf("body %q key %q: %d does not match openapi.yaml: %v\n%s", body, key, res.Status, err, res.Body)
	}
}

func (ft fuzzTarget) seed(f *testing.F) {
	for _, body := range append(append([]string{}, ft.validBodies...), commandFuzzSeeds...) {
		for _, key := range commandFuzzKeys {
			f.Add([]byte(body), key)
		}
	}
}

// FuzzCreateAccountDeposit sends arbitrary bodies and keys to
// createAccountDeposit: never a 5xx, every 4xx a declared Problem.
func FuzzCreateAccountDeposit(f *testing.F) {
	env := testenv.New(f, testenv.Options{Env: map[string]string{"DEPOSIT_MAX_OPEN_PER_USER": "1000000"}})
	token, csrf := rawSession(f, env)
	ft := fuzzTarget{env: env, path: "/api/v1/me/balance/deposits", token: token, csrf: csrf,
		successCodes: map[int]bool{http.StatusCreated: true},
		validBodies: []string{
			`{"amount":{"amountMinor":"10000000","currency":"USDT","scale":6}}`,
			`{"amount":{"amountMinor":"100000000000","currency":"USDT","scale":6}}`,
			` { "amount" : { "scale" : 6 , "currency" : "USDT" , "amountMinor" : "12340000" } } `,
		}}
	ft.seed(f)
	f.Fuzz(ft.check)
}

// FuzzExecuteCreativeAction sends arbitrary bodies and keys to
// executeCreativeAction as an admin (every action is open to one), on a
// creative whose state the calls move around: never a 5xx, every 4xx a
// declared Problem.
func FuzzExecuteCreativeAction(f *testing.F) {
	env := testenv.New(f)
	admin, _ := env.DB.User(f, "Fuzz Admin")
	org := env.DB.Org(f, "Fuzz Org")
	env.DB.Member(f, org, admin, "admin")
	creative := env.DB.DraftCreative(f, org, admin)
	token, csrf := sessionOf(f, env.DB, admin)
	ft := fuzzTarget{env: env, path: fmt.Sprintf("/api/v1/organizations/%s/creatives/%s/actions", org, creative),
		token: token, csrf: csrf, successCodes: map[int]bool{http.StatusOK: true},
		validBodies: []string{
			`{"action":"submit"}`, `{"action":"approve","expectedVersion":2}`,
			`{"action":"request_changes","comment":"Crop the logo."}`, `{"action":"archive","comment":"Done."}`,
		}}
	ft.seed(f)
	f.Fuzz(ft.check)
}
