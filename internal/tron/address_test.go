package tron

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"math/big"
	"strings"
	"testing"
)

func TestValidateAddress_AcceptsRealTronAddresses(t *testing.T) {
	for _, s := range []string{
		"TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7",
		"TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", // USDT TRC20 contract
		"T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb", // the all-zero account
		DevTreasuryAddress,
	} {
		t.Run(s, func(t *testing.T) {
			if err := ValidateAddress(s); err != nil {
				t.Fatalf("ValidateAddress(%q) = %v; want nil", s, err)
			}
		})
	}
}

func TestValidateAddress_RefusesWithTheReason(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want error
	}{
		{"one character changed", "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU8", ErrChecksum},
		{"two characters swapped", "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYUj7", ErrChecksum},
		{"bitcoin P2PKH", "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", ErrVersion},
		{"bitcoin P2SH", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy", ErrVersion},
		{"zero is not base58", "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU0", ErrInvalidBase58},
		{"capital O is not base58", "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjUO", ErrInvalidBase58},
		{"hex form", "41a614f803b6fd780986a42c78ec9c7f77e6ded13c", ErrInvalidBase58},
		{"surrounding space", " TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7", ErrInvalidBase58},
		{"garbage", "hello, world!", ErrInvalidBase58},
		{"non-ASCII", "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7é", ErrInvalidBase58},
		{"empty", "", ErrWrongLength},
		{"one character dropped still 25 bytes", "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU", ErrVersion},
		{"two characters dropped", "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYj", ErrWrongLength},
		{"one character added", "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7z", ErrWrongLength},
		{"far too long", strings.Repeat("z", 1000), ErrWrongLength},
		{"short base58", "abc", ErrWrongLength},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateAddress(tt.in)
			if !errors.Is(err, tt.want) {
				t.Fatalf("ValidateAddress(%q) = %v; want %v", tt.in, err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want.Error()) {
				t.Fatalf("error %q does not name the reason %q", err, tt.want)
			}
		})
	}
}

func TestDevTreasuryAddress_IsEncodeOfTwentyElevens(t *testing.T) {
	if got := EncodeAddress(bytes.Repeat([]byte{0x11}, 20)); got != DevTreasuryAddress {
		t.Fatalf("EncodeAddress(0x11 x 20) = %q; DevTreasuryAddress = %q", got, DevTreasuryAddress)
	}
	if !strings.HasPrefix(DevTreasuryAddress, "T") {
		t.Fatalf("DevTreasuryAddress %q does not start with T", DevTreasuryAddress)
	}
}

func TestZeroAddress_IsEncodeOfTwentyZeros(t *testing.T) {
	if got := EncodeAddress(make([]byte, 20)); got != ZeroAddress {
		t.Fatalf("EncodeAddress(0x00 x 20) = %q; ZeroAddress = %q", got, ZeroAddress)
	}
}

func TestEncodeAddress_MatchesKnownAddress(t *testing.T) {
	if got := EncodeAddress(make([]byte, 20)); got != "T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb" {
		t.Fatalf("EncodeAddress(zero) = %q", got)
	}
	raw := refDecode(t, "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7")
	if got := EncodeAddress(raw[1:21]); got != "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7" {
		t.Fatalf("EncodeAddress(payload of TLa2f6…) = %q", got)
	}
}

func TestEncodeAddress_PanicsOnWrongPayloadLength(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("EncodeAddress(19 bytes) did not panic")
		}
	}()
	EncodeAddress(make([]byte, 19))
}

func TestBase58_AgreesWithBigIntReference(t *testing.T) {
	for _, b := range [][]byte{
		{}, {0}, {0, 0}, {1}, {0, 0, 0xff}, {57}, {58}, bytes.Repeat([]byte{0xff}, 25),
		append([]byte{0, 0}, bytes.Repeat([]byte{0x80}, 23)...),
	} {
		s := encodeBase58(b)
		if ref := refEncode(b); s != ref {
			t.Fatalf("encodeBase58(%x) = %q; reference %q", b, s, ref)
		}
		if got := decodeBase58(s); !bytes.Equal(got, b) {
			t.Fatalf("decodeBase58(%q) = %x; want %x", s, got, b)
		}
	}
}

func FuzzValidateAddress(f *testing.F) {
	for _, s := range []string{"", "1", "T", "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7", "TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU8",
		"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "11111111111111111111111111", "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := ValidateAddress(s)
		if err == nil {
			raw := refDecode(t, s)
			if len(raw) != 25 || raw[0] != VersionByte {
				t.Fatalf("accepted %q decoding to %x", s, raw)
			}
			// The canonical encoding of an accepted address is the address itself.
			if got := EncodeAddress(raw[1:21]); got != s {
				t.Fatalf("accepted %q but it re-encodes as %q", s, got)
			}
			return
		}
		for _, known := range []error{ErrInvalidBase58, ErrWrongLength, ErrVersion, ErrChecksum} {
			if errors.Is(err, known) {
				return
			}
		}
		t.Fatalf("ValidateAddress(%q) = %v, not one of the documented errors", s, err)
	})
}

func FuzzEncodeAddress(f *testing.F) {
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{0x11}, 20))
	f.Add(bytes.Repeat([]byte{0xff}, 20))
	f.Add(make([]byte, 20))
	f.Fuzz(func(t *testing.T, b []byte) {
		payload := make([]byte, 20)
		copy(payload, b)
		s := EncodeAddress(payload)
		if err := ValidateAddress(s); err != nil {
			t.Fatalf("EncodeAddress(%x) = %q, which ValidateAddress refuses: %v", payload, s, err)
		}
		raw := refDecode(t, s)
		if !bytes.Equal(raw[1:21], payload) {
			t.Fatalf("EncodeAddress(%x) = %q decodes to payload %x", payload, s, raw[1:21])
		}
		sum := sha256.Sum256(raw[:21])
		sum = sha256.Sum256(sum[:])
		if !bytes.Equal(raw[21:], sum[:4]) {
			t.Fatalf("EncodeAddress(%x) checksum %x; want %x", payload, raw[21:], sum[:4])
		}
	})
}

// refEncode and refDecode are a slow math/big base58 used only to check the
// hand-written one.
func refEncode(b []byte) string {
	n := new(big.Int).SetBytes(b)
	var out []byte
	mod := new(big.Int)
	for n.Sign() > 0 {
		n.DivMod(n, big.NewInt(58), mod)
		out = append([]byte{alphabet[mod.Int64()]}, out...)
	}
	for i := 0; i < len(b) && b[i] == 0; i++ {
		out = append([]byte{'1'}, out...)
	}
	return string(out)
}

func refDecode(t *testing.T, s string) []byte {
	t.Helper()
	n := new(big.Int)
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	for i := 0; i < len(s); i++ {
		d := strings.IndexByte(alphabet, s[i])
		if d < 0 {
			t.Fatalf("refDecode: %q is not base58", s)
		}
		n.Mul(n, big.NewInt(58))
		n.Add(n, big.NewInt(int64(d)))
	}
	return append(make([]byte, zeros), n.Bytes()...)
}
