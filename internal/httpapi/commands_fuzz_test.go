package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

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
	// Found by the outside review: none may be a 5xx, and valid ones pass.
	`{"action":"approve","expectedVersion":4294967297}`, `{"action":"approve","expectedVersion":9223372036854775808}`,
	`{"action":"request_changes","comment":"   "}`, `{"action":"request_changes","comment":"Crop\u0000 it."}`,
	`{"action":"archive","expectedVersion":1e0}`, `{"action":"submit","expectedVersion":2.0}`,
	`{"amount":{"amountMinor":"10000000","currency":"USDT","scale":6e0}}`,
	`{"amount":{"amountMinor":"10000000","currency":"USDT\u0000","scale":6}}`,
	`{"a.b":1,"c[0]":2}`, `{"amount":{"x.y":{"z":1}}}`,
}

// commandFuzzKeys are Idempotency-Key values to combine with the bodies.
var commandFuzzKeys = []string{"", "k-1", `"k-1"`, "ключ", strings.Repeat("k", 256), "a b", `"`, "\x7f"}

// fuzzTarget is one command called by a signed-in caller through the real
// handler chain (env.Echo: middleware, gate, handler, Problem writer).
type fuzzTarget struct {
	env *testenv.Env
	// method is POST unless set.
	method       string
	path         string
	token, csrf  string
	validBodies  []string
	successCodes map[int]bool
	// valid is the oracle of a body the command must accept (not refuse
	// with 400, 413, 415 or 422 invalid_request), written apart from the
	// server's validation.
	valid func(body []byte) bool
}

func (ft fuzzTarget) send(body []byte, key string) (*http.Request, *testenv.Response) {
	method := ft.method
	if method == "" {
		method = http.MethodPost
	}
	req := httptest.NewRequest(method, ft.path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Cookie", "session="+ft.token)
	req.Header.Set("X-CSRF-Token", ft.csrf)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	rec := httptest.NewRecorder()
	ft.env.Echo.ServeHTTP(rec, req)
	return req, &testenv.Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

// check sends body under key, twice when the key is one, and fails on:
// a 5xx; a 4xx that is not a Problem; an answer openapi.yaml does not
// declare; a valid request refused as invalid; a field error naming a
// field the request does not have; a stored answer that does not come
// back byte for byte (and a refusal that is not refused the same way).
func (ft fuzzTarget) check(t *testing.T, body []byte, key string) {
	req, first := ft.send(body, key)
	ft.conforms(t, req, first, body, key)
	if gateRefusal(t, first) && ft.valid(body) && (key == "" || wellFormedKey(key)) {
		t.Fatalf("body %q key %q is valid, yet refused: %d %s", body, key, first.Status, first.Body)
	}
	if first.Status == http.StatusUnprocessableEntity {
		for _, f := range problemOf(t, first).FieldErrors {
			if !fieldInRequest(body, key, f.Field, f.Code) {
				t.Fatalf("body %q key %q: the field error %s %s names no field of the request: %s", body, key, f.Field, f.Code, first.Body)
			}
		}
	}
	if key == "" || !wellFormedKey(key) {
		return
	}
	req, again := ft.send(body, key)
	ft.conforms(t, req, again, body, key)
	stored := first.Status < 300 || first.Header.Get("Idempotent-Replayed") == "true" ||
		first.Status == http.StatusForbidden && problemOf(t, first).Code == "action_forbidden"
	switch {
	case stored:
		if again.Status != first.Status || !bytes.Equal(again.Body, first.Body) || again.Header.Get("Location") != first.Header.Get("Location") ||
			again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("body %q key %q: the replay of %d %s is %d %v %s", body, key, first.Status, first.Body, again.Status, again.Header, again.Body)
		}
	case first.Status == http.StatusConflict:
		// Not stored: judged afresh, on a state the first call may have seen differently.
	case again.Status != first.Status || problemOf(t, again).Code != problemOf(t, first).Code:
		t.Fatalf("body %q key %q: refused with %d %s, then with %d %s", body, key, first.Status, first.Body, again.Status, again.Body)
	}
}

// conforms fails on a 5xx, on a 4xx that is not a Problem, and on any
// answer openapi.yaml does not declare.
func (ft fuzzTarget) conforms(t *testing.T, req *http.Request, res *testenv.Response, body []byte, key string) {
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

func problemOf(t *testing.T, r *testenv.Response) testenv.Problem {
	var p testenv.Problem
	if err := json.Unmarshal(r.Body, &p); err != nil {
		t.Fatalf("not a Problem: %s", r.Body)
	}
	return p
}

// gateRefusal reports whether r refused the request as malformed or
// invalid, before the command ran.
func gateRefusal(t *testing.T, r *testenv.Response) bool {
	switch r.Status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType:
		return true
	case http.StatusUnprocessableEntity:
		return problemOf(t, r).Code == "invalid_request"
	}
	return false
}

// wellFormedKey is openapi.yaml's Idempotency-Key: 1 to 255 visible ASCII
// characters, or that in quotes.
func wellFormedKey(k string) bool {
	for i := range len(k) {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	quoted := len(k) >= 3 && k[0] == '"' && k[len(k)-1] == '"'
	return len(k) >= 1 && len(k) <= 255 || quoted && len(k) <= 257
}

// decodeStrict decodes a body the way a strict reader of the spec would:
// one JSON value, no member twice in an object, numbers as written.
func decodeStrict(body []byte) (map[string]any, bool) {
	if !json.Valid(body) || repeatsAMember(body) {
		return nil, false
	}
	var v map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil || v == nil {
		return nil, false
	}
	return v, true
}

// repeatsAMember reports whether an object of valid JSON names a member twice.
func repeatsAMember(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	type frame struct {
		object bool
		keys   map[string]bool
		key    bool // the next string token is a member name
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		top := (*frame)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch tok {
		case json.Delim('{'):
			if top != nil && top.object {
				top.key = true
			}
			stack = append(stack, &frame{object: true, keys: map[string]bool{}, key: true})
			continue
		case json.Delim('['):
			if top != nil && top.object {
				top.key = true
			}
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return false
			}
			continue
		}
		if top != nil && top.object {
			if top.key {
				name := tok.(string)
				if top.keys[name] {
					return true
				}
				top.keys[name] = true
				top.key = false
			} else {
				top.key = true
			}
		}
	}
}

// onlyMembers reports whether v has no member outside names.
func onlyMembers(v map[string]any, names ...string) bool {
	for k := range v {
		if !slices.Contains(names, k) {
			return false
		}
	}
	return true
}

// integerIn reports whether n is an integer (as JSON Schema counts them:
// 2.0 is one) between lo and hi.
func integerIn(n any, lo, hi float64) bool {
	num, ok := n.(json.Number)
	if !ok {
		return false
	}
	f, err := num.Float64()
	return err == nil && f == math.Trunc(f) && f >= lo && f <= hi
}

// validDeposit is the oracle of a createAccountDeposit body the default
// configuration accepts.
func validDeposit(body []byte) bool {
	v, ok := decodeStrict(body)
	if !ok || !onlyMembers(v, "amount") {
		return false
	}
	amount, ok := v["amount"].(map[string]any)
	if !ok || len(amount) != 3 || !onlyMembers(amount, "amountMinor", "currency", "scale") {
		return false
	}
	minor, ok := amount["amountMinor"].(string)
	if !ok || len(minor) == 0 || len(minor) > 20 || strings.Trim(minor, "0123456789") != "" || minor[0] == '0' {
		return false
	}
	n, err := strconv.ParseUint(minor, 10, 64)
	return err == nil && n >= 10_000_000 && n <= 100_000_000_000 && n%10_000 == 0 &&
		amount["currency"] == "USDT" && integerIn(amount["scale"], 6, 6)
}

// validAction is the oracle of an executeCreativeAction body the schema
// and the body rules accept.
func validAction(body []byte) bool {
	v, ok := decodeStrict(body)
	if !ok || !onlyMembers(v, "action", "expectedVersion", "comment") {
		return false
	}
	action, ok := v["action"].(string)
	if !ok || !slices.Contains([]string{"submit", "request_changes", "approve", "archive"}, action) {
		return false
	}
	if ev, ok := v["expectedVersion"]; ok && !integerIn(ev, 1, math.MaxInt32) {
		return false
	}
	comment, hasComment := v["comment"].(string)
	if _, ok := v["comment"]; ok && !hasComment {
		return false
	}
	if hasComment {
		if n := utf8.RuneCountInString(comment); n < 1 || n > 2000 || strings.ContainsRune(comment, 0) {
			return false
		}
	}
	return action != "request_changes" || hasComment && strings.TrimSpace(comment) != ""
}

// fieldInRequest reports whether a field error names something the
// request has: the Idempotency-Key it sent, the body as a whole, a member
// of the body, or (for a missing field) a member's parent.
func fieldInRequest(body []byte, key, field, code string) bool {
	switch field {
	case "Idempotency-Key":
		return key != ""
	case "body":
		return true
	}
	var value any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&value); err != nil {
		return false
	}
	if code == "required" {
		// A missing field: its parent is in the request.
		return parentInValue(value, field)
	}
	return pathInValue(value, field)
}

// pathInValue reports whether the dotted path (amount.scale, items[0].x)
// leads somewhere in value; member names may hold dots or brackets.
func pathInValue(value any, path string) bool {
	if path == "" {
		return true
	}
	switch v := value.(type) {
	case map[string]any:
		for k, item := range v {
			switch {
			case path == k:
				return true
			case strings.HasPrefix(path, k+".") && pathInValue(item, path[len(k)+1:]):
				return true
			case strings.HasPrefix(path, k+"[") && pathInValue(item, path[len(k):]):
				return true
			}
		}
	case []any:
		end := strings.IndexByte(path, ']')
		if !strings.HasPrefix(path, "[") || end < 0 {
			return false
		}
		i, err := strconv.Atoi(path[1:end])
		if err != nil || i < 0 || i >= len(v) {
			return false
		}
		rest := strings.TrimPrefix(path[end+1:], ".")
		return pathInValue(v[i], rest)
	}
	return false
}

// parentInValue reports whether the object holding the last member of
// path is in value.
func parentInValue(value any, path string) bool {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '.' && pathInValue(value, path[:i]) {
			return true
		}
	}
	_, isObject := value.(map[string]any)
	return isObject
}

func (ft fuzzTarget) seed(f *testing.F) {
	for _, body := range append(append([]string{}, ft.validBodies...), commandFuzzSeeds...) {
		for _, key := range commandFuzzKeys {
			f.Add([]byte(body), key)
		}
	}
}

// FuzzCreateAccountDeposit sends arbitrary bodies and keys to
// createAccountDeposit: never a 5xx, every 4xx a declared Problem naming
// only fields the request has, every valid body accepted, every stored
// answer replayed byte for byte.
func FuzzCreateAccountDeposit(f *testing.F) {
	env := testenv.New(f, testenv.Options{Env: map[string]string{"DEPOSIT_MAX_OPEN_PER_USER": "1000000"}})
	token, csrf := rawSession(f, env)
	ft := fuzzTarget{env: env, path: "/api/v1/me/balance/deposits", token: token, csrf: csrf,
		successCodes: map[int]bool{http.StatusCreated: true}, valid: validDeposit,
		validBodies: []string{
			`{"amount":{"amountMinor":"10000000","currency":"USDT","scale":6}}`,
			`{"amount":{"amountMinor":"100000000000","currency":"USDT","scale":6}}`,
			` { "amount" : { "scale" : 6 , "currency" : "USDT" , "amountMinor" : "12340000" } } `,
		}}
	ft.seed(f)
	f.Fuzz(ft.check)
}

// FuzzExecuteCreativeAction sends arbitrary bodies and keys to
// executeCreativeAction as an admin who authored the creative, on a
// creative whose state the calls move around: never a 5xx, every 4xx a
// declared Problem naming only fields the request has, every valid body
// accepted (the state machine may still refuse it), every stored answer
// replayed byte for byte.
func FuzzExecuteCreativeAction(f *testing.F) {
	env := testenv.New(f)
	admin, _ := env.DB.User(f, "Fuzz Admin")
	org := env.DB.Org(f, "Fuzz Org")
	env.DB.Member(f, org, admin, "admin")
	creative := env.DB.DraftCreative(f, org, admin)
	token, csrf := sessionOf(f, env.DB, admin)
	ft := fuzzTarget{env: env, path: fmt.Sprintf("/api/v1/organizations/%s/creatives/%s/actions", org, creative),
		token: token, csrf: csrf, successCodes: map[int]bool{http.StatusOK: true}, valid: validAction,
		validBodies: []string{
			`{"action":"submit"}`, `{"action":"approve","expectedVersion":2}`,
			`{"action":"request_changes","comment":"Crop the logo."}`, `{"action":"archive","comment":"Done."}`,
		}}
	ft.seed(f)
	f.Fuzz(ft.check)
}

// oneOf is the oracle of a target whose valid bodies are the ones listed:
// those must be accepted (the others are judged by conformance only).
func oneOf(bodies ...string) func([]byte) bool {
	return func(body []byte) bool { return slices.Contains(bodies, string(body)) }
}

// seedMore adds bodies with every fuzz key.
func seedMore(f *testing.F, bodies ...string) {
	for _, body := range bodies {
		for _, key := range commandFuzzKeys {
			f.Add([]byte(body), key)
		}
	}
}

// FuzzCreateCreative sends arbitrary bodies and keys to createCreative as
// an author: never a 5xx, every 4xx a declared Problem, replays byte for
// byte.
func FuzzCreateCreative(f *testing.F) {
	env := testenv.New(f)
	author, _ := env.DB.User(f, "Fuzz Author")
	org := env.DB.Org(f, "Fuzz Org")
	env.DB.Member(f, org, author, "author")
	token, csrf := sessionOf(f, env.DB, author)
	valid := []string{
		`{"title":"Summer sale","type":"static","aspectRatio":"9:16","geo":"DE","language":"de-DE"}`,
		`{"title":"Ünïcödé ✓","type":"video","aspectRatio":"16:9","geo":"US","language":"en","clientId":null,"directionId":"3f2b8c1a-6d4e-4f8a-9b7c-1e2d3c4b5a69"}`,
	}
	ft := fuzzTarget{env: env, path: fmt.Sprintf("/api/v1/organizations/%s/creatives", org),
		token: token, csrf: csrf, successCodes: map[int]bool{http.StatusCreated: true}, validBodies: valid, valid: oneOf(valid...)}
	ft.seed(f)
	seedMore(f,
		`{"title":"x","type":"html5","aspectRatio":"1:1","geo":"FR","language":"fr-FR","clientId":"3f2b8c1a-6d4e-4f8a-9b7c-1e2d3c4b5a69"}`,
		`{"title":"\u0000","type":"static","aspectRatio":"1:1","geo":"FR","language":"fr"}`,
		`{"title":"   ","type":"static","aspectRatio":"0:1","geo":"fr","language":"fr_FR"}`,
	)
	f.Fuzz(ft.check)
}

// FuzzAddCreativeVersion sends arbitrary bodies and keys to
// addCreativeVersion on a static draft of its author: never a 5xx, every
// 4xx a declared Problem, replays byte for byte.
func FuzzAddCreativeVersion(f *testing.F) {
	env := testenv.New(f)
	author, _ := env.DB.User(f, "Fuzz Author")
	org := env.DB.Org(f, "Fuzz Org")
	env.DB.Member(f, org, author, "author")
	creative := env.DB.DraftCreative(f, org, author)
	token, csrf := sessionOf(f, env.DB, author)
	asset := `{"fileName":"a.png","mimeType":"image/png","sizeBytes":10,"width":1,"height":1,"url":"https://cdn.test/a.png","sha256":"` +
		strings.Repeat("ab", 32) + `"}`
	valid := []string{`{"assets":[` + asset + `]}`, `{"assets":[` + asset + `,` + asset + `]}`}
	ft := fuzzTarget{env: env, path: fmt.Sprintf("/api/v1/organizations/%s/creatives/%s/versions", org, creative),
		token: token, csrf: csrf, successCodes: map[int]bool{http.StatusCreated: true}, validBodies: valid, valid: oneOf(valid...)}
	ft.seed(f)
	seedMore(f,
		`{"expectedVersion":1,"assets":[`+asset+`]}`,
		`{"assets":[`+strings.Replace(asset, "image/png", "video/mp4", 1)+`]}`,
		`{"assets":[`+strings.Replace(asset, "a.png", "\u0000", 1)+`]}`,
		`{"assets":[`+strings.Replace(asset, "https://cdn.test", "https://\u0000", 1)+`]}`,
		`{"assets":[`+strings.Replace(asset, `"sizeBytes":10`, `"sizeBytes":1e400`, 1)+`]}`,
	)
	f.Fuzz(ft.check)
}

// FuzzUpdateCreative sends arbitrary bodies to updateCreative as an admin
// (it takes no Idempotency-Key): never a 5xx, every 4xx a declared Problem.
func FuzzUpdateCreative(f *testing.F) {
	env := testenv.New(f)
	admin, _ := env.DB.User(f, "Fuzz Admin")
	reviewer, _ := env.DB.User(f, "Fuzz Reviewer")
	org := env.DB.Org(f, "Fuzz Org")
	env.DB.Member(f, org, admin, "admin")
	env.DB.Member(f, org, reviewer, "reviewer")
	creative := env.DB.DraftCreative(f, org, admin)
	token, csrf := sessionOf(f, env.DB, admin)
	valid := []string{`{"title":"Renamed"}`, `{"reviewerId":"` + reviewer.String() + `"}`, `{"reviewerId":null,"clientId":null}`,
		`{"geo":"FR","language":"fr-FR","aspectRatio":"4:5"}`, `{}`}
	ft := fuzzTarget{env: env, method: http.MethodPatch, path: fmt.Sprintf("/api/v1/organizations/%s/creatives/%s", org, creative),
		token: token, csrf: csrf, successCodes: map[int]bool{http.StatusOK: true}, validBodies: valid, valid: oneOf(valid...)}
	ft.seed(f)
	seedMore(f, `{"expectedVersion":2,"title":"x"}`, `{"reviewerId":"`+admin.String()+`"}`, `{"title":"\u0000"}`, `{"type":"video"}`,
		`{"title":null}`, `{"reviewerId":"nope"}`)
	f.Fuzz(func(t *testing.T, body []byte, _ string) { ft.check(t, body, "") })
}
