package gate

import (
	"bytes"
	"encoding/json"
	"testing"
)

// canonicalSamples are bodies whose canonical form must be json.Marshal's,
// byte for byte: idempotency fingerprints stored before the hand-written
// encoder were made with json.Marshal.
var canonicalSamples = []string{
	`{"amount":{"amountMinor":"100000000","currency":"USDT","scale":6}}`,
	`{"action":"request_changes","comment":"The logo is cut off.","expectedVersion":3}`,
	`{"b":1,"a":[1,2.5,-0.0,1e2,2.0,"x",null,true,false,{}],"c":{"z":[],"y":{"x":null}}}`,
	`{"html":"<b>&amp;</b>","quote":"\"q\" \\ /","ctl":"\u0000\u0001\b\f\n\r\t\u001f\u007f"}`,
	`{"unicode":"café ☕ 𝄞","separators":"\u2028\u2029","escaped":"\u0061\ud834\udd1e"}`,
	`{"ключ":"значение","<key>":"&","a\"b":1,"A":2,"a":3,"_":4,"":5}`,
	`{"big":12345678901234567890123,"exp":1.5e300,"neg":-12.50,"zero":0,"int":9007199254740993.0}`,
	`[{"b":2,"a":1},[],"s",1,null]`,
	`"just a string"`, `42`, `null`, `true`, `{}`, `[]`,
	`{"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k18":18}`,
}

func TestCanonicalIsJSONMarshalByteForByte(t *testing.T) {
	t.Parallel()
	for _, body := range canonicalSamples {
		checkCanonical(t, []byte(body))
	}
}

// FuzzCanonicalIsJSONMarshal holds the hand-written encoder to json.Marshal
// on any JSON (`go test -fuzz FuzzCanonicalIsJSONMarshal ./internal/gate`).
func FuzzCanonicalIsJSONMarshal(f *testing.F) {
	for _, body := range canonicalSamples {
		f.Add([]byte(body))
	}
	f.Add([]byte("{\"bad\":\"\xff\xfe\"}"))
	f.Fuzz(func(t *testing.T, body []byte) {
		if !json.Valid(body) {
			return
		}
		checkCanonical(t, body)
	})
}

func checkCanonical(t *testing.T, body []byte) {
	t.Helper()
	decode := func() any {
		var v any
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		return v
	}
	want := decode()
	integersAsIntegers(want)
	wantBytes, wantErr := json.Marshal(want)
	got, err := canonical(decode(), len(body))
	if (err != nil) != (wantErr != nil) || !bytes.Equal(got, wantBytes) {
		t.Errorf("%s:\ncanonical    %s (%v)\njson.Marshal %s (%v)", body, got, err, wantBytes, wantErr)
	}
}
