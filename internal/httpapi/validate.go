package httpapi

import (
	"context"
	"errors"
	"fmt"
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
// value). It sees only bodies that are valid JSON and reports field errors
// in the same vocabulary, so a client gets every failing field at once.
type BodyCheck func(body []byte) []problem.FieldError

// Validator routes requests on the spec and validates them against it.
type Validator struct {
	router  routers.Router
	options *openapi3filter.Options
	checks  map[string]BodyCheck
}

var registerFormats sync.Once

// NewValidator builds the router once from spec. checks maps operationIds to
// their extra body rules.
func NewValidator(spec *openapi3.T, checks map[string]BodyCheck) (*Validator, error) {
	registerFormats.Do(func() {
		// kin-openapi checks no uuid format unless one is registered. RFC 9562
		// accepts UUIDv7 as well as the v4 ids PostgreSQL generates.
		openapi3.DefineStringFormatValidator("uuid", openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringForUUIDOfRFC9562))
	})
	// Without servers, the Host header takes no part in matching.
	spec.Servers = nil
	router, err := gorillamux.NewRouter(spec)
	if err != nil {
		return nil, fmt.Errorf("build the spec router: %w", err)
	}
	return &Validator{
		router: router,
		options: &openapi3filter.Options{
			MultiError: true,
			// Authentication runs before validation (401 before 422), in the gate.
			AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
		},
		checks: checks,
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
	err := openapi3filter.ValidateRequest(ctx, &openapi3filter.RequestValidationInput{
		Request: r, PathParams: params, Route: route, Options: v.options,
	})
	var fields []problem.FieldError
	if err != nil {
		// One error per field: the first failing rule is the one to fix first.
		fields = mergeFieldErrors(nil, fieldErrors(err, nil))
	}
	if check := v.checks[route.Operation.OperationID]; check != nil && len(body) > 0 {
		fields = mergeFieldErrors(fields, check(body))
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
