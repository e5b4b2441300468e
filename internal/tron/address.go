// Package tron checks and builds TRON base58check addresses, so a mistyped
// treasury address is refused at start-up instead of losing deposits.
package tron

import (
	"crypto/sha256"
	"errors"
	"fmt"
)

// VersionByte is the first byte of every TRON mainnet address payload; it is
// what makes base58 addresses start with "T".
const VersionByte = 0x41

// addressLen is the decoded length: version byte, 20-byte account, 4-byte checksum.
const addressLen = 25

// maxEncodedLen bounds the input before decoding: 25 bytes never need more
// than 35 base58 characters, so longer strings are refused without work.
const maxEncodedLen = 35

// DevTreasuryAddress is EncodeAddress of twenty 0x11 bytes. It is the test
// treasury for local development only: nobody holds its key, so it must never
// be configured in production.
const DevTreasuryAddress = "TBXSw8fM4jpQkGc6zZjsVABFpVN7UvXPdV"

// ZeroAddress is EncodeAddress of twenty zero bytes: the address nobody
// holds a key of, where money sent is burnt.
const ZeroAddress = "T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb"

// MainnetUSDT is the USDT (TRC20) contract on TRON mainnet, the token
// deposits are paid in unless configured otherwise.
const MainnetUSDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"

// The errors ValidateAddress returns, so callers can tell why an address was
// refused.
var (
	ErrInvalidBase58 = errors.New("invalid base58 character")
	ErrWrongLength   = errors.New("wrong length")
	ErrVersion       = errors.New("not a TRON address (version byte)")
	ErrChecksum      = errors.New("checksum mismatch")
)

const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

var decodeTable = func() [256]int8 {
	var t [256]int8
	for i := range t {
		t[i] = -1
	}
	for i := 0; i < len(alphabet); i++ {
		t[alphabet[i]] = int8(i)
	}
	return t
}()

// ValidateAddress reports whether s is a TRON base58check address: base58
// (Bitcoin alphabet) of 25 bytes whose first byte is 0x41 and whose last 4
// bytes are the start of sha256(sha256(first 21 bytes)). A nil result means
// funds sent to s reach a well-formed account.
func ValidateAddress(s string) error {
	for i := 0; i < len(s); i++ {
		if decodeTable[s[i]] < 0 {
			return fmt.Errorf("%w at position %d", ErrInvalidBase58, i+1)
		}
	}
	if len(s) == 0 || len(s) > maxEncodedLen {
		return fmt.Errorf("%w: %d characters", ErrWrongLength, len(s))
	}
	raw := decodeBase58(s)
	if len(raw) != addressLen {
		return fmt.Errorf("%w: decodes to %d bytes, want %d", ErrWrongLength, len(raw), addressLen)
	}
	if raw[0] != VersionByte {
		return fmt.Errorf("%w: 0x%02x, want 0x%02x", ErrVersion, raw[0], VersionByte)
	}
	sum := checksum(raw[:21])
	if [4]byte(raw[21:]) != sum {
		return ErrChecksum
	}
	return nil
}

// EncodeAddress builds the base58check address of a 20-byte account payload
// (version 0x41 and checksum added), so tests and demo configuration can make
// valid addresses. It panics if payload20 is not 20 bytes long, which is a
// programming error.
func EncodeAddress(payload20 []byte) string {
	if len(payload20) != 20 {
		panic(fmt.Sprintf("tron: EncodeAddress needs a 20-byte payload, got %d bytes", len(payload20)))
	}
	raw := make([]byte, 0, addressLen)
	raw = append(raw, VersionByte)
	raw = append(raw, payload20...)
	sum := checksum(raw)
	raw = append(raw, sum[:]...)
	return encodeBase58(raw)
}

func checksum(b []byte) [4]byte {
	first := sha256.Sum256(b)
	second := sha256.Sum256(first[:])
	return [4]byte(second[:4])
}

// decodeBase58 decodes s, which must hold only alphabet characters. Each
// leading '1' is a leading zero byte.
func decodeBase58(s string) []byte {
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	// Big-endian base-256 accumulator; 733/1000 > log(58)/log(256).
	buf := make([]byte, (len(s)-zeros)*733/1000+1)
	used := 0 // bytes of buf in use, counted from the end
	for i := zeros; i < len(s); i++ {
		carry := int(decodeTable[s[i]])
		j := 0
		for k := len(buf) - 1; (carry != 0 || j < used) && k >= 0; k-- {
			carry += 58 * int(buf[k])
			buf[k] = byte(carry)
			carry >>= 8
			j++
		}
		used = j
	}
	out := make([]byte, zeros+used)
	copy(out[zeros:], buf[len(buf)-used:])
	return out
}

// encodeBase58 encodes b with the Bitcoin alphabet. Each leading zero byte is
// a leading '1'.
func encodeBase58(b []byte) string {
	zeros := 0
	for zeros < len(b) && b[zeros] == 0 {
		zeros++
	}
	// Big-endian base-58 accumulator; 138/100 > log(256)/log(58).
	buf := make([]byte, (len(b)-zeros)*138/100+1)
	used := 0
	for _, c := range b[zeros:] {
		carry := int(c)
		j := 0
		for k := len(buf) - 1; (carry != 0 || j < used) && k >= 0; k-- {
			carry += 256 * int(buf[k])
			buf[k] = byte(carry % 58)
			carry /= 58
			j++
		}
		used = j
	}
	out := make([]byte, zeros+used)
	for i := 0; i < zeros; i++ {
		out[i] = '1'
	}
	for i, d := range buf[len(buf)-used:] {
		out[zeros+i] = alphabet[d]
	}
	return string(out)
}
