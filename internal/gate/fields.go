package gate

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"creativeapi/internal/problem"
)

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

// undecodableParameters names each parameter of route whose value is not
// valid UTF-8 text (q=%ff): the database refuses such text (SQLSTATE
// 22021), so a search would fail with a 500; the rule holds for every
// string parameter, query, header or path, before any of them reaches SQL.
func undecodableParameters(r *http.Request, route *routers.Route, params map[string]string) []problem.FieldError {
	var out []problem.FieldError
	var query url.Values
	check := func(refs openapi3.Parameters) {
		for _, ref := range refs {
			p := ref.Value
			if p == nil {
				continue
			}
			var values []string
			switch p.In {
			case openapi3.ParameterInQuery:
				if r.URL.RawQuery == "" {
					continue
				}
				if query == nil {
					query = r.URL.Query()
				}
				values = query[p.Name]
			case openapi3.ParameterInHeader:
				values = r.Header.Values(p.Name)
			case openapi3.ParameterInPath:
				values = []string{params[p.Name]}
			}
			for _, v := range values {
				if !utf8.ValidString(v) {
					out = append(out, problem.FieldError{Field: p.Name, Code: problem.InvalidFormat, Message: "Must be valid UTF-8 text."})
					break
				}
			}
		}
	}
	if route.PathItem != nil {
		check(route.PathItem.Parameters)
	}
	check(route.Operation.Parameters)
	return out
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
		return append(out, schemaFieldErrors(e, param)...)
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
			return append(out, schemaFieldErrors(se, param)...)
		}
		if param != nil {
			return append(out, problem.FieldError{Field: param.Name, Code: problem.InvalidValue, Message: sentence(safeReason(err))})
		}
	}
	return out
}

// schemaFieldErrors are the field errors of e; a failure of the body as a
// whole (an array where an object belongs) is named "body".
func schemaFieldErrors(e *openapi3.SchemaError, param *openapi3.Parameter) []problem.FieldError {
	field := dotted(e.JSONPointer())
	if param != nil {
		sub := field
		field = paramName(param)
		// An array parameter's item is reviewStatus[0], not reviewStatus.[0].
		if sub != "" && sub[0] != '[' {
			field += "."
		}
		field += sub
	}
	if e.SchemaField == "properties" {
		// An unknown property: kin-openapi points at its object, which
		// holds it beside the known ones.
		return unknownProperties(field, e)
	}
	fe := schemaFieldError(e, field)
	if fe.Field == "" {
		fe.Field = "body"
	}
	return []problem.FieldError{fe}
}

// unknownProperties names the member of e's object that its schema does
// not declare. kin-openapi reports each such member in an error of its
// own, each carrying the whole object, and names the member only in the
// reason: reading the name from there keeps the cost of N unknown members
// linear (listing the object's unknown members for each of its errors was
// N² field errors: seconds and hundreds of MB for a 23 KB body). A reason
// of another shape blames the object.
func unknownProperties(object string, e *openapi3.SchemaError) []problem.FieldError {
	name, ok := unsupportedProperty(e.Reason)
	if !ok {
		if object == "" {
			object = "body"
		}
		return []problem.FieldError{{Field: object, Code: problem.UnknownField, Message: "Has a member that is not a known field."}}
	}
	return []problem.FieldError{{Field: join(object, name), Code: problem.UnknownField, Message: "Is not a known field."}}
}

// unsupportedProperty is the member name of kin-openapi's reason
// `property "name" is unsupported`.
func unsupportedProperty(reason string) (string, bool) {
	quoted, ok := strings.CutPrefix(reason, "property ")
	if !ok {
		return "", false
	}
	if quoted, ok = strings.CutSuffix(quoted, " is unsupported"); !ok {
		return "", false
	}
	name, err := strconv.Unquote(quoted)
	return name, err == nil
}

// schemaFieldError is the field error of e at field, by the schema keyword
// that failed. kin-openapi puts a missing property in the path already.
func schemaFieldError(e *openapi3.SchemaError, field string) problem.FieldError {
	s := e.Schema
	switch e.SchemaField {
	case "required":
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
		return fmt.Sprintf("Must be between %s and %s.", bound(*s.Min), bound(*s.Max))
	case s.Min != nil:
		return fmt.Sprintf("Must be at least %s.", bound(*s.Min))
	case s.Max != nil:
		return fmt.Sprintf("Must be at most %s.", bound(*s.Max))
	}
	return "Is out of range."
}

// bound is a schema's minimum or maximum as a person writes it: %v wrote
// 2147483647 as 2.147483647e+09.
func bound(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
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
