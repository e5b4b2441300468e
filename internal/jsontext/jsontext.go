// Package jsontext writes JSON values by hand, byte for byte as
// encoding/json writes them, for the few hot encoders that skip its
// reflection: the gate's canonical request bodies and the creatives'
// answers (creative.Detail), kept by the ablation
// (docs/performance.md, ablation row D).
package jsontext

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// AppendString appends s quoted. A string of printable ASCII that needs no
// escape (the common case) is copied; any other goes through json.Marshal,
// so its escapes are encoding/json's (HTML characters, U+2028, invalid
// UTF-8).
func AppendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string always encodes
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// AppendUUID appends id quoted, in the lowercase form of uuid.UUID's
// MarshalText.
func AppendUUID(dst []byte, id uuid.UUID) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i, b := range id {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, hex[b>>4], hex[b&0x0f])
	}
	return append(dst, '"')
}

// AppendTime appends t quoted in RFC 3339 with as many fraction digits as
// it needs, as time.Time's MarshalJSON writes a time of the years 0–9999.
func AppendTime(dst []byte, t time.Time) []byte {
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"')
}
