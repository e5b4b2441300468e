package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

// MinSunsetPeriod is the change policy's shortest time from deprecating an
// operation to its sunset (openapi.yaml, "Versions, changes and
// deprecation"): clients get at least this long to move.
const MinSunsetPeriod = 180 * 24 * time.Hour

// The extensions a deprecated operation carries: when it was deprecated,
// and when it may go (x-sunset is also what oasdiff reads).
const (
	extDeprecatedAt = "x-deprecated-at"
	extSunset       = "x-sunset"
)

// deprecationHeaders are the header values every answer of a deprecated
// operation carries: Deprecation (RFC 9745, a structured-field date) and
// Sunset (RFC 8594, an HTTP-date).
type deprecationHeaders struct {
	deprecation, sunset string
}

func (d deprecationHeaders) set(h http.Header) {
	h.Set("Deprecation", d.deprecation)
	h.Set("Sunset", d.sunset)
}

// deprecations reads the spec's deprecated operations, by operationId. Each must say when
// it was deprecated and when it goes, at least MinSunsetPeriod apart, so the
// headers never announce less than the policy promises; a spec that does
// not is refused at start-up.
func deprecations(spec *openapi3.T) (map[string]deprecationHeaders, error) {
	out := map[string]deprecationHeaders{}
	var errs []error
	for path, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			if !op.Deprecated {
				continue
			}
			at, err1 := extensionDate(op, extDeprecatedAt)
			sunset, err2 := extensionDate(op, extSunset)
			if err := errors.Join(err1, err2); err != nil {
				errs = append(errs, fmt.Errorf("deprecated operation %s %s: %w", method, path, err))
				continue
			}
			if sunset.Sub(at) < MinSunsetPeriod {
				errs = append(errs, fmt.Errorf("deprecated operation %s %s: %s %s is less than %d days after %s %s",
					method, path, extSunset, sunset.Format(time.DateOnly), int(MinSunsetPeriod.Hours()/24), extDeprecatedAt, at.Format(time.DateOnly)))
				continue
			}
			out[op.OperationID] = deprecationHeaders{
				deprecation: "@" + strconv.FormatInt(at.Unix(), 10),
				sunset:      sunset.UTC().Format(http.TimeFormat),
			}
		}
	}
	return out, errors.Join(errs...)
}

// extensionDate reads an operation's date extension: an RFC 3339 date
// ("2027-06-30", midnight UTC) or date-time.
func extensionDate(op *openapi3.Operation, name string) (time.Time, error) {
	v, ok := op.Extensions[name]
	if !ok {
		return time.Time{}, fmt.Errorf("%s is missing", name)
	}
	s, ok := v.(string)
	if !ok {
		return time.Time{}, fmt.Errorf("%s is %T, want a quoted date such as \"2027-06-30\"", name, v)
	}
	for _, layout := range []string{time.DateOnly, time.RFC3339} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%s %q is not a date (2027-06-30) or an RFC 3339 date-time", name, s)
}
