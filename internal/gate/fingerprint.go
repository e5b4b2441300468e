package gate

import (
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// idempotencyKey is the header of the operations whose requests Check
// fingerprints.
const idempotencyKey = "Idempotency-Key"

// fingerprint identifies a request of op, nil for an operation without an
// Idempotency-Key (docs/idempotency.md): the hash of its target and of its
// body as Check wrote it, compact and with members sorted, so whitespace and
// member order do not make two equal requests differ. The target is the
// method and the path with each parameter as the handler reads it, a UUID
// written in lowercase, an int64 in decimal without leading zeros
// (fingerprintable holds every parameter of a keyed operation to be one of
// the two); a parameter that is neither gives nil, and the validation
// refuses it.
func (op *Operation) fingerprint(params map[string]string, body []byte) []byte {
	if !op.Keyed {
		return nil
	}
	target := make([]byte, 0, 128)
	target = append(append(target, op.route.Method...), ' ')
	rest := op.route.Path
	for {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			break
		}
		end := open + strings.IndexByte(rest[open:], '}')
		value := params[rest[open+1:end]]
		target = append(target, rest[:open]...)
		rest = rest[end+1:]
		if n, err := strconv.ParseInt(value, 10, 64); err == nil && n > 0 && value[0] != '+' {
			target = strconv.AppendInt(target, n, 10)
			continue
		}
		if !isRFC9562UUID(value) {
			return nil
		}
		for i := range len(value) {
			c := value[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			target = append(target, c)
		}
	}
	h := sha256.New()
	h.Write(append(append(target, rest...), 0))
	h.Write(body)
	return h.Sum(nil)
}

// takesIdempotencyKey reports whether op declares the Idempotency-Key header.
func takesIdempotencyKey(op *openapi3.Operation) bool {
	for _, ref := range op.Parameters {
		if p := ref.Value; p != nil && p.In == openapi3.ParameterInHeader && p.Name == idempotencyKey {
			return true
		}
	}
	return false
}

// fingerprintable refuses a keyed operation with a path parameter that is
// not a UUID or an int64: fingerprint writes only those in a canonical form.
func fingerprintable(keyed bool, path string, item *openapi3.PathItem, op *openapi3.Operation) error {
	if !keyed {
		return nil
	}
	for _, params := range []openapi3.Parameters{item.Parameters, op.Parameters} {
		for _, ref := range params {
			p := ref.Value
			if p == nil || p.In != openapi3.ParameterInPath {
				continue
			}
			if s := p.Schema; s == nil || s.Value == nil || (s.Value.Format != "uuid" && s.Value.Format != "int64") {
				return fmt.Errorf("%s takes an %s and its path parameter %s is no uuid: its fingerprint has no canonical form", path, idempotencyKey, p.Name)
			}
		}
	}
	return nil
}
