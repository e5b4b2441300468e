package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"creativeapi/internal/problem"
)

// BodyCheck adds the rules of an operation's body that a JSON schema cannot
// say (bounds from configuration, fields required by another field's
// value). It sees only bodies that are valid JSON, already decoded as the
// schema validation decodes them (objects as map[string]any, numbers as
// json.Number), and reports field errors in the same vocabulary, so a
// client gets every failing field at once.
type BodyCheck func(body any) []problem.FieldError

// Validator routes requests on the spec and validates them against it.
type Validator struct {
	router  routers.Router
	options *openapi3filter.Options
	checks  map[string]BodyCheck
	// unsecured are the spec's operations without their security
	// requirements, by operation: the gate has authenticated the caller
	// before it validates, so the filter's security pass would only repeat
	// work on every request.
	unsecured map[*openapi3.Operation]*openapi3.Operation
	// deprecated are the headers of the deprecated operations' answers.
	deprecated map[*openapi3.Operation]deprecationHeaders
}

var registerFormats sync.Once

// NewValidator builds the router once from spec. checks maps operationIds to
// their extra body rules.
func NewValidator(spec *openapi3.T, checks map[string]BodyCheck) (*Validator, error) {
	registerFormats.Do(func() {
		// kin-openapi checks no uuid format unless one is registered. RFC 9562
		// accepts UUIDv7 as well as the v4 ids PostgreSQL generates; the
		// check is kin-openapi's FormatOfStringForUUIDOfRFC9562 pattern,
		// written out because a regular expression per id cost more than
		// the rest of a parameter's validation.
		openapi3.DefineStringFormatValidator("uuid", openapi3.NewCallbackValidator(func(s string) error {
			if !isRFC9562UUID(s) {
				return fmt.Errorf("string doesn't match pattern %q", openapi3.FormatOfStringForUUIDOfRFC9562)
			}
			return nil
		}))
	})
	// Without servers, the Host header takes no part in matching.
	spec.Servers = nil
	router, err := gorillamux.NewRouter(spec)
	if err != nil {
		return nil, fmt.Errorf("build the spec router: %w", err)
	}
	deprecated, err := deprecations(spec)
	if err != nil {
		return nil, err
	}
	unsecured := map[*openapi3.Operation]*openapi3.Operation{}
	for _, item := range spec.Paths.Map() {
		for _, op := range item.Operations() {
			bare := *op
			bare.Security = &openapi3.SecurityRequirements{}
			unsecured[op] = &bare
			usePatternMatchers(op)
		}
	}
	return &Validator{
		router: router,
		options: &openapi3filter.Options{
			MultiError: true,
			// Authentication runs before validation (401 before 422), in the gate.
			AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
			// The body checks read the value the schema validation decoded.
			KeepValidatedValue: true,
			RegexCompiler:      compilePattern,
		},
		checks:     checks,
		unsecured:  unsecured,
		deprecated: deprecated,
	}, nil
}

// Route finds the spec operation of r: 404 not_found for an unknown path,
// 405 method_not_allowed for a known path with another method.
func (v *Validator) Route(r *http.Request) (*routers.Route, map[string]string, error) {
	route, params, err := v.router.FindRoute(r)
	switch {
	case err == nil:
		return route, params, nil
	case errors.Is(err, routers.ErrMethodNotAllowed):
		return nil, nil, problem.New(http.StatusMethodNotAllowed, problem.MethodNotAllowed, "%s is not allowed on %s.", r.Method, r.URL.Path)
	default:
		return nil, nil, problem.New(http.StatusNotFound, problem.NotFound, "The requested resource does not exist.")
	}
}

// Validate checks parameters, headers and the body of r (already read into
// body) against route, and returns a Problem for the first kind of failure:
// 415 for a body that is not JSON, 400 for malformed JSON, else 422 with
// every failing field.
func (v *Validator) Validate(ctx context.Context, r *http.Request, route *routers.Route, params map[string]string, body []byte) error {
	if rb := route.Operation.RequestBody; rb != nil && rb.Value != nil {
		if !isJSON(r.Header.Get("Content-Type")) {
			return problem.New(http.StatusUnsupportedMediaType, problem.UnsupportedMediaType, "Send the body as application/json.")
		}
		if err := checkJSON(body); err != nil {
			return err
		}
	}
	r.Body = http.NoBody
	if len(body) > 0 {
		r.Body = newBodyReader(body)
	}
	input := route
	if op, ok := v.unsecured[route.Operation]; ok {
		bare := *route
		bare.Operation = op
		input = &bare
	}
	err := openapi3filter.ValidateRequest(ctx, &openapi3filter.RequestValidationInput{
		Request: r, PathParams: params, Route: input, Options: v.options,
	})
	var fields []problem.FieldError
	if err != nil {
		// One error per field: the first failing rule is the one to fix first.
		fields = mergeFieldErrors(nil, fieldErrors(err, nil))
	}
	if check := v.checks[route.Operation.OperationID]; check != nil && len(body) > 0 {
		if value, ok := decodedBody(r.Body, body); ok {
			fields = mergeFieldErrors(fields, check(value))
		}
	}
	if len(fields) > 0 {
		return problem.Invalid(fields)
	}
	if err != nil {
		// An error with no field to blame: keep it a client error, never a 500.
		return problem.New(http.StatusBadRequest, problem.MalformedJSON, "The request could not be read: %s.", safeReason(err))
	}
	return nil
}

// patternMatchers replace regular expressions of the spec that cost more
// than the rest of a request's validation: the Idempotency-Key's bounded
// repetitions make Go's regexp track hundreds of states per character.
// Each says exactly what its pattern says (TestPatternMatchersMatchTheirPatterns).
var patternMatchers = map[string]func(string) bool{
	// Visible ASCII, 1 to 255 characters, or that quoted.
	`^(?:[\x21-\x7E]{1,255}|"[\x21-\x7E]{1,255}")$`: func(s string) bool {
		for i := range len(s) {
			if s[i] < 0x21 || s[i] > 0x7E {
				return false
			}
		}
		return len(s) >= 1 && len(s) <= 255 || len(s) >= 3 && len(s) <= 257 && s[0] == '"' && s[len(s)-1] == '"'
	},
	`^[0-9]+$`: func(s string) bool {
		for i := range len(s) {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		}
		return len(s) > 0
	},
}

type patternMatcher func(string) bool

func (m patternMatcher) MatchString(s string) bool { return m(s) }

// compilePattern is the validator's pattern compiler: a matcher of
// patternMatchers, else Go's regexp as kin-openapi compiles it.
func compilePattern(expr string) (openapi3.RegexMatcher, error) {
	if m, ok := patternMatchers[expr]; ok {
		return patternMatcher(m), nil
	}
	return regexp.Compile(unicodeEscape.ReplaceAllString(expr, `\x{${code}}`))
}

// unicodeEscape is JSON Schema's \uXXXX, which Go's regexp writes \x{XXXX}.
var unicodeEscape = regexp.MustCompile(`\\u(?P<code>[0-9A-F]{4})`)

// usePatternMatchers makes the patterns of op's parameters and body use
// compilePattern. kin-openapi keeps one compiled matcher per pattern for
// the process and compiles parameters' patterns without the validator's
// options, so they are compiled here, once, by validating their schemas
// with it (the schemas' own errors do not matter here).
func usePatternMatchers(op *openapi3.Operation) {
	ctx := context.Background()
	withMatchers := openapi3.SetRegexCompiler(compilePattern)
	for _, p := range op.Parameters {
		if p.Value != nil && p.Value.Schema != nil && p.Value.Schema.Value != nil {
			_ = p.Value.Schema.Value.Validate(ctx, withMatchers)
		}
	}
	if op.RequestBody != nil && op.RequestBody.Value != nil {
		for _, mt := range op.RequestBody.Value.Content {
			if mt.Schema != nil && mt.Schema.Value != nil {
				_ = mt.Schema.Value.Validate(ctx, withMatchers)
			}
		}
	}
}

// decodedBody is the body as the schema validation decoded it; a body the
// schema refused was not kept, so it is decoded here the same way.
func decodedBody(rb io.Reader, body []byte) (any, bool) {
	if kept, ok := rb.(interface{ ValidatedValue() any }); ok {
		return kept.ValidatedValue(), true
	}
	var value any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&value); err != nil {
		return nil, false
	}
	return value, true
}

// isRFC9562UUID matches openapi3.FormatOfStringForUUIDOfRFC9562: 8-4-4-4-12
// hex digits with version 1 to 8 and variant 8 to b, or the nil or max UUID.
func isRFC9562UUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
		} else if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	if s == "00000000-0000-0000-0000-000000000000" || strings.EqualFold(s, "ffffffff-ffff-ffff-ffff-ffffffffffff") {
		return true
	}
	return '1' <= s[14] && s[14] <= '8' && strings.ContainsRune("89abAB", rune(s[19]))
}

// fieldErrors flattens kin-openapi's nested errors (MultiError → RequestError
// → MultiError of SchemaError) into field errors.
func fieldErrors(err error, param *openapi3.Parameter) []problem.FieldError {
	var out []problem.FieldError
	switch e := err.(type) {
	case openapi3.MultiError:
		for _, inner := range e {
			out = append(out, fieldErrors(inner, param)...)
		}
	case *openapi3filter.RequestError:
		if e.Parameter != nil {
			param = e.Parameter
		}
		if e.Err == nil {
			return append(out, problem.FieldError{Field: paramName(param), Code: problem.InvalidValue, Message: sentence(e.Reason)})
		}
		return fieldErrors(e.Err, param)
	case *openapi3.SchemaError:
		return append(out, schemaFieldError(e, param))
	case *openapi3filter.ParseError:
		return append(out, problem.FieldError{Field: paramName(param), Code: problem.InvalidType, Message: "Has the wrong type."})
	default:
		switch {
		case errors.Is(err, openapi3filter.ErrInvalidRequired):
			return append(out, problem.FieldError{Field: paramName(param), Code: problem.Required, Message: "Is required."})
		case errors.Is(err, openapi3filter.ErrInvalidEmptyValue):
			return append(out, problem.FieldError{Field: paramName(param), Code: problem.TooShort, Message: "Must not be empty."})
		}
		var se *openapi3.SchemaError
		if errors.As(err, &se) {
			return append(out, schemaFieldError(se, param))
		}
		if param != nil {
			return append(out, problem.FieldError{Field: param.Name, Code: problem.InvalidValue, Message: sentence(safeReason(err))})
		}
	}
	return out
}

var unsupportedProperty = regexp.MustCompile(`property "([^"]+)" is unsupported`)
var missingProperty = regexp.MustCompile(`property "([^"]+)" is missing`)

func schemaFieldError(e *openapi3.SchemaError, param *openapi3.Parameter) problem.FieldError {
	path := e.JSONPointer()
	field := dotted(path)
	if param != nil {
		field = paramName(param)
		if len(path) > 0 {
			field += "." + dotted(path)
		}
	}
	s := e.Schema
	// kin-openapi points an unknown property at its object, naming the
	// property only in the reason.
	if m := unsupportedProperty.FindStringSubmatch(e.Reason); m != nil {
		return problem.FieldError{Field: join(field, m[1]), Code: problem.UnknownField, Message: "Is not a known field."}
	}
	switch e.SchemaField {
	case "required":
		if m := missingProperty.FindStringSubmatch(e.Reason); m != nil && !strings.HasSuffix(field, m[1]) {
			field = join(field, m[1])
		}
		return problem.FieldError{Field: field, Code: problem.Required, Message: "Is required."}
	case "type", "nullable":
		return problem.FieldError{Field: field, Code: problem.InvalidType, Message: "Must be of type " + typeName(s) + "."}
	case "enum":
		return problem.FieldError{Field: field, Code: problem.InvalidValue, Message: "Must be one of " + enumList(s) + "."}
	case "pattern", "format":
		return problem.FieldError{Field: field, Code: problem.InvalidFormat, Message: formatMessage(s)}
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf":
		return problem.FieldError{Field: field, Code: problem.OutOfRange, Message: rangeMessage(s)}
	case "minLength", "minItems", "minProperties":
		return problem.FieldError{Field: field, Code: problem.TooShort, Message: lengthMessage(s)}
	case "maxLength", "maxItems", "maxProperties":
		return problem.FieldError{Field: field, Code: problem.TooLong, Message: lengthMessage(s)}
	}
	return problem.FieldError{Field: field, Code: problem.InvalidValue, Message: "Is not a valid value."}
}

// dotted turns a JSON pointer into amount.amountMinor / items[0].formats.
func dotted(path []string) string {
	var b strings.Builder
	for _, p := range path {
		if _, err := strconv.Atoi(p); err == nil {
			b.WriteString("[" + p + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

func join(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

func paramName(p *openapi3.Parameter) string {
	if p == nil {
		return "body"
	}
	return p.Name
}

func typeName(s *openapi3.Schema) string {
	if s == nil || s.Type == nil || len(*s.Type) == 0 {
		return "the documented type"
	}
	return strings.Join(*s.Type, " or ")
}

func enumList(s *openapi3.Schema) string {
	if s == nil {
		return "the documented values"
	}
	vals := make([]string, len(s.Enum))
	for i, v := range s.Enum {
		vals[i] = fmt.Sprint(v)
	}
	return strings.Join(vals, ", ")
}

func formatMessage(s *openapi3.Schema) string {
	switch {
	case s == nil:
		return "Has the wrong format."
	case s.Format == "uuid":
		return "Must be a UUID."
	case s.Format == "date-time":
		return "Must be an RFC 3339 date-time."
	case s.Pattern != "":
		return "Must match the pattern " + s.Pattern + "."
	}
	return "Has the wrong format."
}

func rangeMessage(s *openapi3.Schema) string {
	switch {
	case s == nil:
		return "Is out of range."
	case s.Min != nil && s.Max != nil:
		return fmt.Sprintf("Must be between %v and %v.", *s.Min, *s.Max)
	case s.Min != nil:
		return fmt.Sprintf("Must be at least %v.", *s.Min)
	case s.Max != nil:
		return fmt.Sprintf("Must be at most %v.", *s.Max)
	}
	return "Is out of range."
}

func lengthMessage(s *openapi3.Schema) string {
	if s == nil {
		return "Has the wrong length."
	}
	min, max, unit := s.MinLength, s.MaxLength, "characters"
	if s.Type != nil && s.Type.Is("array") {
		min, max, unit = s.MinItems, s.MaxItems, "items"
	}
	if max != nil {
		return fmt.Sprintf("Must have between %d and %d %s.", min, *max, unit)
	}
	return fmt.Sprintf("Must have at least %d %s.", min, unit)
}

// mergeFieldErrors appends extra errors for fields not yet reported: one
// error per field, the first failing rule being the one to fix first.
func mergeFieldErrors(fields, extra []problem.FieldError) []problem.FieldError {
	for _, x := range extra {
		if !slices.ContainsFunc(fields, func(f problem.FieldError) bool { return f.Field == x.Field }) {
			fields = append(fields, x)
		}
	}
	return fields
}

// safeReason keeps only the first line of an error and never the input.
func safeReason(err error) string {
	msg := err.Error()
	if i := strings.IndexAny(msg, "\n:"); i > 0 {
		msg = msg[:i]
	}
	return msg
}

func sentence(s string) string {
	if s == "" {
		return "Is not valid."
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}
