package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"creativeapi/internal/idempotency"
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
// 405 method_not_allowed for a known path with another method, with the
// methods it serves in Allow.
func (v *Validator) Route(r *http.Request) (*routers.Route, map[string]string, error) {
	route, params, err := v.router.FindRoute(r)
	switch {
	case err == nil:
		return route, params, nil
	case errors.Is(err, routers.ErrMethodNotAllowed):
		perr := methodNotAllowed(r.Method, r.URL.Path)
		perr.Allow = v.allow(r)
		return nil, nil, perr
	default:
		return nil, nil, problem.New(http.StatusNotFound, problem.NotFound, "The requested resource does not exist.")
	}
}

// allow is the Allow header of r's path: the methods the spec declares on it.
func (v *Validator) allow(r *http.Request) string {
	var methods []string
	for _, m := range methodOrder {
		probe := r.WithContext(r.Context())
		probe.Method = m
		if _, _, err := v.router.FindRoute(probe); err == nil {
			methods = append(methods, m)
		}
	}
	return allowList(methods)
}

// Validate checks parameters, headers and the body of r (already read into
// body) against route, and returns a Problem for the first kind of failure:
// 415 for a body that is not JSON (or is encoded), 400 for malformed JSON,
// else 422 with every failing field. It returns the body the handler is to
// read: body itself, or body with its integers written as integers when it
// wrote one as 2.0 or 1e2 (integers to JSON Schema, not to Go's decoder).
func (v *Validator) Validate(ctx context.Context, r *http.Request, route *routers.Route, params map[string]string, body []byte) ([]byte, error) {
	return v.validate(ctx, r, route, params, body, true)
}

// ValidateReplay is Validate without the operation's body checks, for a
// command whose answer is stored under its Idempotency-Key already: the
// checks read today's configuration (deposit bounds), and a stored answer
// comes back whatever it says now.
func (v *Validator) ValidateReplay(ctx context.Context, r *http.Request, route *routers.Route, params map[string]string, body []byte) ([]byte, error) {
	return v.validate(ctx, r, route, params, body, false)
}

func (v *Validator) validate(ctx context.Context, r *http.Request, route *routers.Route, params map[string]string, body []byte, withChecks bool) ([]byte, error) {
	if rb := route.Operation.RequestBody; rb != nil && rb.Value != nil {
		if encoded(r.Header) {
			return nil, problem.New(http.StatusUnsupportedMediaType, problem.UnsupportedMediaType, "Send the body without Content-Encoding: compressed bodies are not accepted.")
		}
		if !isJSON(r.Header.Get("Content-Type")) {
			return nil, problem.New(http.StatusUnsupportedMediaType, problem.UnsupportedMediaType, "Send the body as application/json.")
		}
		if err := checkJSON(body); err != nil {
			return nil, err
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
	// A parameter sent twice is refused by name: the validator would read
	// the first copy and the handler's binding refuse the pair.
	fields := repeatedParameters(r, route)
	err := openapi3filter.ValidateRequest(ctx, &openapi3filter.RequestValidationInput{
		Request: r, PathParams: params, Route: input, Options: v.options,
	})
	if err != nil {
		// One error per field: the first failing rule is the one to fix first.
		fields = mergeFieldErrors(fields, fieldErrors(err, nil))
	}
	var value any
	decoded := false
	if len(body) > 0 {
		value, decoded = decodedBody(r.Body, body)
	}
	if check := v.checks[route.Operation.OperationID]; withChecks && check != nil && decoded {
		fields = mergeFieldErrors(fields, check(value))
	}
	if decoded {
		fields = mergeFieldErrors(fields, nulFieldErrors(value))
	}
	if len(fields) > 0 {
		return nil, problem.Invalid(fields)
	}
	if err != nil {
		// An error with no field to blame: keep it a client error, never a 500.
		return nil, problem.New(http.StatusBadRequest, problem.MalformedJSON, "The request could not be read: %s.", safeReason(err))
	}
	if decoded && integersAsIntegers(value) {
		if body, err = json.Marshal(value); err != nil {
			return nil, err
		}
	}
	return body, nil
}

// encoded reports whether the body comes with a Content-Encoding other than
// identity: the API reads only plain JSON, and a gzip body is not JSON.
func encoded(h http.Header) bool {
	for _, v := range h.Values("Content-Encoding") {
		for _, enc := range strings.Split(v, ",") {
			if enc = strings.TrimSpace(enc); enc != "" && !strings.EqualFold(enc, "identity") {
				return true
			}
		}
	}
	return false
}

// repeatedParameters names each query parameter or header of route sent
// more than once (an array parameter may repeat).
func repeatedParameters(r *http.Request, route *routers.Route) []problem.FieldError {
	var out []problem.FieldError
	var query url.Values
	check := func(refs openapi3.Parameters) {
		for _, ref := range refs {
			p := ref.Value
			if p == nil || p.Schema != nil && p.Schema.Value != nil && p.Schema.Value.Type.Is("array") {
				continue
			}
			n := 0
			switch p.In {
			case openapi3.ParameterInQuery:
				if r.URL.RawQuery == "" {
					continue
				}
				if query == nil {
					query = r.URL.Query()
				}
				n = len(query[p.Name])
			case openapi3.ParameterInHeader:
				n = len(r.Header.Values(p.Name))
			}
			if n > 1 {
				out = append(out, problem.FieldError{Field: p.Name, Code: problem.InvalidValue,
					Message: fmt.Sprintf("Is sent %d times; send it once.", n)})
			}
		}
	}
	if route.PathItem != nil {
		check(route.PathItem.Parameters)
	}
	check(route.Operation.Parameters)
	return out
}

// nulFieldErrors names every string of a decoded body that holds U+0000,
// by field: PostgreSQL stores no NUL in text, so such a request would fail
// in the database. openapi.yaml states the rule once for every string.
func nulFieldErrors(value any) []problem.FieldError {
	if !holdsNUL(value) {
		return nil // the common case, without building a path per member
	}
	var out []problem.FieldError
	var walk func(value any, path string)
	walk = func(value any, path string) {
		switch v := value.(type) {
		case string:
			if strings.IndexByte(v, 0) >= 0 {
				field := path
				if field == "" {
					field = "body"
				}
				out = append(out, problem.FieldError{Field: field, Code: problem.InvalidFormat, Message: "Must not contain the NUL character (U+0000)."})
			}
		case map[string]any:
			for k, item := range v {
				walk(item, join(path, k))
			}
		case []any:
			for i, item := range v {
				walk(item, path+"["+strconv.Itoa(i)+"]")
			}
		}
	}
	walk(value, "")
	slices.SortFunc(out, func(a, b problem.FieldError) int { return strings.Compare(a.Field, b.Field) })
	return out
}

func holdsNUL(value any) bool {
	switch v := value.(type) {
	case string:
		return strings.IndexByte(v, 0) >= 0
	case map[string]any:
		for _, item := range v {
			if holdsNUL(item) {
				return true
			}
		}
	case []any:
		for _, item := range v {
			if holdsNUL(item) {
				return true
			}
		}
	}
	return false
}

// integersAsIntegers rewrites, in a decoded body, every number that is an
// integer written another way (2.0, 1e2, -0.0) as that integer, and
// reports whether it rewrote any. JSON Schema counts them as integers, so
// the validator accepted them; Go's decoder would refuse them for an int.
// Past 2^53 a float64 no longer tells integers apart, and such numbers are
// out of every integer's range here anyway.
func integersAsIntegers(value any) bool {
	changed := false
	switch v := value.(type) {
	case map[string]any:
		for k, item := range v {
			if n, ok := item.(json.Number); ok {
				if i, ok := integerOf(n); ok {
					v[k], changed = i, true
				}
				continue
			}
			changed = integersAsIntegers(item) || changed
		}
	case []any:
		for idx, item := range v {
			if n, ok := item.(json.Number); ok {
				if i, ok := integerOf(n); ok {
					v[idx], changed = i, true
				}
				continue
			}
			changed = integersAsIntegers(item) || changed
		}
	}
	return changed
}

// integerOf is n as a plain integer when n is an integer written otherwise.
func integerOf(n json.Number) (json.Number, bool) {
	if !strings.ContainsAny(string(n), ".eE") {
		return "", false
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return "", false
	}
	return json.Number(strconv.FormatInt(int64(f), 10)), true
}

// singleLinePattern is openapi.yaml's pattern of single-line text (names,
// titles, emails): no control character (Unicode category Cc: U+0000 to
// U+001F and U+007F to U+009F).
const singleLinePattern = `^[^\u0000-\u001F\u007F-\u009F]*$`

// patternMatchers replace regular expressions of the spec that cost more
// than the rest of a request's validation: the Idempotency-Key's bounded
// repetitions make Go's regexp track hundreds of states per character.
// Each says exactly what its pattern says (TestPatternMatchersMatchTheirPatterns).
var patternMatchers = map[string]func(string) bool{
	singleLinePattern: func(s string) bool { return !strings.ContainsFunc(s, unicode.IsControl) },
	// The Idempotency-Key format.
	`^(?:[\x21-\x7E]{1,255}|"[\x21-\x7E]{1,255}")$`: idempotency.ValidKey,
	`^[0-9]+$`: func(s string) bool {
		for i := range len(s) {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		}
		return len(s) > 0
	},
}

// patternMessages say in words what a pattern asks for.
var patternMessages = map[string]string{
	singleLinePattern: "Must not contain control characters (such as line breaks or U+0000).",
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
		// An integer too large to read is out of range, not of the wrong type.
		if param != nil && param.Schema != nil && param.Schema.Value != nil && param.Schema.Value.Type.Is("integer") {
			if raw, ok := e.Value.(string); ok && isIntegerLiteral(raw) {
				return append(out, problem.FieldError{Field: paramName(param), Code: problem.OutOfRange, Message: rangeMessage(param.Schema.Value)})
			}
		}
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

// schemaFieldError is the field error of e; a failure of the body as a
// whole (an array where an object belongs) is named "body".
func schemaFieldError(e *openapi3.SchemaError, param *openapi3.Parameter) problem.FieldError {
	fe := schemaFieldErrorAt(e, param)
	if fe.Field == "" {
		fe.Field = "body"
	}
	return fe
}

func schemaFieldErrorAt(e *openapi3.SchemaError, param *openapi3.Parameter) problem.FieldError {
	path := e.JSONPointer()
	field := dotted(path)
	if param != nil {
		field = paramName(param)
		if sub := dotted(path); sub != "" {
			// An array parameter's item is reviewStatus[0], not reviewStatus.[0].
			if sub[0] != '[' {
				field += "."
			}
			field += sub
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
		// The enum is checked before the type: a value of the wrong type
		// ("6" for 6, null) is a wrong type, not a wrong value.
		if !ofType(e.Value, s) {
			return problem.FieldError{Field: field, Code: problem.InvalidType, Message: "Must be of type " + typeName(s) + "."}
		}
		return problem.FieldError{Field: field, Code: problem.InvalidValue, Message: "Must be one of " + enumList(s) + "."}
	case "format":
		// An integer's format (int32, int64) is a range.
		if s != nil && s.Type != nil && (s.Type.Is("integer") || s.Type.Is("number")) {
			return problem.FieldError{Field: field, Code: problem.OutOfRange, Message: rangeMessage(s)}
		}
		return problem.FieldError{Field: field, Code: problem.InvalidFormat, Message: formatMessage(s)}
	case "pattern":
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

// ofType reports whether a decoded JSON value has the schema's type.
func ofType(value any, s *openapi3.Schema) bool {
	if s == nil || s.Type == nil || len(*s.Type) == 0 {
		return true
	}
	switch value.(type) {
	case nil:
		return s.Nullable
	case string:
		return s.Type.Is("string")
	case json.Number, float64:
		return s.Type.Is("integer") || s.Type.Is("number")
	case bool:
		return s.Type.Is("boolean")
	case map[string]any:
		return s.Type.Is("object")
	case []any:
		return s.Type.Is("array")
	}
	return true
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
	case patternMessages[s.Pattern] != "":
		return patternMessages[s.Pattern]
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
	if len(extra) == 0 {
		return fields
	}
	seen := make(map[string]bool, len(fields)+len(extra))
	for _, f := range fields {
		seen[f.Field] = true
	}
	for _, x := range extra {
		if !seen[x.Field] {
			seen[x.Field] = true
			fields = append(fields, x)
		}
	}
	return fields
}

// isIntegerLiteral reports whether s is an optional minus and digits.
func isIntegerLiteral(s string) bool {
	digits := strings.TrimPrefix(s, "-")
	if digits == "" {
		return false
	}
	for i := range len(digits) {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	return true
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
