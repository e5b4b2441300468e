// Package devchain is a TRON chain simulator for development and tests: it
// serves the part of TronGrid's HTTP API the chain watcher reads
// (internal/trongrid), over an in-memory chain that gains a block every
// interval, with a way to pay (POST /transfers) and, for tests, to make a
// transaction fail or vanish. It is never part of a production server:
// `serve --devchain` starts it only when asked (docs/deposits.md).
package devchain

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultSolidLag is how far the solidified head trails the head on TRON
// mainnet (19 blocks, about a minute).
const DefaultSolidLag = 19

// Options configure a Chain.
type Options struct {
	// Contract is the USDT contract transfers are made with by default.
	Contract string
	// SolidLag is how many blocks the solidified head trails the head.
	SolidLag int64
	// Now is the clock blocks are stamped with (time.Now when nil).
	Now func() time.Time
}

// Payment is a transfer to make. Only To and Value are needed; the other
// fields let tests send what a broken or hostile API would.
type Payment struct {
	To string `json:"to"`
	// From defaults to a fixed payer address.
	From string `json:"from,omitempty"`
	// Value is the amount in the token's smallest unit (micro-USDT), sent
	// as the API's "value" exactly as given.
	Value string `json:"value"`
	// Contract defaults to the chain's USDT contract.
	Contract string `json:"contract,omitempty"`
	// Type defaults to "Transfer".
	Type string `json:"type,omitempty"`
	// Result is the receipt's result, default SUCCESS (REVERT fails it).
	Result string `json:"result,omitempty"`
}

// DefaultPayer is the From of payments that name none.
const DefaultPayer = "TKFLf8tkDxP8XWGWtuT8kVyhC8iGeWNo5X"

type tx struct {
	id      string
	pay     Payment
	block   int64 // 0 while pending
	time    time.Time
	removed bool
}

// Chain is the simulated chain. It is safe for concurrent use.
type Chain struct {
	opts Options

	mu      sync.Mutex
	head    int64
	times   []time.Time // times[n] is block n's timestamp
	pending []*tx
	txs     map[string]*tx
	mined   []*tx // in block order
}

// New starts a chain at block 1.
func New(opts Options) *Chain {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.SolidLag <= 0 {
		opts.SolidLag = DefaultSolidLag
	}
	c := &Chain{opts: opts, txs: map[string]*tx{}}
	c.times = []time.Time{{}, opts.Now().UTC().Truncate(time.Millisecond)}
	c.head = 1
	return c
}

// Pay queues a transfer for the next block and returns its transaction id.
func (c *Chain) Pay(p Payment) string {
	if p.From == "" {
		p.From = DefaultPayer
	}
	if p.Contract == "" {
		p.Contract = c.opts.Contract
	}
	if p.Type == "" {
		p.Type = "Transfer"
	}
	if p.Result == "" {
		p.Result = "SUCCESS"
	}
	var b [32]byte
	_, _ = rand.Read(b[:])
	t := &tx{id: hex.EncodeToString(b[:]), pay: p}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = append(c.pending, t)
	c.txs[t.id] = t
	return t.id
}

// Mine adds n blocks; the first holds every queued transfer. It returns
// the new head.
func (c *Chain) Mine(n int) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	for range n {
		c.head++
		now := c.opts.Now().UTC().Truncate(time.Millisecond)
		if prev := c.times[len(c.times)-1]; !now.After(prev) {
			now = prev.Add(time.Millisecond)
		}
		c.times = append(c.times, now)
		for _, t := range c.pending {
			t.block, t.time = c.head, now
			c.mined = append(c.mined, t)
		}
		c.pending = nil
	}
	return c.head
}

// Forget makes the node forget a mined transaction, as after a fork.
func (c *Chain) Forget(txID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.txs[txID]; ok {
		t.removed = true
	}
}

// Remember undoes Forget, as when a forked-away transaction is mined again.
func (c *Chain) Remember(txID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.txs[txID]; ok {
		t.removed = false
	}
}

// BlockTime is the time of the block holding a mined transaction (zero
// while it is pending or unknown).
func (c *Chain) BlockTime(txID string) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.txs[txID]; ok {
		return t.time
	}
	return time.Time{}
}

// SetResult changes a transaction's receipt result, as a reorganised chain
// may have executed it differently.
func (c *Chain) SetResult(txID, result string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.txs[txID]; ok {
		t.pay.Result = result
	}
}

func (c *Chain) solid() int64 { return max(0, c.head-c.opts.SolidLag) }

// Run mines a block every interval until stop is closed.
func (c *Chain) Run(interval time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			c.Mine(1)
		}
	}
}

// Handler serves the TronGrid subset and POST /transfers.
func (c *Chain) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/accounts/{account}/transactions/trc20", c.serveTransfers)
	mux.HandleFunc("POST /wallet/getnowblock", func(w http.ResponseWriter, _ *http.Request) {
		c.mu.Lock()
		n := c.head
		c.mu.Unlock()
		c.serveBlock(w, n)
	})
	mux.HandleFunc("POST /walletsolidity/getnowblock", func(w http.ResponseWriter, _ *http.Request) {
		c.mu.Lock()
		n := c.solid()
		c.mu.Unlock()
		c.serveBlock(w, n)
	})
	mux.HandleFunc("POST /wallet/gettransactioninfobyid", c.serveTransactionInfo)
	mux.HandleFunc("POST /transfers", c.servePay)
	return mux
}

func (c *Chain) serveTransfers(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	account := r.PathValue("account")
	contract := q.Get("contract_address")
	since, _ := strconv.ParseInt(q.Get("min_timestamp"), 10, 64)
	limit, err := strconv.Atoi(q.Get("limit"))
	if err != nil || limit <= 0 || limit > 200 {
		limit = 20
	}
	offset := 0
	if fp := q.Get("fingerprint"); fp != "" {
		b, err := base64.RawURLEncoding.DecodeString(fp)
		if err == nil {
			offset, err = strconv.Atoi(string(b))
		}
		if err != nil || offset < 0 {
			writeJSON(w, http.StatusBadRequest, map[string]any{"success": false, "error": "bad fingerprint"})
			return
		}
	}
	onlyConfirmed := q.Get("only_confirmed") == "true"

	c.mu.Lock()
	solid := c.solid()
	var list []*tx
	for _, t := range slices.Backward(c.mined) { // newest first
		switch {
		case t.removed, t.pay.To != account, contract != "" && t.pay.Contract != contract,
			t.time.UnixMilli() < since, onlyConfirmed && t.block > solid:
			continue
		}
		list = append(list, t)
	}
	c.mu.Unlock()

	data := []map[string]any{}
	for _, t := range list[min(offset, len(list)):min(offset+limit, len(list))] {
		data = append(data, map[string]any{
			"transaction_id":  t.id,
			"token_info":      map[string]any{"symbol": "USDT", "address": t.pay.Contract, "decimals": 6, "name": "Tether USD"},
			"block_timestamp": t.time.UnixMilli(),
			"from":            t.pay.From,
			"to":              t.pay.To,
			"type":            t.pay.Type,
			"value":           t.pay.Value,
		})
	}
	meta := map[string]any{"at": time.Now().UnixMilli(), "page_size": len(data)}
	if offset+limit < len(list) {
		meta["fingerprint"] = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(offset + limit)))
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data, "success": true, "meta": meta})
}

func (c *Chain) serveBlock(w http.ResponseWriter, n int64) {
	c.mu.Lock()
	ts := c.times[n].UnixMilli()
	c.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{
		"blockID":      fmt.Sprintf("%016x%048x", n, 0),
		"block_header": map[string]any{"raw_data": map[string]any{"number": n, "timestamp": ts}},
	})
}

func (c *Chain) serveTransactionInfo(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Value string `json:"value"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"Error": "bad request"})
		return
	}
	c.mu.Lock()
	t, ok := c.txs[in.Value]
	known := ok && !t.removed && t.block > 0
	var info map[string]any
	if known {
		info = map[string]any{
			"id": t.id, "blockNumber": t.block, "blockTimeStamp": t.time.UnixMilli(),
			"contract_address": t.pay.Contract,
			"receipt":          map[string]any{"result": t.pay.Result},
		}
	}
	c.mu.Unlock()
	if !known {
		info = map[string]any{}
	}
	writeJSON(w, http.StatusOK, info)
}

func (c *Chain) servePay(w http.ResponseWriter, r *http.Request) {
	var p Payment
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": err.Error()})
		return
	}
	if err := p.check(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"transactionId": c.Pay(p)})
}

func (p Payment) check() error {
	switch {
	case p.To == "":
		return errors.New("to is required")
	case p.Value == "" || strings.Trim(p.Value, "0123456789") != "":
		return errors.New("value must be a string of digits (micro-USDT)")
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
