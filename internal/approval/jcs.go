package approval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Canonicalize rewrites a JSON text in the JSON Canonicalization Scheme
// of RFC 8785: no whitespace, object members sorted by the UTF-16 code
// units of their names, numbers as ECMAScript prints an IEEE 754 double,
// strings with only the escapes JSON requires. Two parties that hold the
// same data then sign and verify the same bytes. It refuses what I-JSON
// (RFC 7493) refuses: duplicate member names, invalid UTF-8, numbers
// outside the double range.
func Canonicalize(text []byte) ([]byte, error) {
	if !utf8.Valid(text) {
		return nil, errors.New("jcs: the text is not UTF-8")
	}
	d := json.NewDecoder(bytes.NewReader(text))
	d.UseNumber()
	var out bytes.Buffer
	if err := canonicalValue(d, &out); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err == nil {
		return nil, errors.New("jcs: text after the value")
	}
	return out.Bytes(), nil
}

// canonicalValue writes the next value of d.
func canonicalValue(d *json.Decoder, out *bytes.Buffer) error {
	tok, err := d.Token()
	if err != nil {
		return fmt.Errorf("jcs: %w", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return canonicalArray(d, out)
		}
		return canonicalObject(d, out)
	case string:
		writeString(out, t)
	case json.Number:
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil {
			return fmt.Errorf("jcs: number %s: %w", t, err)
		}
		s, err := formatNumber(f)
		if err != nil {
			return err
		}
		out.WriteString(s)
	case bool:
		out.WriteString(strconv.FormatBool(t))
	case nil:
		out.WriteString("null")
	}
	return nil
}

func canonicalArray(d *json.Decoder, out *bytes.Buffer) error {
	out.WriteByte('[')
	for i := 0; d.More(); i++ {
		if i > 0 {
			out.WriteByte(',')
		}
		if err := canonicalValue(d, out); err != nil {
			return err
		}
	}
	_, err := d.Token() // ]
	out.WriteByte(']')
	return err
}

type member struct {
	name  string
	key   []uint16
	value []byte
}

func canonicalObject(d *json.Decoder, out *bytes.Buffer) error {
	var members []member
	seen := map[string]bool{}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return fmt.Errorf("jcs: %w", err)
		}
		name := tok.(string)
		if seen[name] {
			return fmt.Errorf("jcs: duplicate member %q", name)
		}
		seen[name] = true
		var value bytes.Buffer
		if err := canonicalValue(d, &value); err != nil {
			return err
		}
		members = append(members, member{name: name, key: utf16.Encode([]rune(name)), value: value.Bytes()})
	}
	if _, err := d.Token(); err != nil { // }
		return fmt.Errorf("jcs: %w", err)
	}
	slices.SortFunc(members, func(a, b member) int { return slices.Compare(a.key, b.key) })
	out.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			out.WriteByte(',')
		}
		writeString(out, m.name)
		out.WriteByte(':')
		out.Write(m.value)
	}
	out.WriteByte('}')
	return nil
}

// writeString writes s as ECMAScript's JSON.stringify does: the two-letter
// escapes for \b \t \n \f \r " \, \u00xx (lower case) for the other
// control characters, everything else as it is.
func writeString(out *bytes.Buffer, s string) {
	out.WriteByte('"')
	for _, r := range s {
		switch r {
		case '\b':
			out.WriteString(`\b`)
		case '\t':
			out.WriteString(`\t`)
		case '\n':
			out.WriteString(`\n`)
		case '\f':
			out.WriteString(`\f`)
		case '\r':
			out.WriteString(`\r`)
		case '"':
			out.WriteString(`\"`)
		case '\\':
			out.WriteString(`\\`)
		default:
			if r < 0x20 {
				fmt.Fprintf(out, `\u%04x`, r)
			} else {
				out.WriteRune(r)
			}
		}
	}
	out.WriteByte('"')
}

// formatNumber is ECMAScript's Number::toString(f) (ECMA-262, 7.1.12.1):
// the shortest digits that read back as f, in plain notation from 1e-6 up
// to 1e21 and in exponent notation outside it.
func formatNumber(f float64) (string, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", fmt.Errorf("jcs: %v is no JSON number", f)
	}
	if f == 0 {
		return "0", nil // -0 too
	}
	var b strings.Builder
	if f < 0 {
		b.WriteByte('-')
		f = -f
	}
	// The shortest round-trip digits d1.d2…dk and the exponent e, so that
	// f = 0.d1…dk × 10^n with n = e + 1.
	mantissa, exp, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, 64), "e")
	digits := strings.Replace(mantissa, ".", "", 1)
	e, err := strconv.Atoi(exp)
	if err != nil {
		return "", err
	}
	k, n := len(digits), e+1
	switch {
	case k <= n && n <= 21:
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", n-k))
	case 0 < n && n <= 21:
		b.WriteString(digits[:n])
		b.WriteByte('.')
		b.WriteString(digits[n:])
	case -6 < n && n <= 0:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -n))
		b.WriteString(digits)
	default:
		b.WriteByte(digits[0])
		if k > 1 {
			b.WriteByte('.')
			b.WriteString(digits[1:])
		}
		b.WriteByte('e')
		if n-1 >= 0 {
			b.WriteByte('+')
		}
		b.WriteString(strconv.Itoa(n - 1))
	}
	return b.String(), nil
}
