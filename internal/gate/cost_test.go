package gate_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"creativeapi/internal/gate"
	"creativeapi/internal/problem"
)

// memberName is the i-th short member name: one to three characters of
// printable ASCII other than '"' and '\', so 9000 members fit the body limit.
func memberName(i int) string {
	const alphabet = "!#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_`abcdefghijklmnopqrstuvwxyz{|}~"
	n := len(alphabet)
	switch {
	case i < n:
		return alphabet[i : i+1]
	case i < n+n*n:
		i -= n
		return string([]byte{alphabet[i/n], alphabet[i%n]})
	}
	i -= n + n*n
	return string([]byte{alphabet[i/(n*n)%n], alphabet[i/n%n], alphabet[i%n]})
}

// unknownMembers is a sign-in body with n members its schema does not declare.
func unknownMembers(n int) string {
	var b strings.Builder
	b.WriteString(`{"email":"a@example.test","password":"p"`)
	for i := range n {
		fmt.Fprintf(&b, `,"%s":0`, memberName(i))
	}
	b.WriteString("}")
	return b.String()
}

// nested is a body that nests depth objects, holding at the bottom n
// members each with a NUL character.
func nested(depth, n int) string {
	var b strings.Builder
	b.WriteString(`{"action":"submit","comment":"c"`)
	for range depth {
		b.WriteString(`,"x":{"y":0`)
	}
	for i := range n {
		fmt.Fprintf(&b, `,"n%s":"\u0000"`, memberName(i))
	}
	b.WriteString(strings.Repeat("}", depth+1))
	return b.String()
}

// checkOnce runs the gate on one request of route with body.
func checkOnce(g *gate.Gate, to routed, body string) error {
	req := httptest.NewRequest(to.method, to.path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	_, _, err := g.Check(context.Background(), httptest.NewRecorder(), req, g.Operation(to.method, to.route), to.params, nil)
	return err
}

// BenchmarkUnknownMembers measures the gate's work per unknown member of a
// body: flat from 10 members to the 9000 the body limit admits.
func BenchmarkUnknownMembers(b *testing.B) {
	g := newGate(b)
	for _, n := range []int{10, 100, 1000, 9000} {
		body := unknownMembers(n)
		if len(body) > gate.MaxBodyBytes {
			b.Fatalf("%d members are %d bytes", n, len(body))
		}
		b.Run(fmt.Sprintf("members=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for b.Loop() {
				if err := checkOnce(g, signIn, body); err == nil {
					b.Fatal("accepted")
				}
			}
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/member")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N)/float64(n), "allocs/member")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(n), "B/member")
		})
	}
}

// workBound is the most the gate may allocate for a body: a fixed multiple
// of its size plus a constant. Measured (BenchmarkUnknownMembers): about
// 1.1 KB per unknown member of 7 bytes, so about 160 bytes per body byte;
// listing every unknown member for each of them allocated 434 MB for a
// 7 KB body.
func workBound(body string) uint64 { return 256*uint64(len(body)) + 256<<10 }

// allocatedBy is the bytes and allocations of one gate check of body.
func allocatedBy(g *gate.Gate, to routed, body string) (bytes, mallocs uint64, err error) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err = checkOnce(g, to, body)
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, after.Mallocs - before.Mallocs, err
}

// bodiesOfEveryShape are bodies the limits admit that have made, or could
// make, the gate's work grow faster than their size.
func bodiesOfEveryShape() map[string]struct {
	to   routed
	body string
} {
	manyArrays := `{"action":"submit","x":[` + strings.Repeat(`{"a":1,"b":[{"c":"\u0000"}]},`, 1500) + `{}]}`
	deepArrays := strings.Repeat("[", 9000) + strings.Repeat("]", 9000)
	var amount strings.Builder
	amount.WriteString(`{"amount":{"amountMinor":"1","currency":"USDT","scale":6`)
	for i := range 7000 {
		fmt.Fprintf(&amount, `,"%s":0`, memberName(i))
	}
	amount.WriteString("}}")
	return map[string]struct {
		to   routed
		body string
	}{
		"9000 unknown members":                     {signIn, unknownMembers(9000)},
		"7000 unknown members in a nested object":  {deposit, amount.String()},
		"an array of objects of unknown members":   {action, manyArrays},
		"objects nested 5000 deep with NULs below": {action, nested(5000, 100)},
		"arrays nested 9000 deep":                  {action, deepArrays},
	}
}

func TestGateWorkIsLinearInTheBodysSize(t *testing.T) {
	g := newGate(t)
	for name, tc := range bodiesOfEveryShape() {
		if len(tc.body) > gate.MaxBodyBytes {
			t.Fatalf("%s: %d bytes, over the limit", name, len(tc.body))
		}
		checkOnce(g, tc.to, tc.body) // compiles the patterns once
		bytes, _, err := allocatedBy(g, tc.to, tc.body)
		var perr *problem.Error
		if !errors.As(err, &perr) || perr.Status/100 != 4 {
			t.Errorf("%s: %v, want a 4xx Problem", name, err)
		}
		if perr != nil && len(perr.FieldErrors) > problem.MaxFieldErrors {
			t.Errorf("%s: %d field errors, want at most %d", name, len(perr.FieldErrors), problem.MaxFieldErrors)
		}
		if limit := workBound(tc.body); bytes > limit {
			t.Errorf("%s: a %d-byte body allocated %d bytes, want at most %d", name, len(tc.body), bytes, limit)
		}
	}
}

func TestUnknownMembersAreEachNamedOnce(t *testing.T) {
	t.Parallel()
	g := newGate(t)
	err := checkOnce(g, signIn, unknownMembers(9000))
	var perr *problem.Error
	if !errors.As(err, &perr) || perr.Status != 422 {
		t.Fatalf("%v, want a 422", err)
	}
	if len(perr.FieldErrors) != problem.MaxFieldErrors || !strings.HasPrefix(perr.Detail, "9000 fields failed") {
		t.Fatalf("%d field errors, detail %q: want the first %d of 9000", len(perr.FieldErrors), perr.Detail, problem.MaxFieldErrors)
	}
	for _, f := range perr.FieldErrors {
		if f.Code != problem.UnknownField || len(f.Field) > 3 {
			t.Fatalf("field error %+v, want one unknown member", f)
		}
	}
}

func TestValidationStopsAtTheRequestsDeadline(t *testing.T) {
	t.Parallel()
	g := newGate(t)
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	req := httptest.NewRequest(signIn.method, signIn.path, strings.NewReader(unknownMembers(10)))
	req.Header.Set("Content-Type", "application/json")
	_, _, err := g.Check(ctx, httptest.NewRecorder(), req, g.Operation(signIn.method, signIn.route), nil, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%v, want the deadline's error", err)
	}
}

// FuzzGateWorkIsBounded: whatever the body, one check allocates at most
// workBound of it (`go test -run XXX -fuzz FuzzGateWorkIsBounded
// -fuzzminimizetime 2s ./internal/gate`: minimizing a 60 KB seed for the
// default minute stalls the run).
func FuzzGateWorkIsBounded(f *testing.F) {
	g := newGate(f)
	routes := []routed{signIn, deposit, action}
	for _, tc := range bodiesOfEveryShape() {
		for i, to := range routes {
			if to.route == tc.to.route && to.method == tc.to.method {
				f.Add(uint8(i), []byte(tc.body))
			}
		}
	}
	f.Add(uint8(2), []byte(`{"action":"submit","comment":"a\u0000b"}`))
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		if len(body) > gate.MaxBodyBytes {
			return
		}
		to := routes[int(route)%len(routes)]
		checkOnce(g, to, string(body)) // compiles the patterns once
		if bytes, _, _ := allocatedBy(g, to, string(body)); bytes > workBound(string(body)) {
			t.Errorf("a %d-byte body allocated %d bytes, want at most %d", len(body), bytes, workBound(string(body)))
		}
	})
}
