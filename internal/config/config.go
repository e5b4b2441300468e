// Package config reads the service's configuration from environment
// variables once, at start-up, and validates it. The defaults are those of
// production; DEV_MODE=true is the one switch that allows what only a local
// development server may do.
package config

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/mail"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"creativeapi/internal/approval"
	"creativeapi/internal/deposit"
	"creativeapi/internal/objectstore"
	"creativeapi/internal/tron"
)

// Config is the validated configuration of one server process.
type Config struct {
	// DevMode is the development switch (DEV_MODE): it allows the private
	// PostgreSQL without DATABASE_URL, the development treasury address and
	// the demo data. Everything it allows is unsafe in production.
	DevMode bool
	// Addr is the listen address of the HTTP server.
	Addr string
	// ListenFD: the HTTP server takes the listening socket its supervisor
	// passed as file descriptor 3 (socket activation: LISTEN_FDS=1), so
	// the address is bound before the process starts; Addr is then unused.
	ListenFD bool
	// DatabaseURL is any PostgreSQL; empty means the private one under
	// DataDir, in development mode only.
	DatabaseURL string
	// DataDir holds the private PostgreSQL cluster when DatabaseURL is empty.
	DataDir string
	// PublicBaseURL is the {base_url} of problem types, without a trailing slash.
	PublicBaseURL string
	// CookieSecure marks the session cookie Secure and gives it the __Host- prefix.
	CookieSecure bool
	// AllowedOrigins are origins trusted for cross-origin unsafe requests and CORS.
	AllowedOrigins []string
	// TrustedProxies are the networks of the load balancers and proxies in
	// front of the server: only from them is X-Forwarded-For believed.
	TrustedProxies []netip.Prefix
	// SessionIdleTTL and SessionAbsoluteTTL bound a session's life.
	SessionIdleTTL     time.Duration
	SessionAbsoluteTTL time.Duration

	// TreasuryAddress is the TRON address deposits are paid to; empty disables deposits.
	TreasuryAddress       string
	DepositConfirmations  int
	DepositTTL            time.Duration
	DepositMinMinor       int64
	DepositMaxMinor       int64
	DepositMaxOpenPerUser int
	// DepositMonitoringWindow keeps a suffix reserved after expiry so a late
	// exact transfer still finds its deposit.
	DepositMonitoringWindow time.Duration
	// DepositShortfallTolerance is how short a transfer may be and
	// still be credited at once, by policy, when it carries the deposit's
	// matching suffix (DEPOSIT_SHORTFALL_TOLERANCE,
	// DEPOSIT_SHORTFALL_TOLERANCE_MAX_MINOR).
	DepositShortfallTolerance deposit.Tolerance

	// TronAPIURLs are the TronGrid-compatible APIs the chain watcher reads
	// (TRON_API_URL, comma-separated), tried in order on failure;
	// TronAPIKeys are sent as TRON-PRO-API-KEY in turn.
	TronAPIURLs      []string
	TronAPIKeys      []string
	TronUSDTContract string
	// ChainPollInterval is the pause between two polls of the chain.
	ChainPollInterval time.Duration
	// DevchainAddr and DevchainBlockInterval configure the chain simulator
	// that `serve --devchain` starts (development only).
	DevchainAddr          string
	DevchainBlockInterval time.Duration

	// IdempotencyTTL is how long a stored command outcome replays.
	IdempotencyTTL time.Duration

	// DBConnectTimeout and DBStatementTimeout bound every database call.
	DBConnectTimeout   time.Duration
	DBStatementTimeout time.Duration
	DBMaxConns         int32
	// DBLockTimeout bounds every wait for a row lock; it is how long a repeat
	// waits for the first request with its Idempotency-Key before answering
	// 409 idempotency_key_in_use.
	DBLockTimeout time.Duration
	// DBAcquireTimeout bounds the wait for a free pooled connection: an
	// exhausted pool answers 503 after it.
	DBAcquireTimeout time.Duration
	// RequestTimeout bounds a request's work: its database calls are
	// cancelled after it (503), even when the database stopped answering.
	RequestTimeout time.Duration

	// SweepInterval is how often the background sweepers run.
	SweepInterval time.Duration

	// EventsPollInterval is how often each replica's outbox publisher looks
	// for unpublished events (docs/events.md, "Publishing").
	EventsPollInterval time.Duration
	// EventsRetention is how long published events, finished webhook
	// deliveries and their attempt logs are kept (docs/events.md).
	EventsRetention time.Duration
	// WebhookWorkers is how many webhook attempts one replica runs at once.
	WebhookWorkers int
	// WebhookTimeout bounds one webhook attempt, connection included.
	WebhookTimeout time.Duration
	// StreamHeartbeat is how often a live stream sends a heartbeat comment
	// (and the replica rechecks its streams' sessions); StreamMaxPerUser and
	// RateLimitReadsPerMinute and RateLimitCommandsPerMinute are each
	// principal's budget per minute (internal/ratelimit); 0 is no limit.
	RateLimitReadsPerMinute    int
	RateLimitCommandsPerMinute int
	// StreamMax bound the streams of one user and of one replica.
	StreamHeartbeat  time.Duration
	StreamMaxPerUser int
	StreamMax        int
	// ShutdownTimeout bounds the graceful drain on SIGTERM.
	ShutdownTimeout time.Duration
	// PprofAddr exposes net/http/pprof when set.
	PprofAddr string
	// PprofContention turns on the sampling of lock contention and blocking
	// for pprof's mutex and block profiles (it costs CPU: diagnostics only).
	PprofContention bool
	// MetricsAddr serves Prometheus metrics at /metrics when set; they are
	// off (not even measured) when it is empty.
	MetricsAddr string
	// LogLevel is debug, info, warn or error.
	LogLevel string

	// S3 locates the object store that holds uploaded files. Uploads are
	// off when S3Bucket is empty, except in development mode, where a
	// private store runs under DataDir/s3 (S3Endpoint empty).
	S3Endpoint        string
	S3PublicEndpoint  string
	S3Bucket          string
	S3Region          string
	S3AccessKeyID     string
	S3SecretAccessKey string
	// UploadMaxBytes bounds one upload's sizeBytes.
	UploadMaxBytes int64
	// OrgStorageQuotaBytes bounds the bytes of an organization's ready and
	// pending uploads.
	OrgStorageQuotaBytes int64
	// UploadTTL is the longest a pending upload may take, however busy:
	// its expiresAt is never later than this after its creation.
	UploadTTL time.Duration
	// UploadURLTTL is how long a presigned part URL works, and how long a
	// pending upload holds its reservation after its last received part
	// (or its creation): an upload nobody sends to is abandoned after it.
	UploadURLTTL time.Duration
	// S3ServerBin is the versitygw executable of the private store
	// (`make s3-server` builds bin/versitygw).
	S3ServerBin string
	// S3DevAddr pins the private store's address (host:port); empty means
	// a free loopback port at each start.
	S3DevAddr string

	// ApprovalSigningKey is the Ed25519 private key (PEM) that signs
	// approval records (APPROVAL_SIGNING_KEY: the PEM text, or the path of
	// a file holding it); ApprovalSigningKeyPrevious the earlier keys whose
	// records must stay verifiable. Production needs one; a development
	// server without one makes its own under DataDir.
	ApprovalSigningKey         []byte
	ApprovalSigningKeyPrevious []byte

	// SMTPURL is where email goes (smtp://user:pass@host:587 with
	// STARTTLS, smtps://host:465 implicit TLS). Empty: email is off, except
	// in development mode, where a private Mailpit runs under DataDir.
	SMTPURL string
	// MailFrom is the From of every email.
	MailFrom string
	// AppURL is the frontend's base URL, without a trailing slash: every
	// link in an email points under it.
	AppURL string
	// DigestHour is the hour (UTC, 0 to 23) of the daily digest.
	DigestHour int
	// UnsubscribeSecret signs the one-click unsubscribe tokens and keys
	// the seal of share invitations' tokens (share.NewSealer).
	UnsubscribeSecret string
	// MailServerBin is the mailpit executable of the private mail server
	// (`make mail-server` builds bin/mailpit).
	MailServerBin string
}

// DevUnsubscribeSecret signs unsubscribe tokens on development servers
// that set no UNSUBSCRIBE_SECRET: it is published here, so production
// refuses it.
const DevUnsubscribeSecret = "development-only-unsubscribe-secret-0123456789"

// EmailEnabled reports whether the server sends email.
func (c Config) EmailEnabled() bool { return c.SMTPURL != "" || c.DevMode }

// PrivateMail reports whether serve starts its own Mailpit under DataDir.
func (c Config) PrivateMail() bool { return c.DevMode && c.SMTPURL == "" }

// defaultPublicBaseURL is http://ADDR, with a loopback address named
// localhost: browsers treat localhost:5173 and localhost:8080 as one site
// (ports aside) but 127.0.0.1 as another, and the session cookie
// (SameSite=Lax) is only sent within a site. One host name in every URL
// the server prints keeps a frontend's dev server and the API one site.
func defaultPublicBaseURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		return "http://" + net.JoinHostPort("localhost", port)
	}
	return "http://" + addr
}

// UploadsEnabled reports whether the upload endpoints have a store.
func (c Config) UploadsEnabled() bool { return c.S3Bucket != "" || c.DevMode }

// PrivateS3 reports whether serve starts its own store under DataDir.
func (c Config) PrivateS3() bool { return c.DevMode && c.S3Endpoint == "" }

// Load reads the configuration through getenv (os.Getenv in main) and
// validates it, reporting every bad variable at once.
func Load(getenv func(string) string) (Config, error) {
	p := parser{getenv: getenv}
	c := Config{
		DevMode:                 p.boolean("DEV_MODE"),
		Addr:                    p.str("ADDR"),
		DatabaseURL:             p.str("DATABASE_URL"),
		DataDir:                 p.str("DATA_DIR"),
		PublicBaseURL:           strings.TrimRight(p.str("PUBLIC_BASE_URL"), "/"),
		CookieSecure:            p.boolean("COOKIE_SECURE"),
		AllowedOrigins:          p.list("ALLOWED_ORIGINS"),
		TrustedProxies:          p.prefixes("TRUSTED_PROXIES"),
		SessionIdleTTL:          p.duration("SESSION_IDLE_TTL"),
		SessionAbsoluteTTL:      p.duration("SESSION_ABSOLUTE_TTL"),
		TreasuryAddress:         p.str("TREASURY_ADDRESS"),
		DepositConfirmations:    p.integer("DEPOSIT_CONFIRMATIONS"),
		DepositTTL:              p.duration("DEPOSIT_TTL"),
		DepositMinMinor:         p.int64("DEPOSIT_MIN_MINOR"),
		DepositMaxMinor:         p.int64("DEPOSIT_MAX_MINOR"),
		DepositMaxOpenPerUser:   p.integer("DEPOSIT_MAX_OPEN_PER_USER"),
		DepositMonitoringWindow: p.duration("DEPOSIT_MONITORING_WINDOW"),
		DepositShortfallTolerance: deposit.Tolerance{
			BasisPoints: p.percent("DEPOSIT_SHORTFALL_TOLERANCE"),
			MaxMinor:    p.int64("DEPOSIT_SHORTFALL_TOLERANCE_MAX_MINOR"),
		},
		TronAPIURLs:                p.list("TRON_API_URL"),
		TronAPIKeys:                p.list("TRON_API_KEY"),
		TronUSDTContract:           p.str("TRON_USDT_CONTRACT"),
		ChainPollInterval:          p.duration("CHAIN_POLL_INTERVAL"),
		DevchainAddr:               p.str("DEVCHAIN_ADDR"),
		DevchainBlockInterval:      p.duration("DEVCHAIN_BLOCK_INTERVAL"),
		IdempotencyTTL:             p.duration("IDEMPOTENCY_TTL"),
		DBConnectTimeout:           p.duration("DB_CONNECT_TIMEOUT"),
		DBStatementTimeout:         p.duration("DB_STATEMENT_TIMEOUT"),
		DBMaxConns:                 p.int32("DB_MAX_CONNS"),
		DBLockTimeout:              p.duration("DB_LOCK_TIMEOUT"),
		DBAcquireTimeout:           p.duration("DB_ACQUIRE_TIMEOUT"),
		RequestTimeout:             p.duration("REQUEST_TIMEOUT"),
		SweepInterval:              p.duration("SWEEP_INTERVAL"),
		EventsPollInterval:         p.duration("EVENTS_POLL_INTERVAL"),
		EventsRetention:            p.duration("EVENTS_RETENTION"),
		WebhookWorkers:             p.integer("WEBHOOK_WORKERS"),
		WebhookTimeout:             p.duration("WEBHOOK_TIMEOUT"),
		StreamHeartbeat:            p.duration("STREAM_HEARTBEAT"),
		StreamMaxPerUser:           p.integer("STREAM_MAX_PER_USER"),
		StreamMax:                  p.integer("STREAM_MAX"),
		RateLimitReadsPerMinute:    p.integer("RATE_LIMIT_READS_PER_MINUTE"),
		RateLimitCommandsPerMinute: p.integer("RATE_LIMIT_COMMANDS_PER_MINUTE"),
		ShutdownTimeout:            p.duration("SHUTDOWN_TIMEOUT"),
		PprofAddr:                  p.str("PPROF_ADDR"),
		PprofContention:            p.boolean("PPROF_CONTENTION"),
		MetricsAddr:                p.str("METRICS_ADDR"),
		LogLevel:                   p.str("LOG_LEVEL"),
		S3Endpoint:                 strings.TrimRight(p.str("S3_ENDPOINT"), "/"),
		S3PublicEndpoint:           strings.TrimRight(p.str("S3_PUBLIC_ENDPOINT"), "/"),
		S3Bucket:                   p.str("S3_BUCKET"),
		S3Region:                   p.str("S3_REGION"),
		S3AccessKeyID:              p.str("S3_ACCESS_KEY_ID"),
		S3SecretAccessKey:          p.str("S3_SECRET_ACCESS_KEY"),
		UploadMaxBytes:             p.int64("UPLOAD_MAX_BYTES"),
		OrgStorageQuotaBytes:       p.int64("ORG_STORAGE_QUOTA_BYTES"),
		UploadTTL:                  p.duration("UPLOAD_TTL"),
		UploadURLTTL:               p.duration("UPLOAD_URL_TTL"),
		S3ServerBin:                p.str("S3_SERVER_BIN"),
		S3DevAddr:                  p.str("S3_DEV_ADDR"),
		ApprovalSigningKey:         p.pem("APPROVAL_SIGNING_KEY"),
		ApprovalSigningKeyPrevious: p.pem("APPROVAL_SIGNING_KEY_PREVIOUS"),
		SMTPURL:                    p.str("SMTP_URL"),
		MailFrom:                   p.str("MAIL_FROM"),
		AppURL:                     strings.TrimRight(p.str("APP_URL"), "/"),
		DigestHour:                 p.integer("DIGEST_HOUR"),
		UnsubscribeSecret:          p.str("UNSUBSCRIBE_SECRET"),
		MailServerBin:              p.str("MAIL_SERVER_BIN"),
	}
	if c.DevMode && c.MailFrom == "" {
		c.MailFrom = "creativeapi <no-reply@localhost>"
	}
	if c.DevMode && c.UnsubscribeSecret == "" {
		c.UnsubscribeSecret = DevUnsubscribeSecret
	}
	if c.DevMode && c.S3Bucket == "" {
		c.S3Bucket = "creatives"
	}
	if c.PublicBaseURL == "" {
		c.PublicBaseURL = defaultPublicBaseURL(c.Addr)
	}
	if c.AppURL == "" {
		c.AppURL = c.PublicBaseURL
	}
	// LISTEN_PID, when set, names the process the socket is for.
	switch fds, pid := getenv("LISTEN_FDS"), getenv("LISTEN_PID"); {
	case fds == "", pid != "" && pid != strconv.Itoa(os.Getpid()):
	case fds == "1":
		c.ListenFD = true
	default:
		p.errs = append(p.errs, fmt.Errorf("LISTEN_FDS=%q: the server takes one socket (1)", fds))
	}
	p.errs = append(p.errs, c.validate()...)
	if len(p.errs) > 0 {
		return Config{}, fmt.Errorf("invalid configuration:\n  %w", errors.Join(p.errs...))
	}
	return c, nil
}

// maxLifetime bounds the lifetimes stored as seconds in 32 bits.
const maxLifetime = 10 * 365 * 24 * time.Hour

func (c Config) validate() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		bad("ADDR=%q: want host:port (%v)", c.Addr, err)
	}
	if u, err := url.Parse(c.PublicBaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("PUBLIC_BASE_URL=%q: want an absolute http(s) URL such as https://api.example.com", c.PublicBaseURL)
	}
	for _, o := range c.AllowedOrigins {
		if u, err := url.Parse(o); err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" {
			bad("ALLOWED_ORIGINS: %q is not an origin such as https://app.example.com", o)
		}
	}
	if c.TreasuryAddress != "" {
		if err := tron.ValidateAddress(c.TreasuryAddress); err != nil {
			bad("TREASURY_ADDRESS=%q: not a TRON address: %v", c.TreasuryAddress, err)
		}
	}
	for _, api := range c.TronAPIURLs {
		if u, err := url.Parse(api); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("TRON_API_URL: %q: want absolute http(s) URLs, comma-separated, such as https://api.trongrid.io", api)
		}
	}
	if err := tron.ValidateAddress(c.TronUSDTContract); err != nil {
		bad("TRON_USDT_CONTRACT=%q: not a TRON address: %v", c.TronUSDTContract, err)
	}
	if c.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			bad("METRICS_ADDR=%q: want host:port (%v)", c.MetricsAddr, err)
		}
	}
	if _, _, err := net.SplitHostPort(c.DevchainAddr); err != nil {
		bad("DEVCHAIN_ADDR=%q: want host:port (%v)", c.DevchainAddr, err)
	}
	if c.TreasuryAddress == tron.DevTreasuryAddress && !c.DevMode {
		bad("TREASURY_ADDRESS=%s is the development treasury, whose key nobody holds: configure your own address (or DEV_MODE=true on a development machine)", c.TreasuryAddress)
	}
	positive := map[string]time.Duration{
		"SESSION_IDLE_TTL": c.SessionIdleTTL, "SESSION_ABSOLUTE_TTL": c.SessionAbsoluteTTL,
		"DEPOSIT_TTL": c.DepositTTL, "IDEMPOTENCY_TTL": c.IdempotencyTTL, "DB_LOCK_TIMEOUT": c.DBLockTimeout,
		"DB_CONNECT_TIMEOUT": c.DBConnectTimeout, "DB_STATEMENT_TIMEOUT": c.DBStatementTimeout,
		"DB_ACQUIRE_TIMEOUT": c.DBAcquireTimeout, "REQUEST_TIMEOUT": c.RequestTimeout,
		"SWEEP_INTERVAL": c.SweepInterval, "SHUTDOWN_TIMEOUT": c.ShutdownTimeout, "EVENTS_POLL_INTERVAL": c.EventsPollInterval,
		"CHAIN_POLL_INTERVAL": c.ChainPollInterval, "DEVCHAIN_BLOCK_INTERVAL": c.DevchainBlockInterval,
		"EVENTS_RETENTION": c.EventsRetention, "WEBHOOK_TIMEOUT": c.WebhookTimeout, "STREAM_HEARTBEAT": c.StreamHeartbeat,
	}
	if c.StreamMaxPerUser < 1 || c.StreamMaxPerUser > c.StreamMax {
		bad("STREAM_MAX_PER_USER=%d: want 1 to STREAM_MAX (%d)", c.StreamMaxPerUser, c.StreamMax)
	}
	if c.RateLimitReadsPerMinute < 0 || c.RateLimitReadsPerMinute > 1_000_000 {
		bad("RATE_LIMIT_READS_PER_MINUTE=%d: want 0 (no limit) to 1000000", c.RateLimitReadsPerMinute)
	}
	if c.RateLimitCommandsPerMinute < 0 || c.RateLimitCommandsPerMinute > 1_000_000 {
		bad("RATE_LIMIT_COMMANDS_PER_MINUTE=%d: want 0 (no limit) to 1000000", c.RateLimitCommandsPerMinute)
	}
	if c.StreamMax < 1 || c.StreamMax > 1_000_000 {
		bad("STREAM_MAX=%d: want 1 to 1000000", c.StreamMax)
	}
	if c.EventsPollInterval > 0 && (c.EventsPollInterval < time.Millisecond || c.EventsPollInterval > time.Minute) {
		bad("EVENTS_POLL_INTERVAL=%s: want 1ms to 1m (each look is one indexed read; events wait about half of it)", c.EventsPollInterval)
	}
	if c.WebhookWorkers < 1 || c.WebhookWorkers > 10_000 {
		bad("WEBHOOK_WORKERS=%d: want 1 to 10000", c.WebhookWorkers)
	}
	for name, d := range positive {
		if d <= 0 {
			bad("%s=%s: must be positive", name, d)
		}
	}
	// These lifetimes go to the database as 32-bit seconds: bounded well
	// below that, so none wraps around.
	for name, d := range map[string]time.Duration{
		"SESSION_IDLE_TTL": c.SessionIdleTTL, "SESSION_ABSOLUTE_TTL": c.SessionAbsoluteTTL, "IDEMPOTENCY_TTL": c.IdempotencyTTL,
	} {
		if d > maxLifetime {
			bad("%s=%s: at most %s (10 years)", name, d, maxLifetime)
		}
	}
	if c.DepositMonitoringWindow < 0 {
		bad("DEPOSIT_MONITORING_WINDOW=%s: must not be negative", c.DepositMonitoringWindow)
	}
	if c.DepositConfirmations < 1 || c.DepositConfirmations > 10_000 {
		bad("DEPOSIT_CONFIRMATIONS=%d: must be between 1 and 10000", c.DepositConfirmations)
	}
	if c.DepositMaxOpenPerUser < 1 || c.DepositMaxOpenPerUser > 1_000_000 {
		bad("DEPOSIT_MAX_OPEN_PER_USER=%d: must be between 1 and 1000000", c.DepositMaxOpenPerUser)
	}
	if err := c.DepositBounds().Validate(); err != nil {
		bad("DEPOSIT_MIN_MINOR=%d, DEPOSIT_MAX_MINOR=%d: %v", c.DepositMinMinor, c.DepositMaxMinor, err)
	}
	if err := c.DepositShortfallTolerance.Validate(); err != nil {
		bad("DEPOSIT_SHORTFALL_TOLERANCE, DEPOSIT_SHORTFALL_TOLERANCE_MAX_MINOR: %v", err)
	}
	if c.DBMaxConns < 2 || c.DBMaxConns > 10_000 {
		bad("DB_MAX_CONNS=%d: must be between 2 and 10000", c.DBMaxConns)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		bad("LOG_LEVEL=%q: want debug, info, warn or error", c.LogLevel)
	}
	errs = append(errs, c.validateS3()...)
	// Set keys must parse; whether one is needed is serve's to say (a
	// management command signs nothing).
	if len(c.ApprovalSigningKey) > 0 {
		if _, err := approval.ParseKeys(c.ApprovalSigningKey, c.ApprovalSigningKeyPrevious); err != nil {
			bad("%v", err)
		}
	}
	errs = append(errs, c.validateEmail()...)
	return errs
}

// minSecretBytes is the shortest UNSUBSCRIBE_SECRET: 32 bytes, the size
// of the HMAC-SHA256 key it becomes.
const minSecretBytes = 32

func (c Config) validateEmail() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.SMTPURL != "" {
		if u, err := url.Parse(c.SMTPURL); err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Hostname() == "" {
			bad("SMTP_URL: want smtp://user:password@host:587 (STARTTLS) or smtps://user:password@host:465 (implicit TLS)")
		} else if p := u.Port(); p != "" {
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				bad("SMTP_URL: port %q is not a port", p)
			}
		}
		if c.MailFrom == "" {
			bad("SMTP_URL is set without MAIL_FROM")
		}
	}
	if c.MailFrom != "" {
		if _, err := mail.ParseAddress(c.MailFrom); err != nil {
			bad("MAIL_FROM=%q: want an address such as \"Reviews <reviews@example.com>\" (%v)", c.MailFrom, err)
		}
	}
	if u, err := url.Parse(c.AppURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		bad("APP_URL=%q: want the frontend's absolute http(s) base URL such as https://app.example.com", c.AppURL)
	}
	if c.DigestHour < 0 || c.DigestHour > 23 {
		bad("DIGEST_HOUR=%d: want an hour of the day, 0 to 23 (UTC)", c.DigestHour)
	}
	if c.EmailEnabled() {
		switch {
		case c.UnsubscribeSecret == "":
			bad("SMTP_URL is set without UNSUBSCRIBE_SECRET (at least %d random bytes, e.g. openssl rand -hex 32)", minSecretBytes)
		case c.UnsubscribeSecret == DevUnsubscribeSecret && !c.DevMode:
			bad("UNSUBSCRIBE_SECRET is the published development secret: generate your own (openssl rand -hex 32)")
		case len(c.UnsubscribeSecret) < minSecretBytes:
			bad("UNSUBSCRIBE_SECRET: at least %d bytes", minSecretBytes)
		}
	}
	return errs
}

// maxUploadBytes bounds UPLOAD_MAX_BYTES: completing an upload copies the
// staged file to its final key in one CopyObject, which S3 does for
// objects up to 5 GiB (docs/uploads.md; larger would need UploadPartCopy).
const maxUploadBytes = objectstore.MaxCopyBytes

func (c Config) validateS3() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	for name, v := range map[string]string{"S3_ENDPOINT": c.S3Endpoint, "S3_PUBLIC_ENDPOINT": c.S3PublicEndpoint} {
		if v == "" {
			continue
		}
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
			bad("%s=%q: want an absolute http(s) URL such as https://s3.eu-west-1.amazonaws.com", name, v)
		}
	}
	if c.S3PublicEndpoint != "" && c.S3Endpoint == "" && !c.DevMode {
		bad("S3_PUBLIC_ENDPOINT is set without S3_ENDPOINT")
	}
	if c.S3Bucket != "" && !c.PrivateS3() {
		if c.S3AccessKeyID == "" || c.S3SecretAccessKey == "" {
			bad("S3_BUCKET=%q: set S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY too", c.S3Bucket)
		}
	}
	if (c.S3Endpoint != "" || c.S3AccessKeyID != "") && c.S3Bucket == "" {
		bad("S3_ENDPOINT or S3_ACCESS_KEY_ID is set without S3_BUCKET")
	}
	if c.S3Region == "" {
		bad("S3_REGION is empty")
	}
	if c.UploadMaxBytes < 1 || c.UploadMaxBytes > maxUploadBytes {
		bad("UPLOAD_MAX_BYTES=%d: want 1 to %d (5 GiB, the largest object S3 copies in one call)", c.UploadMaxBytes, int64(maxUploadBytes))
	}
	if c.OrgStorageQuotaBytes < 1 {
		bad("ORG_STORAGE_QUOTA_BYTES=%d: must be positive", c.OrgStorageQuotaBytes)
	}
	if c.S3DevAddr != "" {
		if _, _, err := net.SplitHostPort(c.S3DevAddr); err != nil {
			bad("S3_DEV_ADDR=%q: want host:port (%v)", c.S3DevAddr, err)
		}
	}
	if c.UploadTTL < time.Minute || c.UploadTTL > 7*24*time.Hour {
		bad("UPLOAD_TTL=%s: want 1m to 168h (a presigned URL lives at most 7 days)", c.UploadTTL)
	}
	// A presigned URL's lifetime is written in whole seconds.
	if c.UploadURLTTL < time.Minute || c.UploadURLTTL > c.UploadTTL || c.UploadURLTTL%time.Second != 0 {
		bad("UPLOAD_URL_TTL=%s: want whole seconds from 1m to UPLOAD_TTL (%s)", c.UploadURLTTL, c.UploadTTL)
	}
	return errs
}

// parser collects every malformed variable instead of stopping at the first.
type parser struct {
	getenv func(string) string
	errs   []error
}

// str reads a variable, or its default (the settings table) when it is
// unset or blank.
func (p *parser) str(name string) string {
	if v := strings.TrimSpace(p.getenv(name)); v != "" {
		return v
	}
	return defaults[name]
}

// pem reads a PEM text, given in the variable itself or, when it does not
// start with "-----BEGIN", as the path of a file holding it.
func (p *parser) pem(name string) []byte {
	v := p.str(name)
	if v == "" || strings.HasPrefix(v, "-----BEGIN") {
		return []byte(v)
	}
	b, err := os.ReadFile(v)
	if err != nil {
		p.errs = append(p.errs, fmt.Errorf("%s: neither a PEM text nor a readable file: %v", name, err))
	}
	return b
}

// list reads a comma-separated list; one with no item is the default's.
func (p *parser) list(name string) []string {
	if out := splitList(p.getenv(name)); len(out) > 0 {
		return out
	}
	return splitList(defaults[name])
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, strings.TrimRight(s, "/"))
		}
	}
	return out
}

// prefixes reads a comma-separated list of CIDRs; a bare address is a
// network of that one address.
func (p *parser) prefixes(name string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range p.list(name) {
		if !strings.Contains(s, "/") {
			addr, err := netip.ParseAddr(s)
			if err != nil {
				p.errs = append(p.errs, fmt.Errorf("%s: %q is neither a CIDR such as 10.0.0.0/8 nor an IP address", name, s))
				continue
			}
			out = append(out, netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen()))
			continue
		}
		prefix, err := netip.ParsePrefix(s)
		if err != nil {
			p.errs = append(p.errs, fmt.Errorf("%s: %q is not a CIDR such as 10.0.0.0/8", name, s))
			continue
		}
		if prefix.Addr().Is4In6() {
			prefix = netip.PrefixFrom(prefix.Addr().Unmap(), max(prefix.Bits()-96, 0))
		}
		out = append(out, prefix.Masked())
	}
	return out
}

// The typed readers fall back to the default after an error, so that one
// bad variable is reported once, not again by the checks of its value.

func (p *parser) boolean(name string) bool {
	v := p.str(name)
	b, err := strconv.ParseBool(v)
	if err != nil {
		p.errs = append(p.errs, fmt.Errorf("%s=%q: want true or false", name, v))
		b, _ = strconv.ParseBool(defaults[name])
	}
	return b
}

func (p *parser) duration(name string) time.Duration {
	v := p.str(name)
	d, err := time.ParseDuration(v)
	if err != nil {
		p.errs = append(p.errs, fmt.Errorf("%s=%q: want a duration such as 30m or 24h", name, v))
		d, _ = time.ParseDuration(defaults[name])
	}
	return d
}

func (p *parser) int64(name string) int64 {
	v := p.str(name)
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		p.errs = append(p.errs, fmt.Errorf("%s=%q: want an integer", name, v))
		n, _ = strconv.ParseInt(defaults[name], 10, 64)
	}
	return n
}

// percent reads a share such as 1% or 0.5% into basis points.
func (p *parser) percent(name string) int64 {
	v := p.str(name)
	bp, err := deposit.ParsePercent(v)
	if err != nil {
		p.errs = append(p.errs, fmt.Errorf("%s=%v", name, err))
		bp, _ = deposit.ParsePercent(defaults[name])
	}
	return bp
}

func (p *parser) integer(name string) int {
	return int(p.int64(name))
}

// int32 reads a 32-bit integer: a larger one is an error, never cut down
// to 32 bits (4294967298 would otherwise be 2).
func (p *parser) int32(name string) int32 {
	n := p.int64(name)
	if n < math.MinInt32 || n > math.MaxInt32 {
		p.errs = append(p.errs, fmt.Errorf("%s=%d: out of range", name, n))
		d, _ := strconv.ParseInt(defaults[name], 10, 32)
		return int32(d)
	}
	return int32(n)
}

// DepositBounds is the configured range of a deposit request.
func (c Config) DepositBounds() deposit.Bounds {
	return deposit.Bounds{MinMinor: c.DepositMinMinor, MaxMinor: c.DepositMaxMinor}
}
