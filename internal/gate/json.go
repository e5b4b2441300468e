package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"creativeapi/internal/jsontext"
	"creativeapi/internal/problem"
)

// MaxBodyBytes bounds every request body; commands are a few hundred bytes.
const MaxBodyBytes = 64 << 10

// readJSON reads r's body and decodes it, once, as the schema validation
// reads JSON (numbers as json.Number). In order: a body over MaxBodyBytes
// is a 413, refused before reading when Content-Length says so
// (http.MaxBytesReader makes net/http close the connection after the
// answer instead of reading the rest); a body that stops arriving
// (ReadTimeout) is a 400; an encoded body or one that is not
// application/json is a 415; an empty or malformed body is a 400 malformed_json.
// An object that repeats a member name is malformed too: parsers disagree
// on which copy wins (RFC 8259 §4), so the gate and the handler could read
// different requests.
func readJSON(w http.ResponseWriter, r *http.Request) (value any, body []byte, err error) {
	// The 413 is formatted only when it is sent: built up front it was 3
	// allocations of every request with a body.
	tooLarge := func() error {
		return problem.New(http.StatusRequestEntityTooLarge, problem.RequestTooLarge, "The request body is larger than %d bytes.", MaxBodyBytes)
	}
	if r.ContentLength > MaxBodyBytes {
		return nil, nil, tooLarge()
	}
	if r.Body != nil && r.Body != http.NoBody {
		body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
		var maxErr *http.MaxBytesError
		switch {
		case errors.As(err, &maxErr):
			return nil, nil, tooLarge()
		case err != nil:
			return nil, nil, problem.New(http.StatusBadRequest, problem.MalformedJSON, "The request body could not be read.")
		}
	}
	if encoded(r.Header) {
		return nil, nil, problem.New(http.StatusUnsupportedMediaType, problem.UnsupportedMediaType, "Send the body without Content-Encoding: compressed bodies are not accepted.")
	}
	// Two Content-Types: the gate and the handler could read different ones.
	if len(r.Header.Values("Content-Type")) > 1 {
		return nil, nil, problem.New(http.StatusUnsupportedMediaType, problem.UnsupportedMediaType, "Send one Content-Type header: application/json.")
	}
	if !isJSON(r.Header.Get("Content-Type")) {
		return nil, nil, problem.New(http.StatusUnsupportedMediaType, problem.UnsupportedMediaType, "Send the body as application/json (UTF-8).")
	}
	if len(body) == 0 {
		return nil, nil, problem.New(http.StatusBadRequest, problem.MalformedJSON, "The request body is required and must be JSON.")
	}
	// JSON text is UTF-8 (RFC 8259 §8.1). encoding/json would quietly turn
	// invalid bytes into U+FFFD, so the stored text would not be the text
	// sent: refused, in one pass over the body.
	if !utf8.Valid(body) {
		return nil, nil, problem.New(http.StatusBadRequest, problem.MalformedJSON, "The request body is not valid UTF-8 (RFC 8259 §8.1).")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&value); err != nil {
		return nil, nil, problem.New(http.StatusBadRequest, problem.MalformedJSON, "The request body is not valid JSON.")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, problem.New(http.StatusBadRequest, problem.MalformedJSON, "The request body is not valid JSON.")
	}
	if name, ok := duplicateMember(body); ok {
		return nil, nil, problem.New(http.StatusBadRequest, problem.MalformedJSON, "The request body repeats the member %q in one object.", name)
	}
	return value, body, nil
}

// isJSON reports whether contentType names application/json in UTF-8, the
// only encoding JSON has (RFC 8259 §8.1): a body declared as UTF-16 is not
// read as if it were UTF-8. The spelling clients send is answered without
// mime.ParseMediaType, which builds a map of parameters per request.
func isJSON(contentType string) bool {
	if contentType == "application/json" {
		return true
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "application/json" {
		return false
	}
	charset, ok := params["charset"]
	return !ok || strings.EqualFold(charset, "utf-8")
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

// validatedBody is the body Check leaves on the request: its canonical
// bytes, and the decoded value they were written from. The strict handlers
// bind the value (oapi-codegen's runtime.BindJSONValue finds it through
// ValidatedValue, the hook kin-openapi's KeepValidatedValue uses), so the
// body is decoded once: Echo's second decode of the bytes was 9 of a
// deposit create's allocations. Members bind by their exact names, the
// names the schema validated.
type validatedBody struct {
	bytes.Reader
	value any
}

func (b *validatedBody) Close() error { return nil }

// ValidatedValue is the body as the gate decoded and validated it.
func (b *validatedBody) ValidatedValue() any { return b.value }

// canonical is a decoded body written as the handler reads it and as
// idempotency fingerprints it: compact, members sorted, and every number
// that is an integer written another way (2.0, 1e2, -0.0) written as that
// integer. JSON Schema counts those as integers, so the validation accepted
// them; Go's decoder would refuse them for an int. The bytes are
// json.Marshal's (stored fingerprints were made with it; a test holds them
// equal), written without reflection: json.Marshal of the decoded map took
// 11 of a deposit create's allocations and a fifth of the gate's CPU
// (BenchmarkValidateCommand; kept with jsontext,
// docs/performance.md, ablation row D). sizeHint is the body's length as received.
func canonical(value any, sizeHint int) ([]byte, error) {
	integersAsIntegers(value)
	return appendCanonical(make([]byte, 0, sizeHint), value)
}

// appendCanonical appends value, as the decoder in readJSON makes them
// (map[string]any, []any, string, json.Number, bool, nil), the way
// json.Marshal writes it: map members sorted by name, strings escaped for
// HTML. Any other type goes through json.Marshal.
func appendCanonical(dst []byte, value any) ([]byte, error) {
	switch v := value.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		if v {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case string:
		return jsontext.AppendString(dst, v), nil
	case json.Number:
		// Valid: the decoder read it or integerOf wrote it.
		if v == "" {
			break // json.Marshal writes 0
		}
		return append(dst, v...), nil
	case []any:
		dst = append(dst, '[')
		for i, item := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendCanonical(dst, item); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case map[string]any:
		var buf [16]string
		names := buf[:0]
		for name := range v {
			names = append(names, name)
		}
		slices.Sort(names)
		dst = append(dst, '{')
		for i, name := range names {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(jsontext.AppendString(dst, name), ':')
			var err error
			if dst, err = appendCanonical(dst, v[name]); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	}
	b, err := json.Marshal(value)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

// setAbove is the member count beyond which an object's names go into a
// set, so the scan stays linear for objects of thousands of members.
const setAbove = 16

// duplicateMember reports the first member name that an object of body
// repeats. body must be valid JSON (json.Valid): the scan only tracks
// strings, objects and arrays. Names are compared after unescaping, so
// "a" and "\u0061" are the same member. The names of the open objects
// share one list (an object's names follow its parent's and are dropped
// when it closes), so a small body costs no allocation.
func duplicateMember(body []byte) (string, bool) {
	type frame struct {
		start int                 // the frame's first name in names
		set   map[string]struct{} // set of a large object's names
	}
	var frameBuf [8]frame
	var nameBuf [32][]byte
	frames, names := frameBuf[:0], nameBuf[:0]
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '{', '[':
			frames = append(frames, frame{start: len(names)})
		case '}', ']':
			names = names[:frames[len(frames)-1].start]
			frames = frames[:len(frames)-1]
		case '"':
			start, escaped := i, false
			for i++; body[i] != '"'; i++ {
				if body[i] == '\\' {
					escaped = true
					i++
				}
			}
			j := i + 1
			for j < len(body) && (body[j] == ' ' || body[j] == '\t' || body[j] == '\n' || body[j] == '\r') {
				j++
			}
			if j == len(body) || body[j] != ':' || len(frames) == 0 {
				continue // a value, not a member name
			}
			name := body[start+1 : i]
			if escaped {
				var s string
				if json.Unmarshal(body[start:i+1], &s) != nil {
					continue
				}
				name = []byte(s)
			}
			f := &frames[len(frames)-1]
			if f.set != nil {
				if _, ok := f.set[string(name)]; ok {
					return string(name), true
				}
				f.set[string(name)] = struct{}{}
				continue
			}
			for _, n := range names[f.start:] {
				if bytes.Equal(n, name) {
					return string(name), true
				}
			}
			names = append(names, name)
			if len(names)-f.start > setAbove {
				f.set = make(map[string]struct{}, 2*setAbove)
				for _, n := range names[f.start:] {
					f.set[string(n)] = struct{}{}
				}
				names = names[:f.start]
			}
		}
	}
	return "", false
}

// nulFieldErrors names every string of a decoded body that holds U+0000,
// by field: PostgreSQL stores no NUL in text, so such a request would fail
// in the database. openapi.yaml states the rule once for every string.
// JSON can only write U+0000 in a string as \u0000, so a body without
// that is not walked.
func nulFieldErrors(value any, body []byte, failed []problem.FieldError) []problem.FieldError {
	if !bytes.Contains(body, []byte(`\u0000`)) {
		return nil
	}
	return stringFieldErrors(value, failed, func(s string) bool { return strings.IndexByte(s, 0) >= 0 },
		"Must not contain the NUL character (U+0000).")
}

// loneSurrogateFieldErrors names every string of body that escapes half
// of a UTF-16 surrogate pair without the other half ("\ud800"): that is
// no character, and Go's decoder would quietly store U+FFFD in its place.
// Such escapes are marked in a copy of the body, which is decoded again
// to find their fields (a rare body: an ordinary one is only scanned).
func loneSurrogateFieldErrors(body []byte, failed []problem.FieldError) []problem.FieldError {
	marked, ok := markLoneSurrogates(body)
	if !ok {
		return nil
	}
	var value any
	dec := json.NewDecoder(bytes.NewReader(marked))
	dec.UseNumber()
	if dec.Decode(&value) != nil {
		return nil
	}
	return stringFieldErrors(value, failed, func(s string) bool { return strings.ContainsRune(s, loneSurrogateMark) },
		"Must be valid Unicode text: an escaped surrogate (\\ud800 to \\udfff) needs its pair.")
}

// loneSurrogateMark replaces a lone surrogate's escape in the copy that
// loneSurrogateFieldErrors decodes: a noncharacter, written \uffff (as
// long as the escape it replaces).
const loneSurrogateMark = '\uffff'

// markLoneSurrogates is body with every escape of an unpaired surrogate
// written \uffff instead, and whether there was one. body must be valid
// JSON, where every backslash starts an escape inside a string.
func markLoneSurrogates(body []byte) ([]byte, bool) {
	var out []byte
	escape := func(i int) (rune, bool) {
		if i+6 > len(body) || body[i] != '\\' || body[i+1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(string(body[i+2:i+6]), 16, 16)
		return rune(v), err == nil
	}
	for i := 0; i < len(body); i++ {
		if body[i] != '\\' {
			continue
		}
		r, ok := escape(i)
		if !ok {
			i++ // a two-character escape
			continue
		}
		if 0xD800 <= r && r <= 0xDBFF {
			if low, ok := escape(i + 6); ok && 0xDC00 <= low && low <= 0xDFFF {
				i += 11 // a pair
				continue
			}
		} else if r < 0xDC00 || r > 0xDFFF {
			i += 5
			continue
		}
		if out == nil {
			out = bytes.Clone(body)
		}
		copy(out[i:], `\uffff`)
		i += 5
	}
	return out, out != nil
}

// stringFieldErrors names, by field, every string of a decoded body that
// bad reports. The walk does not enter a field already refused (failed):
// every object of the spec is closed, so the walk stays within the
// schema's depth and builds no path longer than the schema's, while a body
// nested thousands of levels deep inside an unknown member cost a path per
// level, quadratic in the depth.
func stringFieldErrors(value any, failed []problem.FieldError, bad func(string) bool, message string) []problem.FieldError {
	refused := make(map[string]bool, len(failed))
	for _, f := range failed {
		refused[f.Field] = true
	}
	if refused["body"] {
		return nil
	}
	var out []problem.FieldError
	var walk func(value any, path string)
	walk = func(value any, path string) {
		if refused[path] {
			return
		}
		switch v := value.(type) {
		case string:
			if bad(v) {
				field := path
				if field == "" {
					field = "body"
				}
				out = append(out, problem.FieldError{Field: field, Code: problem.InvalidFormat, Message: message})
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
