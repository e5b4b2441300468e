// Command loadgen drives closed-loop HTTP load against the API for one
// scenario: each client sends a request, waits for the whole answer, and
// sends the next. It runs as its own process so its CPU is never counted as
// the server's. It reads a plan.Config (JSON) from the file named by its
// argument, writes plan.StartLine and plan.EndLine on stdout around the
// measured interval and then the plan.Result as one JSON line; a progress
// line goes to stderr.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"creativeapi/bench/internal/plan"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: loadgen <config.json>")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func run(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var cfg plan.Config
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil {
		return err
	}
	g := &generator{cfg: cfg, host: u.Host}
	workers := make([]*worker, cfg.Clients)
	for i := range workers {
		w, err := g.newWorker(i)
		if err != nil {
			return err
		}
		defer w.conn.Close()
		workers[i] = w
	}
	// Preparation (replay keys) runs before the clock starts.
	var prep sync.WaitGroup
	prepErr := make(chan error, len(workers))
	for _, w := range workers {
		prep.Go(func() {
			if err := w.prepare(); err != nil {
				prepErr <- err
			}
		})
	}
	prep.Wait()
	close(prepErr)
	if err := <-prepErr; err != nil {
		return fmt.Errorf("prepare: %w", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var done sync.WaitGroup
	for _, w := range workers {
		done.Go(func() { w.loop(ctx) })
	}
	stopProgress := g.progress()
	time.Sleep(cfg.Warmup)
	g.phase.Store(measuring)
	start := time.Now()
	fmt.Println(plan.StartLine)
	time.Sleep(cfg.Duration)
	g.phase.Store(finished)
	elapsed := time.Since(start)
	fmt.Println(plan.EndLine)
	cancel()
	done.Wait()
	stopProgress()

	var lat []time.Duration
	res := plan.Result{Elapsed: elapsed, Sent: int(g.sent.Load())}
	for _, w := range workers {
		lat = append(lat, w.latencies...)
		res.Errors += w.errors
		if res.FirstError == "" {
			res.FirstError = w.firstError
		}
	}
	res.Requests = len(lat)
	slices.Sort(lat)
	res.P50, res.P99 = percentile(lat, 0.50), percentile(lat, 0.99)
	return json.NewEncoder(os.Stdout).Encode(res)
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))]
}

const (
	warming int32 = iota
	measuring
	finished
)

type generator struct {
	cfg   plan.Config
	host  string
	phase atomic.Int32
	// sent counts answered requests of every phase, for the progress line.
	sent   atomic.Int64
	failed atomic.Int64
}

// progress prints a line a second until stopped.
func (g *generator) progress() (stop func()) {
	quit, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		start, last := time.Now(), int64(0)
		for {
			select {
			case <-quit:
				fmt.Fprint(os.Stderr, "\r\033[K")
				return
			case <-t.C:
				n := g.sent.Load()
				phase := [...]string{warming: "warm-up", measuring: "measuring", finished: "done"}[g.phase.Load()]
				fmt.Fprintf(os.Stderr, "\r\033[K    %-8s %3d clients  %-9s %5.1fs  %7d req/s  %d errors",
					g.cfg.Scenario, g.cfg.Clients, phase, time.Since(start).Seconds(), n-last, g.failed.Load())
				last = n
			}
		}
	}()
	return func() { close(quit); <-stopped }
}

// worker is one closed-loop client on its own keep-alive connection.
type worker struct {
	g    *generator
	id   int
	conn net.Conn
	br   *bufio.Reader
	buf  bytes.Buffer
	rnd  *mrand.Rand
	// The scenario's state: its creatives (action, get), its users.
	creatives []plan.Creative
	users     []plan.Session
	next      int
	replays   []replayCall

	latencies  []time.Duration
	errors     int
	firstError string
}

type replayCall struct {
	user plan.Session
	key  string
	body []byte
}

func (g *generator) newWorker(id int) (*worker, error) {
	w := &worker{g: g, id: id, rnd: mrand.New(mrand.NewPCG(uint64(id), uint64(time.Now().UnixNano())))}
	if err := w.dial(); err != nil {
		return nil, err
	}
	cfg := g.cfg
	switch cfg.Scenario {
	case plan.Action:
		// Each client owns a disjoint slice of the creatives, so two clients
		// never race for one creative.
		for i := id; i < len(cfg.Creatives); i += cfg.Clients {
			w.creatives = append(w.creatives, cfg.Creatives[i])
		}
		if len(w.creatives) == 0 {
			return nil, fmt.Errorf("client %d has no creative", id)
		}
	case plan.Deposit, plan.Replay:
		for i := id; i < len(cfg.Users); i += cfg.Clients {
			w.users = append(w.users, cfg.Users[i])
		}
		if len(w.users) == 0 && cfg.Scenario == plan.Deposit && len(cfg.Users) > 0 {
			// Fewer users than clients: clients share them, so one user's
			// creates are in flight at once (the concurrency sweep).
			w.users = cfg.Users[id%len(cfg.Users):][:1]
		}
		if len(w.users) == 0 {
			return nil, fmt.Errorf("client %d has no user", id)
		}
	case plan.Version:
		// Each client owns a disjoint slice of the creatives a version may
		// be added to.
		var open []plan.Creative
		for _, c := range cfg.Creatives {
			if c.Status == "draft" || c.Status == "changes_requested" {
				open = append(open, c)
			}
		}
		for i := id; i < len(open); i += cfg.Clients {
			w.creatives = append(w.creatives, open[i])
		}
		if len(w.creatives) == 0 {
			return nil, fmt.Errorf("client %d has no creative in draft or changes_requested", id)
		}
	case plan.Get, plan.List, plan.Create, plan.Search:
	case plan.Comments, plan.CommentsByVersion, plan.CommentsOpen, plan.CommentsCreatives:
		if cfg.Path == "" {
			return nil, fmt.Errorf("scenario %q without a path", cfg.Scenario)
		}
	default:
		return nil, fmt.Errorf("unknown scenario %q", cfg.Scenario)
	}
	return w, nil
}

func (w *worker) dial() error {
	if w.conn != nil {
		w.conn.Close()
	}
	c, err := net.Dial("tcp", w.g.host)
	if err != nil {
		return err
	}
	w.conn, w.br = c, bufio.NewReaderSize(c, 32<<10)
	return nil
}

// prepare stores the replay scenario's answers: one deposit per user, under
// a key made from the user's token, so the measured requests all replay.
func (w *worker) prepare() error {
	if w.g.cfg.Scenario != plan.Replay {
		return nil
	}
	for _, u := range w.users {
		// The key is the user's token, so pgbench's replay script can name
		// the same stored answers.
		call := replayCall{user: u, key: u.Token, body: depositBody(25_000_000)}
		status, _, err := w.depositCall(call.user, call.key, call.body)
		if err != nil {
			return err
		}
		if status != http.StatusCreated {
			return fmt.Errorf("prepare replay for %s: status %d", u.Token, status)
		}
		w.replays = append(w.replays, call)
	}
	return nil
}

func (w *worker) loop(ctx context.Context) {
	for ctx.Err() == nil {
		start := time.Now()
		err := w.once()
		d := time.Since(start)
		w.g.sent.Add(1)
		if err != nil {
			w.g.failed.Add(1)
		}
		if w.g.phase.Load() != measuring {
			continue
		}
		if err != nil {
			w.errors++
			if w.firstError == "" {
				w.firstError = err.Error()
			}
			continue
		}
		w.latencies = append(w.latencies, d)
	}
}

// once sends the scenario's next request and checks its answer.
func (w *worker) once() error {
	cfg := w.g.cfg
	switch cfg.Scenario {
	case plan.Action:
		c := &w.creatives[w.next%len(w.creatives)]
		w.next++
		path := "/api/v1/organizations/" + cfg.Org + "/creatives/" + c.ID + "/actions"
		var s plan.Session
		var body, to string
		switch c.Status {
		case "draft", "changes_requested":
			s, body, to = cfg.Authors[w.id%len(cfg.Authors)], `{"action":"submit"}`, "in_review"
		case "in_review":
			s, body, to = cfg.Reviewers[w.id%len(cfg.Reviewers)], `{"action":"request_changes","comment":"Please sharpen the logo."}`, "changes_requested"
		default:
			return fmt.Errorf("creative %s is %s: not part of the cycle", c.ID, c.Status)
		}
		status, _, err := w.do("POST", path, s, newKey(), []byte(body))
		if err != nil {
			return err
		}
		if status != http.StatusOK {
			return fmt.Errorf("action on %s (%s): status %d", c.ID, c.Status, status)
		}
		c.Status = to
		return nil
	case plan.Deposit:
		u := w.users[w.rnd.IntN(len(w.users))]
		// Whole cents from 10 to 10 000 USDT: about a million amounts with
		// 9 999 suffixes each never run out.
		body := depositBody(10_000_000 + 10_000*w.rnd.Int64N(999_000))
		status, _, err := w.depositCall(u, newKey(), body)
		if err != nil {
			return err
		}
		if status != http.StatusCreated {
			return fmt.Errorf("deposit: status %d", status)
		}
		return nil
	case plan.Replay:
		call := w.replays[w.next%len(w.replays)]
		w.next++
		status, replayed, err := w.depositCall(call.user, call.key, call.body)
		if err != nil {
			return err
		}
		if status != http.StatusCreated || !replayed {
			return fmt.Errorf("replay: status %d, replayed %v", status, replayed)
		}
		return nil
	case plan.Get:
		c := cfg.Creatives[w.rnd.IntN(len(cfg.Creatives))]
		status, _, err := w.do("GET", "/api/v1/organizations/"+cfg.Org+"/creatives/"+c.ID, cfg.Reviewers[w.id%len(cfg.Reviewers)], "", nil)
		if err == nil && status != http.StatusOK {
			err = fmt.Errorf("get creative: status %d", status)
		}
		return err
	case plan.List:
		status, _, err := w.do("GET", "/api/v1/organizations/"+cfg.Org+"/creatives", cfg.Reviewers[w.id%len(cfg.Reviewers)], "", nil)
		if err == nil && status != http.StatusOK {
			err = fmt.Errorf("list creatives: status %d", status)
		}
		return err
	case plan.Create:
		w.next++
		body := `{"title":"Bench create ` + strconv.Itoa(w.id) + `-` + strconv.Itoa(w.next) +
			`","type":"static","aspectRatio":"1:1","geo":"US","language":"en-US"}`
		status, _, err := w.do("POST", "/api/v1/organizations/"+cfg.Org+"/creatives", cfg.Authors[w.id%len(cfg.Authors)], newKey(), []byte(body))
		if err == nil && status != http.StatusCreated {
			err = fmt.Errorf("create creative: status %d", status)
		}
		return err
	case plan.Version:
		c := w.creatives[w.next%len(w.creatives)]
		w.next++
		body := `{"assets":[{"fileName":"bench-` + strconv.Itoa(w.next) + `.png","mimeType":"image/png","sizeBytes":120000,` +
			`"width":1080,"height":1080,"url":"https://cdn.acme.test/assets/bench/` + strconv.Itoa(w.next) + `.png",` +
			`"sha256":"` + benchSHA256 + `"}]}`
		path := "/api/v1/organizations/" + cfg.Org + "/creatives/" + c.ID + "/versions"
		status, _, err := w.do("POST", path, cfg.Authors[w.id%len(cfg.Authors)], newKey(), []byte(body))
		if err == nil && status != http.StatusCreated {
			err = fmt.Errorf("add a version to %s (%s): status %d", c.ID, c.Status, status)
		}
		return err
	case plan.Search:
		// The title's last word ("Benchmark creative 512345": 512345), as a
		// user types the part of a title that tells it apart.
		c := cfg.Creatives[w.rnd.IntN(len(cfg.Creatives))]
		words := strings.Fields(c.Title)
		path := "/api/v1/organizations/" + cfg.Org + "/creatives?q=" + url.QueryEscape(words[len(words)-1])
		status, _, err := w.do("GET", path, cfg.Reviewers[w.id%len(cfg.Reviewers)], "", nil)
		if err == nil && status != http.StatusOK {
			err = fmt.Errorf("search creatives: status %d", status)
		}
		return err
	case plan.Comments, plan.CommentsByVersion, plan.CommentsOpen, plan.CommentsCreatives:
		status, _, err := w.do("GET", cfg.Path, cfg.Reviewers[w.id%len(cfg.Reviewers)], "", nil)
		if err == nil && status != http.StatusOK {
			err = fmt.Errorf("%s: status %d", cfg.Scenario, status)
		}
		return err
	}
	return fmt.Errorf("unknown scenario %q", cfg.Scenario)
}

// benchSHA256 is the digest the version scenario's assets declare.
const benchSHA256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

func depositBody(minor int64) []byte {
	return []byte(`{"amount":{"amountMinor":"` + strconv.FormatInt(minor, 10) + `","currency":"USDT","scale":6}}`)
}

func (w *worker) depositCall(u plan.Session, key string, body []byte) (int, bool, error) {
	return w.do("POST", "/api/v1/me/balance/deposits", u, key, body)
}

// newKey is a fresh Idempotency-Key.
func newKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// do sends one request on the worker's connection and reads the whole
// answer; it redials once when the server closed an idle connection.
func (w *worker) do(method, path string, s plan.Session, key string, body []byte) (status int, replayed bool, err error) {
	for attempt := 0; ; attempt++ {
		status, replayed, err = w.roundTrip(method, path, s, key, body)
		if err == nil || attempt == 1 || !errors.Is(err, errConn) {
			return status, replayed, err
		}
		if err := w.dial(); err != nil {
			return 0, false, err
		}
	}
}

var errConn = errors.New("connection")

func (w *worker) roundTrip(method, path string, s plan.Session, key string, body []byte) (int, bool, error) {
	b := &w.buf
	b.Reset()
	b.WriteString(method + " " + path + " HTTP/1.1\r\nHost: " + w.g.host + "\r\n")
	b.WriteString("Cookie: " + w.g.cfg.CookieName + "=" + s.Token + "\r\n")
	if method != "GET" {
		b.WriteString("X-CSRF-Token: " + s.CSRF + "\r\nContent-Type: application/json\r\n")
		b.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n")
	}
	if key != "" {
		b.WriteString("Idempotency-Key: " + key + "\r\n")
	}
	b.WriteString("\r\n")
	b.Write(body)
	if _, err := w.conn.Write(b.Bytes()); err != nil {
		return 0, false, fmt.Errorf("%w: %w", errConn, err)
	}
	resp, err := http.ReadResponse(w.br, nil)
	if err != nil {
		return 0, false, fmt.Errorf("%w: %w", errConn, err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return 0, false, fmt.Errorf("%w: %w", errConn, err)
	}
	return resp.StatusCode, resp.Header.Get("Idempotent-Replayed") == "true", nil
}
