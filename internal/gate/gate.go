// Package gate checks a request against openapi.yaml before its handler
// runs: the body's size, media type and JSON, then the parameters and the
// body against the operation's schemas, into one Problem (400, 413, 415, or
// 422 with every failing field). It never routes: Echo has routed the
// request already, and the gate looks up the operation of the route Echo
// matched, so the operation validated is the one whose handler runs.
package gate

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"creativeapi/internal/problem"
)

// BodyCheck adds the rules of an operation's body that a JSON schema cannot
// say (bounds from configuration, fields required by another field's
// value). It sees only bodies that are valid JSON, decoded as the schema
// validation reads them (objects as map[string]any, numbers as
// json.Number), and reports field errors in the same vocabulary, so a
// client gets every failing field at once.
type BodyCheck func(body any) []problem.FieldError

// Operation is one operation of the spec as the gate checks it.
type Operation struct {
	// ID is the spec's operationId.
	ID string
	// Secured: the operation requires a session (its own security
	// requirements, else the spec's).
	Secured bool
	// Keyed: the operation takes an Idempotency-Key, so Check fingerprints
	// its requests.
	Keyed bool
	// OperatorOnly: the operation exists only for platform operators
	// (x-operator-only in the spec); for anyone else it is the 404 of an
	// unknown path, answered right after authentication.
	OperatorOnly bool
	// Guest: the operation takes a guest session (the spec's guestSession
	// scheme), and nothing else does.
	Guest bool
	// Scope is the scope a personal access token needs to call the
	// operation (x-scope in the spec); "" when the operation takes only a
	// session. The spec is the one table of scopes.
	Scope string
	// route is the operation without its security requirements: the
	// caller is authenticated before the gate validates (401 before 422),
	// so kin-openapi's security pass would only repeat work.
	route *routers.Route
	check BodyCheck
}

// Gate holds the spec's operations by the route Echo matches them on.
type Gate struct {
	ops     map[string]*Operation
	options *openapi3filter.Options
	// schemaOptions validate a body as kin-openapi validates one in a
	// request.
	schemaOptions []openapi3.SchemaValidationOption
}

// New prepares the operations of spec once. checks maps operationIds to
// their extra body rules.
func New(spec *openapi3.T, checks map[string]BodyCheck) (*Gate, error) {
	schemaOptions := SchemaOptions(spec)
	g := &Gate{
		ops: map[string]*Operation{},
		options: &openapi3filter.Options{
			MultiError: true,
			// The body is decoded and validated once, by Check.
			ExcludeRequestBody:      true,
			AuthenticationFunc:      openapi3filter.NoopAuthenticationFunc,
			SchemaValidationOptions: schemaOptions,
		},
		schemaOptions: append([]openapi3.SchemaValidationOption{openapi3.VisitAsRequest(), openapi3.MultiErrors()}, schemaOptions...),
	}
	for path, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			if op.OperationID == "" {
				return nil, fmt.Errorf("%s %s has no operationId", method, path)
			}
			security := op.Security
			if security == nil {
				security = &spec.Security
			}
			bare := *op
			bare.Security = &openapi3.SecurityRequirements{}
			keyed := takesIdempotencyKey(op)
			if err := fingerprintable(keyed, path, item, op); err != nil {
				return nil, err
			}
			g.ops[method+" "+EchoPath(path)] = &Operation{
				ID: op.OperationID, Secured: len(*security) > 0, Keyed: keyed, check: checks[op.OperationID],
				OperatorOnly: op.Extensions["x-operator-only"] == true,
				Scope:        scopeOf(op),
				Guest:        takesGuestSession(*security),
				route:        &routers.Route{Spec: spec, Path: path, PathItem: item, Method: method, Operation: &bare},
			}
		}
	}
	return g, nil
}

// GuestScheme is the spec's security scheme of a guest session.
const GuestScheme = "guestSession"

// takesGuestSession reports whether security names the guest session.
func takesGuestSession(security openapi3.SecurityRequirements) bool {
	for _, req := range security {
		if _, ok := req[GuestScheme]; ok {
			return true
		}
	}
	return false
}

// scopeOf is an operation's x-scope, "" without one.
func scopeOf(op *openapi3.Operation) string {
	scope, _ := op.Extensions["x-scope"].(string)
	return scope
}

// SchemaOptions registers on spec the string formats its schemas use
// (kin-openapi checks no uuid format unless one is registered) and returns
// the options that validate with them and with the gate's pattern
// matchers; the test harness validates answers with the same.
func SchemaOptions(spec *openapi3.T) []openapi3.SchemaValidationOption {
	spec.SetStringFormatValidator("uuid", openapi3.NewCallbackValidator(func(s string) error {
		if !isRFC9562UUID(s) {
			return fmt.Errorf("string doesn't match pattern %q", openapi3.FormatOfStringForUUIDOfRFC9562)
		}
		return nil
	}))
	return append(spec.GetSchemaValidationOptions(), openapi3.SetSchemaRegexCompiler(compilePattern))
}

// Operation is the operation of method on the route path Echo matched
// (echo.Context.Path()); nil when the spec declares none there (Echo then
// answers 404, 405 or OPTIONS itself).
func (g *Gate) Operation(method, routePath string) *Operation {
	return g.ops[method+" "+routePath]
}

// KeyedOperations are the ids of the operations that take an
// Idempotency-Key, sorted.
func (g *Gate) KeyedOperations() []string {
	var ids []string
	for _, op := range g.ops {
		if op.Keyed {
			ids = append(ids, op.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// EchoPath is a spec path template as Echo writes it: {id} → :id.
func EchoPath(specPath string) string {
	parts := strings.Split(specPath, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}") {
			parts[i] = ":" + p[1:len(p)-1]
		}
	}
	return strings.Join(parts, "/")
}

// Check reads r's body (an operation without one reads none), checks r
// against op with its path parameters params, and returns the body the
// handler is to read: compact, members sorted, integers written as
// integers. r.Body is left reading it. For an operation that takes an
// Idempotency-Key it also returns the request's fingerprint (see
// fingerprint), nil for the others.
//
// stored is the fingerprint of the request whose answer is stored under
// r's Idempotency-Key, nil when none is. Such a request is a replay, and
// Check leaves out the operation's BodyCheck: it gets its stored answer
// back whatever today's configuration (deposit bounds) says. When its
// fingerprint is stored, it is the request that was checked and stored,
// parameters and body alike, so Check does not validate it again either
// (docs/idempotency.md, "Replays").
func (g *Gate) Check(ctx context.Context, w http.ResponseWriter, r *http.Request, op *Operation, params map[string]string, stored []byte) (body, fingerprint []byte, err error) {
	var value any
	var raw []byte
	rb := op.route.Operation.RequestBody
	withBody := rb != nil && rb.Value != nil
	if withBody {
		if value, raw, err = readJSON(w, r); err != nil {
			return nil, nil, err
		}
	}
	// A parameter sent twice is refused by name: the validator would read
	// the first copy and the handler's binding refuse the pair.
	fields := repeatedParameters(r, op.route)
	fields = mergeFieldErrors(fields, undecodableParameters(r, op.route, params))
	if stored != nil && withBody && len(fields) == 0 {
		if body, err = canonical(value, int(max(r.ContentLength, 0))); err != nil {
			return nil, nil, err
		}
		if fingerprint = op.fingerprint(params, body); fingerprint != nil && bytes.Equal(fingerprint, stored) {
			return pass(r, value, body), fingerprint, nil
		}
	}
	// The request's deadline bounds validation as it bounds the rest: the
	// work is linear in the body's size, and a request past its deadline
	// is not worth finishing.
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("validating the request: %w", err)
	}
	err = openapi3filter.ValidateRequest(ctx, &openapi3filter.RequestValidationInput{
		Request: r, PathParams: params, Route: op.route, Options: g.options,
	})
	if err != nil {
		// One error per field: the first failing rule is the one to fix first.
		fields = mergeFieldErrors(fields, fieldErrors(err, nil))
	}
	if withBody {
		if mt := rb.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil && mt.Schema.Value != nil {
			if err := mt.Schema.Value.VisitJSON(value, g.schemaOptions...); err != nil {
				fields = mergeFieldErrors(fields, fieldErrors(err, nil))
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("validating the request: %w", err)
		}
		if op.check != nil && stored == nil {
			fields = mergeFieldErrors(fields, op.check(value))
		}
		fields = mergeFieldErrors(fields, nulFieldErrors(value, raw, fields))
		fields = mergeFieldErrors(fields, loneSurrogateFieldErrors(raw, fields))
	}
	if len(fields) > 0 {
		return nil, nil, problem.Invalid(fields)
	}
	if err != nil {
		// An error with no field to blame: keep it a client error, never a 500.
		return nil, nil, problem.New(http.StatusBadRequest, problem.MalformedJSON, "The request could not be read: %s.", safeReason(err))
	}
	if !withBody {
		// A keyed command with no body (a top-up) is fingerprinted by its
		// target alone.
		r.Body = http.NoBody
		return nil, op.fingerprint(params, nil), nil
	}
	if body == nil {
		if body, err = canonical(value, int(max(r.ContentLength, 0))); err != nil {
			return nil, nil, err
		}
		fingerprint = op.fingerprint(params, body)
	}
	return pass(r, value, body), fingerprint, nil
}

// pass leaves r reading body, the canonical form of value, and returns it.
func pass(r *http.Request, value any, body []byte) []byte {
	vb := &validatedBody{value: value}
	vb.Reset(body)
	r.Body, r.ContentLength = vb, int64(len(body))
	// Media types are case-insensitive, Echo's binder is not: it gets the
	// one spelling it knows.
	r.Header["Content-Type"] = applicationJSON
	return body
}

// applicationJSON is the Content-Type Check leaves on a request, shared
// (Header.Set allocates a slice per request); its capacity is its length,
// so an Add copies instead of writing into it.
var applicationJSON = []string{"application/json"}[:1:1]
