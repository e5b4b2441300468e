package httpapi_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"creativeapi/internal/auth"
	"creativeapi/internal/testenv"
)

// BenchmarkReviewAction is a review action with a fresh Idempotency-Key
// through the real HTTP server, as an organization's admin: each client
// has a creative of its own (another member's draft) and alternates submit
// and request_changes on it, so every request is a first execution that
// moves the state machine, as `make bench`'s action scenario does.
func BenchmarkReviewAction(b *testing.B) {
	env := testenv.New(b, testenv.Options{Env: map[string]string{"LOG_LEVEL": "error"}})
	org := env.DB.Org(b, "Bench Org")
	author, _ := env.DB.User(b, "Bench Author")
	admin, _ := env.DB.User(b, "Bench Admin")
	env.DB.Member(b, org, author, "author")
	env.DB.Member(b, org, admin, "admin")
	token, csrf := env.DB.Session(b, admin)
	cookie := auth.SessionConfig{CookieSecure: env.Config.CookieSecure}.CookieName() + "=" + token
	client := env.Server.Client()
	const creatives = 64 // more than the clients RunParallel starts
	var urls [creatives]string
	for i := range urls {
		urls[i] = fmt.Sprintf("%s/api/v1/organizations/%s/creatives/%s/actions", env.Server.URL, org, env.DB.DraftCreative(b, org, author))
	}
	bodies := [2][]byte{[]byte(`{"action":"submit"}`), []byte(`{"action":"request_changes","comment":"The logo is cut off."}`)}
	var clients, keys atomic.Int64
	// Each creative's next action: the benchmark function runs more than
	// once (b.N grows), and a creative left in review takes request_changes.
	var next [creatives]int
	b.ReportAllocs()
	b.ResetTimer()
	defer testenv.ReportCPU(b)()
	b.SetParallelism(benchClients)
	b.RunParallel(func(pb *testing.PB) {
		c := int(clients.Add(1)-1) % creatives
		for pb.Next() {
			req, err := http.NewRequest(http.MethodPost, urls[c], bytes.NewReader(bodies[next[c]]))
			if err != nil {
				b.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Cookie", cookie)
			req.Header.Set("X-CSRF-Token", csrf)
			req.Header.Set("Idempotency-Key", fmt.Sprintf("action-%d", keys.Add(1)))
			res, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				b.Fatalf("%s: status %d", bodies[next[c]], res.StatusCode)
			}
			next[c] = 1 - next[c]
		}
	})
}
