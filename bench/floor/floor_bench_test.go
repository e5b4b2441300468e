package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"

	"creativeapi/bench/internal/pgbench"
	"creativeapi/internal/testenv"
)

// BenchmarkFloorDepositCreate is the floor's deposit create, sent as
// internal/httpapi's BenchmarkDepositCreateFirst sends the server's: the
// same client, headers, bodies and parallelism. Its allocations per
// operation are what net/http, pgx and the statements of a deposit cost
// with nothing else, the yardstick for the server's (make bench runs both).
func BenchmarkFloorDepositCreate(b *testing.B) {
	qs, err := pgbench.LoadQueries("../../queries")
	if err != nil {
		b.Fatal(err)
	}
	db := testenv.NewDB(b)
	srv := serveFloor(b, db.URL, qs, nil)
	var cookies, csrfs []string
	for range 200 {
		user, _ := db.User(b, "Bench Depositor")
		token, csrf := db.Session(b, user)
		cookies, csrfs = append(cookies, "session="+token), append(csrfs, csrf)
	}
	client := srv.Client()
	var n atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := int(n.Add(1))
			body := `{"amount":{"amountMinor":"` + strconv.FormatInt(10_000_000+10_000*int64(i%990_000), 10) + `","currency":"USDT","scale":6}}`
			req, err := http.NewRequest(http.MethodPost, srv.URL+depositsPath, bytes.NewReader([]byte(body)))
			if err != nil {
				b.Error(err) // not Fatal: this is one of RunParallel's goroutines
				return
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Cookie", cookies[i%len(cookies)])
			req.Header.Set("X-CSRF-Token", csrfs[i%len(csrfs)])
			req.Header.Set("Idempotency-Key", fmt.Sprintf("first-%d", i))
			res, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusCreated {
				b.Errorf("status %d", res.StatusCode)
				return
			}
		}
	})
}
