package trongrid_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"creativeapi/internal/trongrid"
)

func serve(t *testing.T, h http.HandlerFunc) *trongrid.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := trongrid.New(srv.URL, nil, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func answer(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(body)) }
}

func TestNowBlock_ReadsTheNumberAsANumberOrAString(t *testing.T) {
	tests := []struct {
		name, body string
		want       int64
		kind       trongrid.Kind
	}{
		{"a number", `{"block_header":{"raw_data":{"number":81234567,"timestamp":1}}}`, 81234567, ""},
		{"a string", `{"block_header":{"raw_data":{"number":"81234567"}}}`, 81234567, ""},
		{"missing", `{"block_header":{"raw_data":{}}}`, 0, trongrid.Malformed},
		{"no header", `{}`, 0, trongrid.Malformed},
		{"fractional", `{"block_header":{"raw_data":{"number":1.5}}}`, 0, trongrid.Malformed},
		{"negative", `{"block_header":{"raw_data":{"number":-1}}}`, 0, trongrid.Malformed},
		{"not JSON", `<html>`, 0, trongrid.Malformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := serve(t, answer(tt.body)).NowBlock(context.Background(), false)
			if tt.kind == "" {
				if err != nil || got != tt.want {
					t.Fatalf("NowBlock = %d, %v; want %d", got, err, tt.want)
				}
				return
			}
			var e *trongrid.Error
			if !errors.As(err, &e) || e.Kind != tt.kind {
				t.Fatalf("NowBlock = %d, %v; want a %s error", got, err, tt.kind)
			}
		})
	}
}

func TestTransfers_KeepsWhatWasSentAndLeavesOutItemsWithoutIdentity(t *testing.T) {
	body := `{"success":true,"meta":{"at":1,"page_size":4,"fingerprint":"next-page"},"data":[
		{"transaction_id":"ab12","token_info":{"address":"TR7","decimals":"6"},"block_timestamp":"1700000000000","from":"TA","to":"TB","type":"Transfer","value":"100000001"},
		{"transaction_id":"cd34","token_info":{"address":"TR7","decimals":6},"block_timestamp":1700000000001,"to":"TB","type":"Transfer","value":100000002},
		{"transaction_id":"not hex!","block_timestamp":1700000000002,"to":"TB","value":"1"},
		{"transaction_id":"ef56","to":"TB","value":"1"},
		{"transaction_id":"0a0a","block_timestamp":1700000000003,"to":"T\u0000B","type":"Transfer","value":"-5"}
	]}`
	page, err := serve(t, answer(body)).Transfers(context.Background(), trongrid.TransfersQuery{Account: "TB", Contract: "TR7"})
	if err != nil {
		t.Fatal(err)
	}
	if page.Fingerprint != "next-page" || len(page.Transfers) != 3 || len(page.Malformed) != 2 {
		t.Fatalf("page: %+v", page)
	}
	first, second, third := page.Transfers[0], page.Transfers[1], page.Transfers[2]
	if first.Value != "100000001" || first.Decimals != 6 || first.BlockTime.UnixMilli() != 1700000000000 || first.From != "TA" {
		t.Errorf("first: %+v", first)
	}
	if second.Value != "100000002" || second.From != "" {
		t.Errorf("a numeric value is kept as its text, a missing sender is empty: %+v", second)
	}
	if third.To != "T\uFFFDB" || third.Value != "-5" || third.Decimals != -1 {
		t.Errorf("control characters are replaced, values kept as sent: %+v", third)
	}
}

func TestTransfers_RefusesAnAnswerThatIsNotAPage(t *testing.T) {
	for name, body := range map[string]string{
		"success false":      `{"success":false,"data":[]}`,
		"no data":            `{"success":true,"meta":{}}`,
		"data not an array":  `{"data":{}}`,
		"fingerprint number": `{"data":[],"meta":{"fingerprint":5}}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := serve(t, answer(body)).Transfers(context.Background(), trongrid.TransfersQuery{Account: "TB"})
			var e *trongrid.Error
			if !errors.As(err, &e) {
				t.Fatalf("Transfers error %v; want a trongrid.Error", err)
			}
		})
	}
}

func TestTransactionInfo(t *testing.T) {
	tests := []struct {
		name, body string
		want       trongrid.Receipt
		fails      bool
	}{
		{"success", `{"id":"ab","blockNumber":"42","receipt":{"result":"SUCCESS"}}`, trongrid.Receipt{Known: true, Block: 42, Result: "SUCCESS"}, false},
		{"reverted", `{"id":"ab","blockNumber":42,"receipt":{"result":"REVERT"}}`, trongrid.Receipt{Known: true, Block: 42, Result: "REVERT"}, false},
		{"no receipt result", `{"id":"ab","blockNumber":42}`, trongrid.Receipt{Known: true, Block: 42, Result: "NO_RESULT"}, false},
		{"unknown", `{}`, trongrid.Receipt{}, false},
		{"another transaction", `{"id":"cd","blockNumber":42}`, trongrid.Receipt{}, true},
		{"no block", `{"id":"ab","receipt":{"result":"SUCCESS"}}`, trongrid.Receipt{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := serve(t, answer(tt.body)).TransactionInfo(context.Background(), "ab")
			if (err != nil) != tt.fails || got != tt.want {
				t.Fatalf("TransactionInfo = %+v, %v; want %+v (error: %v)", got, err, tt.want, tt.fails)
			}
			if got.Succeeded() != (tt.want.Result == "SUCCESS") {
				t.Fatalf("Succeeded = %v", got.Succeeded())
			}
		})
	}
}

func TestCall_ClassifiesFailuresAndReadsRetryAfter(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		retryAfter string
		kind       trongrid.Kind
		wait       time.Duration
	}{
		{"429 with seconds", 429, "12", trongrid.RateLimited, 12 * time.Second},
		{"429 with a silly value is capped", 429, "99999999", trongrid.RateLimited, time.Hour},
		{"429 with garbage", 429, "soon", trongrid.RateLimited, 0},
		{"403", 403, "", trongrid.RateLimited, 0},
		{"502", 502, "", trongrid.Unavailable, 0},
		{"400", 400, "", trongrid.Refused, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := serve(t, func(w http.ResponseWriter, _ *http.Request) {
				if tt.retryAfter != "" {
					w.Header().Set("Retry-After", tt.retryAfter)
				}
				w.WriteHeader(tt.status)
			})
			_, err := c.NowBlock(context.Background(), true)
			var e *trongrid.Error
			if !errors.As(err, &e) || e.Kind != tt.kind || e.RetryAfter != tt.wait || e.Status != tt.status {
				t.Fatalf("error %+v; want %s, Retry-After %s", err, tt.kind, tt.wait)
			}
		})
	}
	t.Run("a slow answer is a timeout", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(time.Second):
			}
		}))
		defer srv.Close()
		c, _ := trongrid.New(srv.URL, nil, 50*time.Millisecond)
		_, err := c.NowBlock(context.Background(), false)
		var e *trongrid.Error
		if !errors.As(err, &e) || e.Kind != trongrid.Timeout {
			t.Fatalf("error %v; want a timeout", err)
		}
	})
}

func TestCall_RotatesAPIKeys(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("TRON-PRO-API-KEY"))
		mu.Unlock()
		_, _ = w.Write([]byte(`{"block_header":{"raw_data":{"number":1}}}`))
	}))
	defer srv.Close()
	c, _ := trongrid.New(srv.URL, []string{"k1", "k2", "k3"}, time.Second)
	for range 4 {
		if _, err := c.NowBlock(context.Background(), false); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(keys, ","); got != "k1,k2,k3,k1" {
		t.Fatalf("keys sent: %s; want k1,k2,k3,k1", got)
	}
}
