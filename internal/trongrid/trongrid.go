// Package trongrid is a client of the part of TronGrid's HTTP API the chain
// watcher uses (docs/deposits.md lists it): TRC20 transfers to an account,
// the head and solidified block numbers, and one transaction's receipt. The
// same paths are served by a self-hosted java-tron node and by our
// simulator (internal/devchain).
//
// Answers are decoded defensively: numbers may come as JSON numbers or
// strings, fields may be missing, and an answer that cannot be what the API
// promises is an error of kind Malformed, never a zero value taken for data.
package trongrid

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// MaxPageSize is the largest page TronGrid serves, and the one we ask for.
const MaxPageSize = 200

// maxBody bounds how much of an answer is read: a page of 200 transfers is
// about 100 KB.
const maxBody = 4 << 20

// Kind classifies a failed call, for the watcher's back-off and its logs.
type Kind string

// The kinds of Error.
const (
	// RateLimited: 429 (TronGrid's limit), or 403 (TronGrid refuses a key
	// over its daily quota with 403).
	RateLimited Kind = "rate_limited"
	// Unavailable: a 5xx answer.
	Unavailable Kind = "unavailable"
	// Timeout: no answer in time.
	Timeout Kind = "timeout"
	// Network: the connection failed.
	Network Kind = "network"
	// Malformed: an answer that is not what the API promises.
	Malformed Kind = "malformed"
	// Refused: any other 4xx, or success=false.
	Refused Kind = "refused"
)

// Error is a failed call.
type Error struct {
	Kind Kind
	// Op names the call ("trc20 transfers", "now block").
	Op string
	// Status is the HTTP status, 0 when there was no answer.
	Status int
	// RetryAfter is the upstream's Retry-After, 0 when it sent none.
	RetryAfter time.Duration
	Err        error
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("trongrid %s: %s", e.Op, e.Kind)
	if e.Status != 0 {
		msg += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Client calls one TronGrid-compatible API.
type Client struct {
	base *url.URL
	http *http.Client
	keys []string
	next atomic.Uint64
}

// New returns a client of the API at baseURL. keys, when any, are sent as
// TRON-PRO-API-KEY in turn, one per request. timeout bounds each call.
func New(baseURL string, keys []string, timeout time.Duration) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("trongrid: %q is not an http(s) URL", baseURL)
	}
	return &Client{base: u, http: &http.Client{Timeout: timeout}, keys: keys}, nil
}

// Transfer is one item of the TRC20 transfer list, as sent: the watcher
// judges it (internal/chainwatch), this package only decodes it.
type Transfer struct {
	TxID string
	// Token is token_info.address; Decimals is token_info.decimals, -1 when missing.
	Token    string
	Decimals int
	From, To string
	Type     string
	// Value is the amount in the token's smallest unit, exactly as sent
	// (a string of digits when the API is right).
	Value     string
	BlockTime time.Time
}

// TransfersQuery selects a page of TRC20 transfers to Account.
type TransfersQuery struct {
	Account  string
	Contract string
	// Since is min_timestamp: transfers in blocks at or after it.
	Since time.Time
	// Fingerprint is the previous page's meta.fingerprint; empty for the first page.
	Fingerprint string
}

// Page is one page of transfers; Fingerprint is empty on the last page.
type Page struct {
	Transfers   []Transfer
	Fingerprint string
	// Malformed describes the items left out because they lack what any
	// transfer has (a transaction id, a block time): the caller logs them.
	Malformed []string
}

// Transfers reads one page of TRC20 transfers to q.Account of q.Contract,
// newest first, confirmed or not.
func (c *Client) Transfers(ctx context.Context, q TransfersQuery) (Page, error) {
	const op = "trc20 transfers"
	v := url.Values{}
	v.Set("only_to", "true")
	v.Set("contract_address", q.Contract)
	v.Set("min_timestamp", strconv.FormatInt(q.Since.UnixMilli(), 10))
	v.Set("limit", strconv.Itoa(MaxPageSize))
	if q.Fingerprint != "" {
		v.Set("fingerprint", q.Fingerprint)
	}
	var raw struct {
		Data    []map[string]json.RawMessage `json:"data"`
		Success *bool                        `json:"success"`
		Meta    struct {
			Fingerprint json.RawMessage `json:"fingerprint"`
		} `json:"meta"`
	}
	path := "/v1/accounts/" + url.PathEscape(q.Account) + "/transactions/trc20"
	if err := c.call(ctx, op, http.MethodGet, path+"?"+v.Encode(), nil, &raw); err != nil {
		return Page{}, err
	}
	if raw.Success != nil && !*raw.Success {
		return Page{}, &Error{Kind: Refused, Op: op, Err: errors.New("success is false")}
	}
	if raw.Data == nil {
		return Page{}, &Error{Kind: Malformed, Op: op, Err: errors.New("no data array")}
	}
	page := Page{Transfers: make([]Transfer, 0, len(raw.Data))}
	for i, item := range raw.Data {
		t, err := decodeTransfer(item)
		if err != nil {
			page.Malformed = append(page.Malformed, fmt.Sprintf("data[%d]: %v", i, err))
			continue
		}
		page.Transfers = append(page.Transfers, t)
	}
	if len(raw.Meta.Fingerprint) > 0 && string(raw.Meta.Fingerprint) != "null" {
		fp, ok := jsonString(raw.Meta.Fingerprint)
		if !ok {
			return Page{}, &Error{Kind: Malformed, Op: op, Err: errors.New("meta.fingerprint is not a string")}
		}
		page.Fingerprint = fp
	}
	return page, nil
}

// decodeTransfer takes an item apart field by field, so one of an
// unexpected type is named. The transaction id and block time are needed
// to record anything; the other fields are kept as sent for the watcher
// to judge.
func decodeTransfer(item map[string]json.RawMessage) (Transfer, error) {
	t := Transfer{Decimals: -1}
	var ok bool
	if t.TxID, ok = jsonString(item["transaction_id"]); !ok || !isHex(t.TxID) {
		return t, errors.New("transaction_id missing or not a hex string")
	}
	ms, ok := jsonInt(item["block_timestamp"])
	if !ok || ms <= 0 {
		return t, errors.New("block_timestamp missing or not a positive integer")
	}
	t.BlockTime = time.UnixMilli(ms).UTC()
	t.From = text(item["from"])
	t.To = text(item["to"])
	t.Type = text(item["type"])
	if t.Value, ok = jsonString(item["value"]); ok {
		t.Value = clean(t.Value)
	} else {
		// A number where a string is promised is kept as its text, so the
		// watcher sees exactly what was sent.
		t.Value = clean(strings.TrimSpace(string(item["value"])))
	}
	if raw, ok := item["token_info"]; ok {
		var info map[string]json.RawMessage
		if err := json.Unmarshal(raw, &info); err == nil {
			t.Token = text(info["address"])
			if d, ok := jsonInt(info["decimals"]); ok && d >= 0 && d <= 255 {
				t.Decimals = int(d)
			}
		}
	}
	return t, nil
}

// NowBlock returns the number of the newest block (solid false) or of the
// newest solidified block (solid true).
func (c *Client) NowBlock(ctx context.Context, solid bool) (int64, error) {
	op, path := "now block", "/wallet/getnowblock"
	if solid {
		op, path = "solidified block", "/walletsolidity/getnowblock"
	}
	var raw struct {
		Header *struct {
			Raw *struct {
				Number json.RawMessage `json:"number"`
			} `json:"raw_data"`
		} `json:"block_header"`
	}
	if err := c.call(ctx, op, http.MethodPost, path, struct{}{}, &raw); err != nil {
		return 0, err
	}
	if raw.Header == nil || raw.Header.Raw == nil {
		return 0, &Error{Kind: Malformed, Op: op, Err: errors.New("no block_header.raw_data")}
	}
	n, ok := jsonInt(raw.Header.Raw.Number)
	if !ok || n < 0 {
		return 0, &Error{Kind: Malformed, Op: op, Err: errors.New("block_header.raw_data.number missing or not an integer")}
	}
	return n, nil
}

// Receipt is what the node knows of a transaction's execution.
type Receipt struct {
	// Known is false when the node does not know the transaction (yet, or
	// any more after a fork).
	Known bool
	// Block is the number of the block holding it.
	Block int64
	// Result is receipt.result: SUCCESS, or why it failed (REVERT,
	// OUT_OF_ENERGY, …). A known transaction with no result did not succeed.
	Result string
}

// Succeeded reports a known transaction whose receipt is SUCCESS.
func (r Receipt) Succeeded() bool { return r.Known && r.Result == "SUCCESS" }

// TransactionInfo reads a transaction's block and receipt.
func (c *Client) TransactionInfo(ctx context.Context, txID string) (Receipt, error) {
	const op = "transaction info"
	var raw map[string]json.RawMessage
	if err := c.call(ctx, op, http.MethodPost, "/wallet/gettransactioninfobyid", map[string]string{"value": txID}, &raw); err != nil {
		return Receipt{}, err
	}
	if len(raw) == 0 {
		return Receipt{}, nil
	}
	if id, ok := jsonString(raw["id"]); ok && id != "" && !strings.EqualFold(id, txID) {
		return Receipt{}, &Error{Kind: Malformed, Op: op, Err: fmt.Errorf("answered for %q", id)}
	}
	block, ok := jsonInt(raw["blockNumber"])
	if !ok || block < 0 {
		return Receipt{}, &Error{Kind: Malformed, Op: op, Err: errors.New("blockNumber missing or not an integer")}
	}
	r := Receipt{Known: true, Block: block}
	var receipt map[string]json.RawMessage
	if err := json.Unmarshal(raw["receipt"], &receipt); err == nil {
		r.Result, _ = jsonString(receipt["result"])
	}
	if r.Result == "" {
		r.Result = "NO_RESULT"
	}
	return r, nil
}

// call sends one request and decodes a 2xx JSON answer into out.
func (c *Client) call(ctx context.Context, op, method, pathAndQuery string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base.String()+pathAndQuery, body)
	if err != nil {
		return &Error{Kind: Refused, Op: op, Err: err}
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if len(c.keys) > 0 {
		req.Header.Set("TRON-PRO-API-KEY", c.keys[(c.next.Add(1)-1)%uint64(len(c.keys))])
	}
	resp, err := c.http.Do(req)
	if err != nil {
		kind := Network
		var ue *url.Error
		if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ue) && ue.Timeout()) {
			kind = Timeout
		}
		return &Error{Kind: kind, Op: op, Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		kind := Network
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, http.ErrHandlerTimeout) || isTimeout(err) {
			kind = Timeout
		}
		return &Error{Kind: kind, Op: op, Status: resp.StatusCode, Err: err}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := &Error{Kind: Refused, Op: op, Status: resp.StatusCode, RetryAfter: retryAfter(resp.Header.Get("Retry-After"))}
		switch {
		case resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode == http.StatusForbidden:
			e.Kind = RateLimited
		case resp.StatusCode >= 500:
			e.Kind = Unavailable
		}
		return e
	}
	if len(data) > maxBody {
		return &Error{Kind: Malformed, Op: op, Status: resp.StatusCode, Err: fmt.Errorf("answer larger than %d bytes", maxBody)}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return &Error{Kind: Malformed, Op: op, Status: resp.StatusCode, Err: err}
	}
	return nil
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// retryAfter reads Retry-After in seconds or as an HTTP date; 0 when absent
// or unreadable. It is capped at an hour, so a hostile value cannot park
// the watcher for days.
func retryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s <= 0 {
			return 0
		}
		d = time.Duration(min(s, 3600)) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = time.Until(t)
	}
	return min(max(d, 0), time.Hour)
}

// maxText bounds every text field kept from an answer.
const maxText = 100

// text is raw as a clean string when it is a JSON string, else empty.
func text(raw json.RawMessage) string {
	s, _ := jsonString(raw)
	return clean(s)
}

// clean makes s storable and bounded: control characters (PostgreSQL
// refuses NUL in text) become U+FFFD, and it is cut to maxText runes.
func clean(s string) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == maxText {
			break
		}
		if r < 0x20 || r == 0x7f {
			r = '\uFFFD'
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// isHex reports a non-empty string of at most 128 hex digits: what a
// transaction id is (64 of them on TRON).
func isHex(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
			return false
		}
	}
	return true
}

// jsonString is raw as a string, when it is a JSON string.
func jsonString(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// jsonInt is raw as an int64, when it is a JSON integer or a string of one.
func jsonInt(raw json.RawMessage) (int64, bool) {
	s := string(raw)
	if str, ok := jsonString(raw); ok {
		s = str
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	return n, err == nil
}
