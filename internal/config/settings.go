package config

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"creativeapi/internal/deposit"
	"creativeapi/internal/events"
	"creativeapi/internal/tron"
	"creativeapi/internal/webhooks"
)

// Setting is one environment variable the configuration reads: its name,
// its default (what Load uses when the variable is unset or blank; empty
// when there is none) and what it is, in a few words.
type Setting struct {
	Name    string
	Default string
	Help    string
}

// settings is every variable Load reads, in the order `serve --help`
// lists them. Load takes each default from here and the usage prints
// this table, so a default is written once (docs/configuration.md says
// more of each).
var settings = []Setting{
	{"DEV_MODE", "false", "the development switch (make run sets true)"},
	{"ADDR", "127.0.0.1:8080", "listen address"},
	{"LISTEN_FDS", "", "1: serve on file descriptor 3 (socket activation)"},
	{"DATABASE_URL", "", "the PostgreSQL (unset, DEV_MODE: a private one)"},
	{"DATA_DIR", ".data", "the private PostgreSQL's (and store's) directory"},
	{"PUBLIC_BASE_URL", "", "the API's URL for browsers (default http://$ADDR)"},
	{"COOKIE_SECURE", "true", "false: plain-http development only"},
	{"ALLOWED_ORIGINS", "", "origins trusted for unsafe requests and CORS"},
	{"TRUSTED_PROXIES", "", "networks whose X-Forwarded-For is believed"},
	{"SESSION_IDLE_TTL", "12h", "a session ends after this long unused"},
	{"SESSION_ABSOLUTE_TTL", "168h", "a session ends this long after sign-in"},
	{"TREASURY_ADDRESS", "", "where deposits are paid (unset: no deposits)"},
	{"DEPOSIT_CONFIRMATIONS", "19", "confirmations before a deposit is credited"},
	{"DEPOSIT_TTL", "30m", "lifetime of a deposit request"},
	{"DEPOSIT_MIN_MINOR", strconv.FormatInt(deposit.DefaultBounds().MinMinor, 10), "minimum amount, in micro-USDT"},
	{"DEPOSIT_MAX_MINOR", strconv.FormatInt(deposit.DefaultBounds().MaxMinor, 10), "maximum amount, in micro-USDT"},
	{"DEPOSIT_MAX_OPEN_PER_USER", "5", "open deposit requests per user"},
	{"DEPOSIT_MONITORING_WINDOW", "24h", "how long a suffix stays reserved after expiry"},
	{"DEPOSIT_SHORTFALL_TOLERANCE", "1%", "a claimed payment this much short is credited at once (0: none)"},
	{"DEPOSIT_SHORTFALL_TOLERANCE_MAX_MINOR", "1000000", "the tolerance's cap, in micro-USDT"},
	{"TRON_API_URL", "https://api.trongrid.io", "TronGrid-compatible APIs, in order"},
	{"TRON_API_KEY", "", "TronGrid API keys, used in turn"},
	{"TRON_USDT_CONTRACT", tron.MainnetUSDT, "the USDT (TRC20) contract"},
	{"CHAIN_POLL_INTERVAL", "3s", "pause between polls of the chain"},
	{"DEVCHAIN_ADDR", "127.0.0.1:8091", "serve --devchain: where the chain simulator listens"},
	{"DEVCHAIN_BLOCK_INTERVAL", "3s", "serve --devchain: the simulator's block interval"},
	{"IDEMPOTENCY_TTL", "24h", "how long an Idempotency-Key replays its answer"},
	{"DB_CONNECT_TIMEOUT", "5s", "database connect timeout"},
	{"DB_STATEMENT_TIMEOUT", "10s", "longest statement"},
	{"DB_MAX_CONNS", "20", "connection pool size"},
	{"DB_LOCK_TIMEOUT", "5s", "longest wait for a row lock"},
	{"DB_ACQUIRE_TIMEOUT", "3s", "longest wait for a pooled connection"},
	{"REQUEST_TIMEOUT", "30s", "a request's database work stops after this"},
	{"SWEEP_INTERVAL", "1m", "how often expired rows are swept"},
	{"EVENTS_POLL_INTERVAL", durationText(events.DefaultPollInterval), "how often a replica looks for events to publish"},
	{"EVENTS_RETENTION", durationText(webhooks.DefaultRetention), "how long published events are kept"},
	{"WEBHOOK_WORKERS", strconv.Itoa(webhooks.DefaultWorkers), "webhook attempts one replica runs at once"},
	{"WEBHOOK_TIMEOUT", durationText(webhooks.DefaultTimeout), "bounds one webhook attempt"},
	{"STREAM_HEARTBEAT", "15s", "live stream heartbeat, and session recheck"},
	{"STREAM_MAX_PER_USER", "10", "open live streams of one user on one replica"},
	{"STREAM_MAX", "1000", "open live streams of one replica"},
	{"RATE_LIMIT_READS_PER_MINUTE", "600", "reads per minute of a user, token, guest or address (0: no limit)"},
	{"RATE_LIMIT_COMMANDS_PER_MINUTE", "120", "commands per minute of a user, token, guest or address (0: no limit)"},
	{"SHUTDOWN_TIMEOUT", "20s", "longest drain on SIGTERM"},
	{"PPROF_ADDR", "", "net/http/pprof on this address"},
	{"PPROF_CONTENTION", "false", "also the mutex and block profiles"},
	{"METRICS_ADDR", "", "Prometheus /metrics on this address"},
	{"LOG_LEVEL", "info", "debug, info, warn or error"},
	{"S3_ENDPOINT", "", "the store of uploads (unset: AWS S3; DEV_MODE: a private one)"},
	{"S3_PUBLIC_ENDPOINT", "", "the store as browsers reach it (default S3_ENDPOINT)"},
	{"S3_BUCKET", "", "the bucket (unset: no uploads; DEV_MODE: creatives)"},
	{"S3_REGION", "us-east-1", "the region requests are signed for"},
	{"S3_ACCESS_KEY_ID", "", "the store's credentials, with S3_SECRET_ACCESS_KEY"},
	{"S3_SECRET_ACCESS_KEY", "", "the store's credentials, with S3_ACCESS_KEY_ID"},
	{"UPLOAD_MAX_BYTES", strconv.FormatInt(2<<30, 10), "the largest file an upload may announce"},
	{"ORG_STORAGE_QUOTA_BYTES", strconv.FormatInt(100<<30, 10), "the bytes an organization's uploads may hold"},
	{"UPLOAD_TTL", "24h", "a pending upload is aborted at the latest this long after it started"},
	{"UPLOAD_URL_TTL", "1h", "a part URL's lifetime, and how long a pending upload waits for its next part"},
	{"S3_SERVER_BIN", "bin/versitygw", "DEV_MODE: the private store's executable"},
	{"S3_DEV_ADDR", "", "DEV_MODE: the private store's host:port"},
	{"APPROVAL_SIGNING_KEY", "", "the Ed25519 key (PEM, or its file) signing approvals"},
	{"APPROVAL_SIGNING_KEY_PREVIOUS", "", "earlier keys (PEM), still published for verifiers"},
	{"SMTP_URL", "", "where email goes: smtp:// (STARTTLS) or smtps:// (TLS)"},
	{"MAIL_FROM", "", "the From of every email (required with SMTP_URL)"},
	{"APP_URL", "", "the frontend every email links to (default PUBLIC_BASE_URL)"},
	{"DIGEST_HOUR", "8", "the daily digest's hour (UTC)"},
	{"UNSUBSCRIBE_SECRET", "", "signs unsubscribe links, seals share invitations (required with SMTP_URL)"},
	{"MAIL_SERVER_BIN", "bin/mailpit", "DEV_MODE: the private Mailpit's binary"},
}

// Settings returns every variable Load reads, with its default, in the
// order `serve --help` lists them.
func Settings() []Setting { return slices.Clone(settings) }

// defaults holds each setting's default by name.
var defaults = func() map[string]string {
	m := make(map[string]string, len(settings))
	for _, s := range settings {
		m[s.Name] = s.Default
	}
	return m
}()

// durationText writes d as the settings are written: 168h, 1m, 50ms
// rather than time.Duration's 168h0m0s.
func durationText(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
