package operations_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"creativeapi/gen/db"
	"creativeapi/internal/events"
	"creativeapi/internal/testenv"
	"creativeapi/internal/tron"
	"creativeapi/internal/webhooks"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// opsDir holds the alert rules and the dashboard.
const opsDir = "../../ops"

const installHint = "not installed: run `make deps` (as root it installs Debian's prometheus package, else it prints the command)"

// tool is the path of a Prometheus program (prometheus, promtool).
func tool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is %s", name, installHint)
	}
	return path
}

func TestAlertRulesPassPromtool(t *testing.T) {
	t.Parallel()
	promtool := tool(t, "promtool")
	for _, args := range [][]string{
		{"check", "rules", "alerts.yml"},
		// Each alert fires on its signal and stays quiet on a healthy one.
		{"test", "rules", "alerts_test.yml"},
	} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = opsDir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// dashboard is the part of a Grafana dashboard the tests read.
type dashboard struct {
	UID        string `json:"uid"`
	Title      string `json:"title"`
	Templating struct {
		List []struct {
			Name string `json:"name"`
			Type string `json:"type"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		Type       string `json:"type"`
		Title      string `json:"title"`
		Datasource struct {
			UID string `json:"uid"`
		} `json:"datasource"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// dashboardQueries reads ops/grafana-dashboard.json and returns each
// panel's queries, by panel title.
func dashboardQueries(t *testing.T) map[string][]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(opsDir, "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("grafana-dashboard.json: %v", err)
	}
	if d.UID == "" || d.Title == "" {
		t.Errorf("the dashboard has no uid or title")
	}
	var vars []string
	for _, v := range d.Templating.List {
		vars = append(vars, v.Name+":"+v.Type)
	}
	if !slices.Contains(vars, "datasource:datasource") || !slices.Contains(vars, "job:constant") {
		t.Errorf("template variables %v, want a datasource picker and the job", vars)
	}
	queries := map[string][]string{}
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if p.Datasource.UID != "${datasource}" || len(p.Targets) == 0 {
			t.Errorf("panel %q: datasource %q with %d queries, want ${datasource} and at least one", p.Title, p.Datasource.UID, len(p.Targets))
		}
		for _, tg := range p.Targets {
			queries[p.Title] = append(queries[p.Title], tg.Expr)
		}
	}
	// The panels the issue asks for.
	for _, title := range []string{"Request rate by operation", "Server errors (5xx ratio)", "p50 latency by operation",
		"p99 latency by operation", "Pool saturation", "Watcher lag", "Deposit funnel (over the dashboard's range)"} {
		if queries[title] == nil {
			t.Errorf("the dashboard has no panel %q", title)
		}
	}
	return queries
}

func TestDashboardIsGrafanaJSON(t *testing.T) {
	t.Parallel()
	if n := len(dashboardQueries(t)); n < 10 {
		t.Errorf("%d panels with queries", n)
	}
}

// process is the binary serving with metrics on, and its chain simulator.
type process struct {
	api, metrics, chain string
}

// startServer runs `creativeapi serve --devchain` on the test database
// dbURL with METRICS_ADDR set, until the test ends. Its three listeners
// bind port 0, and their addresses are read from the start-up banner, so
// no other process can take a port between choosing and binding it.
func startServer(t *testing.T, bin, dbURL string) process {
	t.Helper()
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"ADDR=127.0.0.1:0", "METRICS_ADDR=127.0.0.1:0", "DEVCHAIN_ADDR=127.0.0.1:0", "DATABASE_URL=" + dbURL,
		"COOKIE_SECURE=false", "PUBLIC_BASE_URL=http://api.test", "TREASURY_ADDRESS=" + tron.DevTreasuryAddress,
		"LOG_LEVEL=warn", "DB_MAX_CONNS=5", "CHAIN_POLL_INTERVAL=100ms", "DEVCHAIN_BLOCK_INTERVAL=100ms",
		// The development treasury and the chain simulator are development-only.
		"DEV_MODE=true",
	}
	logs := run(t, "server", bin, env, "serve", "--devchain")
	banner := regexp.MustCompile(`(?s)API +http://(\S+)/api/v1\n.*Chain http://(\S+) .*Metrics http://(\S+)/metrics`)
	m := fromLog(t, "the server's start-up banner", logs, banner)
	p := process{api: m[1], chain: m[2], metrics: m[3]}
	waitFor(t, "the server's /healthz", 30*time.Second, func() error { return get("http://"+p.api+"/healthz", nil) })
	return p
}

// startPrometheus runs the real Prometheus scraping metricsAddr every
// second with ops/alerts.yml loaded, until the test ends, and returns its
// base URL.
func startPrometheus(t *testing.T, metricsAddr string) string {
	t.Helper()
	bin := tool(t, "prometheus")
	dir := t.TempDir()
	rules, err := filepath.Abs(filepath.Join(opsDir, "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: creativeapi
    static_configs:
      - targets: [%q]
`, rules, metricsAddr)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	// Port 0, and the address it got from Prometheus's log.
	logs := run(t, "prometheus", bin, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir},
		"--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address=127.0.0.1:0", "--log.level=info")
	listening := regexp.MustCompile(`msg="Listening on" address=(\S+)`)
	base := "http://" + fromLog(t, "Prometheus's address", logs, listening)[1]
	waitFor(t, "Prometheus ready", 60*time.Second, func() error { return get(base+"/-/ready", nil) })
	return base
}

// run starts a program that dies with the test binary, is stopped with
// SIGTERM when the test ends, and whose output is shown if the test fails.
// It returns the file the program's output goes to.
func run(t *testing.T, name, bin string, env []string, args ...string) string {
	t.Helper()
	logs, err := os.Create(filepath.Join(t.TempDir(), name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			out, _ := os.ReadFile(logs.Name())
			if len(out) > 4096 {
				out = out[len(out)-4096:]
			}
			t.Logf("%s log (last 4 KiB):\n%s", name, out)
		}
		logs.Close()
	})
	return logs.Name()
}

// fromLog waits until the output in path matches re and returns the match.
func fromLog(t *testing.T, what, path string, re *regexp.Regexp) []string {
	t.Helper()
	var m []string
	waitFor(t, what, 60*time.Second, func() error {
		out, err := os.ReadFile(path)
		if m = re.FindStringSubmatch(string(out)); m == nil && err == nil {
			err = errors.New("not in the output yet")
		}
		return err
	})
	return m
}

// waitFor retries check until it passes or limit runs out.
func waitFor(t *testing.T, what string, limit time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, limit, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

var client = &http.Client{Timeout: 30 * time.Second}

// get fetches url, expecting 200, and decodes a JSON answer into v (when not nil).
func get(url string, v any) error {
	res, err := client.Get(url)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %d %s", url, res.StatusCode, body)
	}
	if v != nil {
		return json.Unmarshal(body, v)
	}
	return nil
}

// sample is one element of an instant query's vector.
type sample struct {
	labels map[string]string
	value  float64
}

// query runs an instant PromQL query through Prometheus's HTTP API.
func query(prom, expr string) ([]sample, error) {
	var res struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := get(prom+"/api/v1/query?query="+url.QueryEscape(expr), &res); err != nil {
		return nil, err
	}
	if res.Status != "success" {
		return nil, fmt.Errorf("%s: %s", expr, res.Error)
	}
	var out []sample
	for _, r := range res.Data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: value %v", expr, r.Value[1])
		}
		out = append(out, sample{labels: r.Metric, value: v})
	}
	return out, nil
}

// scalar is the value of a query that must give one sample.
func scalar(prom, expr string) (float64, error) {
	s, err := query(prom, expr)
	if err != nil {
		return 0, err
	}
	if len(s) != 1 {
		return 0, fmt.Errorf("%s: %d samples, want 1", expr, len(s))
	}
	return s[0].value, nil
}

// api sends requests to the binary as one signed-in user (or none) and
// counts, by operation and status, what it sent.
type api struct {
	t           *testing.T
	base        string
	token, csrf string
	sent        map[[2]string]float64
}

// do sends one request the test calls operation and returns its answer,
// validated against openapi.yaml.
func (a *api) do(operation, method, path string, body any, signedIn bool, key string) *testenv.Response {
	a.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, a.base+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if signedIn {
		req.Header.Set("Cookie", "session="+a.token)
		req.Header.Set("X-CSRF-Token", a.csrf)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	res, err := client.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	r := &testenv.Response{Status: res.StatusCode, Header: res.Header, Body: b}
	if strings.HasPrefix(path, "/api/") || path == "/healthz" {
		if err := testenv.CheckResponse(req, r); err != nil {
			a.t.Errorf("%s %s → %d does not match openapi.yaml: %v\n%s", method, path, r.Status, err, b)
		}
	}
	a.sent[[2]string{operation, strconv.Itoa(r.Status)}]++
	return r
}

func TestPrometheusScrapesTheServer(t *testing.T) {
	t.Parallel()
	bin := testenv.BuildServer(t)
	d := testenv.NewDB(t)
	srv := startServer(t, bin, d.URL)
	prom := startPrometheus(t, srv.metrics)

	// A short load of known requests: every operation the test calls, each
	// answer counted by what the test calls it and the status it got.
	user, _ := d.User(t, "Mia Metrics")
	org := d.Org(t, "Metrics Org")
	d.Member(t, org, user, "author")
	creative := d.DraftCreative(t, org, user)
	// A webhook endpoint of the organization hears the submit below.
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(hook.Close)
	if _, err := d.Store.Q.WebhookEndpointCreate(context.Background(), db.WebhookEndpointCreateParams{OwnerID: org, Url: hook.URL,
		EventTypes: []string{string(events.CreativeSubmitted)}, Enabled: true, Secret: webhooks.NewSecret()}); err != nil {
		t.Fatal(err)
	}
	a := &api{t: t, base: "http://" + srv.api, sent: map[[2]string]float64{}}
	a.token, a.csrf = d.Session(t, user)
	creatives := fmt.Sprintf("/api/v1/organizations/%s/creatives", org)
	deposit := func(minor string) map[string]any {
		return map[string]any{"amount": map[string]any{"amountMinor": minor, "currency": "USDT", "scale": 6}}
	}
	for range 3 {
		a.do("getMe", http.MethodGet, "/api/v1/me", nil, true, "")
	}
	for range 2 {
		a.do("getMe", http.MethodGet, "/api/v1/me", nil, false, "")
		a.do("listCreatives", http.MethodGet, creatives, nil, true, "")
		a.do("getCreative", http.MethodGet, creatives+"/"+creative.String(), nil, true, "")
		a.do("unmatched", http.MethodGet, "/api/v1/no-such-thing", nil, true, "")
	}
	if r := a.do("executeCreativeAction", http.MethodPost, creatives+"/"+creative.String()+"/actions",
		map[string]any{"action": "submit", "expectedVersion": 1}, true, "act-1"); r.Status != http.StatusOK {
		t.Fatalf("submit: %d %s", r.Status, r.Body)
	}
	paid := a.do("createAccountDeposit", http.MethodPost, "/api/v1/me/balance/deposits", deposit("10000000"), true, "dep-1")
	a.do("createAccountDeposit", http.MethodPost, "/api/v1/me/balance/deposits", deposit("20000000"), true, "dep-2")
	if r := a.do("createAccountDeposit", http.MethodPost, "/api/v1/me/balance/deposits", deposit("10000000"), true, "dep-1"); r.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the repeat of dep-1 was not replayed: %d %s", r.Status, r.Body)
	}
	a.do("listAccountDeposits", http.MethodGet, "/api/v1/me/balance/deposits", nil, true, "")
	a.do("getAccountBalance", http.MethodGet, "/api/v1/me/balance", nil, true, "")
	a.do("docs", http.MethodGet, "/docs", nil, false, "")
	if paid.Status != http.StatusCreated {
		t.Fatalf("deposit: %d %s", paid.Status, paid.Body)
	}

	// Pay the first deposit on the chain simulator: the watcher credits it.
	var dep struct {
		RequestedAmount struct {
			AmountMinor string `json:"amountMinor"`
		} `json:"requestedAmount"`
	}
	paid.JSON(t, &dep)
	payment, _ := json.Marshal(map[string]string{"to": tron.DevTreasuryAddress, "value": dep.RequestedAmount.AmountMinor})
	res, err := client.Post("http://"+srv.chain+"/transfers", "application/json", bytes.NewReader(payment))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("pay on the chain simulator: %s", res.Status)
	}

	t.Run("request counts per operation match what the test sent", func(t *testing.T) {
		// getHealth also counts the start-up's readiness polls.
		const expr = `sum by (operation, code) (creativeapi_http_requests_total{job="creativeapi",operation!="getHealth"})`
		waitFor(t, "Prometheus to scrape every request", 30*time.Second, func() error {
			samples, err := query(prom, expr)
			if err != nil {
				return err
			}
			got := map[[2]string]float64{}
			for _, s := range samples {
				got[[2]string{s.labels["operation"], s.labels["code"]}] = s.value
			}
			if fmt.Sprint(got) != fmt.Sprint(a.sent) {
				return fmt.Errorf("Prometheus has %v, the test sent %v", got, a.sent)
			}
			return nil
		})
		if n, err := scalar(prom, `sum(creativeapi_http_request_duration_seconds_count{job="creativeapi",operation="getMe"})`); err != nil || n != 5 {
			t.Errorf("getMe latency observations: %v %v, want 5", n, err)
		}
	})

	t.Run("the deposit's way through the watcher is counted", func(t *testing.T) {
		want := map[string]float64{
			`creativeapi_deposits_created_total`:                                            2,
			`creativeapi_idempotent_commands_total{outcome="executed"}`:                     3,
			`creativeapi_idempotent_commands_total{outcome="replayed"}`:                     1,
			`creativeapi_chain_transfers_total{status="confirming"}`:                        1,
			`creativeapi_deposits_credited_total`:                                           1,
			`creativeapi_deposits_open{status="awaiting_transfer"}`:                         1,
			`creativeapi_deposits_open{status="confirming"}`:                                0,
			`creativeapi_chain_watcher_leading`:                                             1,
			`creativeapi_chain_polls_total{result="failure"}`:                               0,
			`creativeapi_db_pool_max_connections`:                                           5,
			`count(creativeapi_db_pool_connections)`:                                        3,
			`count(creativeapi_chain_last_successful_poll_timestamp_seconds > time() - 60)`: 1,
		}
		waitFor(t, "the credit to reach Prometheus", 60*time.Second, func() error {
			for expr, n := range want {
				got, err := scalar(prom, expr)
				if err != nil {
					return err
				}
				if got != n {
					return fmt.Errorf("%s = %v, want %v", expr, got, n)
				}
			}
			return nil
		})
		for _, expr := range []string{
			`creativeapi_chain_watcher_lag_seconds`, `creativeapi_chain_head_block`, `creativeapi_chain_solid_block`,
			`creativeapi_db_pool_acquires_total`, `creativeapi_chain_polls_total{result="success"}`,
		} {
			v, err := scalar(prom, expr)
			if err != nil {
				t.Errorf("%v", err)
			} else if v <= 0 {
				t.Errorf("%s = %v, want a positive value", expr, v)
			}
		}
		// Polls every 100 ms: the watcher is well within a few seconds of the chain.
		if lag, err := scalar(prom, `creativeapi_chain_watcher_lag_seconds`); err == nil && lag > 30 {
			t.Errorf("watcher lag %v s while it polls every 100 ms", lag)
		}
	})

	t.Run("the submit's event is published and delivered, and nothing waits", func(t *testing.T) {
		want := map[string]float64{
			`creativeapi_webhook_attempts_total{outcome="succeeded"}`:                                        1,
			`sum(creativeapi_webhook_attempts_total{outcome!="succeeded"})`:                                  0,
			`creativeapi_webhook_attempt_duration_seconds_count`:                                             1,
			`creativeapi_webhook_deliveries_pending`:                                                         0,
			`creativeapi_webhook_most_overdue_delivery_seconds`:                                              0,
			`creativeapi_outbox_unpublished_events`:                                                          0,
			`creativeapi_outbox_oldest_unpublished_age_seconds`:                                              0,
			`creativeapi_outbox_events_published_total >= bool 1`:                                            1,
			`creativeapi_outbox_publish_lag_seconds_count >= bool 1`:                                         1,
			`creativeapi_outbox_publish_lag_seconds_count == bool creativeapi_outbox_events_published_total`: 1,
		}
		waitFor(t, "the delivery to reach Prometheus", 60*time.Second, func() error {
			for expr, n := range want {
				got, err := scalar(prom, expr)
				if err != nil {
					return err
				}
				if got != n {
					return fmt.Errorf("%s = %v, want %v", expr, got, n)
				}
			}
			return nil
		})
	})

	t.Run("the alert rules load, evaluate and none fires", func(t *testing.T) {
		var res struct {
			Data struct {
				Groups []struct {
					Rules []struct {
						Name           string `json:"name"`
						Health         string `json:"health"`
						LastError      string `json:"lastError"`
						State          string `json:"state"`
						LastEvaluation string `json:"lastEvaluation"`
					} `json:"rules"`
				} `json:"groups"`
			} `json:"data"`
		}
		rules, err := os.ReadFile(filepath.Join(opsDir, "alerts.yml"))
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Count(string(rules), "- alert:")
		waitFor(t, "every rule evaluated", 30*time.Second, func() error {
			if err := get(prom+"/api/v1/rules", &res); err != nil {
				return err
			}
			n := 0
			for _, g := range res.Data.Groups {
				for _, r := range g.Rules {
					if strings.HasPrefix(r.LastEvaluation, "0001-") {
						return fmt.Errorf("%s not evaluated yet", r.Name)
					}
					n++
				}
			}
			if n != want {
				return fmt.Errorf("%d rules loaded, alerts.yml has %d", n, want)
			}
			return nil
		})
		for _, g := range res.Data.Groups {
			for _, r := range g.Rules {
				if r.Health != "ok" || r.State == "firing" {
					t.Errorf("rule %s: health %s (%s), state %s", r.Name, r.Health, r.LastError, r.State)
				}
			}
		}
	})

	exposition := ""
	t.Run("promtool check metrics passes on the exposition", func(t *testing.T) {
		res, err := client.Get("http://" + srv.metrics + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		exposition = string(b)
		cmd := exec.Command(tool(t, "promtool"), "check", "metrics")
		cmd.Stdin = bytes.NewReader(b)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	})

	t.Run("every dashboard and alert query runs on metrics the server exports", func(t *testing.T) {
		exported := map[string]bool{"up": true}
		for _, m := range regexp.MustCompile(`(?m)^# TYPE (\S+) `).FindAllStringSubmatch(exposition, -1) {
			exported[m[1]] = true
		}
		rules, err := os.ReadFile(filepath.Join(opsDir, "alerts.yml"))
		if err != nil {
			t.Fatal(err)
		}
		queries := dashboardQueries(t)
		queries["ops/alerts.yml"] = []string{string(rules)}
		// Grafana's variables, as Grafana would fill them in.
		fill := strings.NewReplacer("$job", "creativeapi", "$__rate_interval", "1m", "$__range", "5m")
		names := regexp.MustCompile(`\b(?:creativeapi|go|process)_[a-z_]+\b`)
		for title, exprs := range queries {
			for _, expr := range exprs {
				for _, name := range names.FindAllString(expr, -1) {
					base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_count"), "_sum")
					if !exported[name] && !exported[base] {
						t.Errorf("%s: %s is not a metric the server exports", title, name)
					}
				}
				if title == "ops/alerts.yml" {
					continue // Prometheus itself evaluated them (above)
				}
				if _, err := query(prom, fill.Replace(expr)); err != nil {
					t.Errorf("panel %q: %v", title, err)
				}
			}
		}
	})
}
