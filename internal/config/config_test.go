package config_test

import (
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"creativeapi/internal/approval"
	"creativeapi/internal/config"
	"creativeapi/internal/deposit"
	"creativeapi/internal/tron"
)

func load(vars map[string]string) (config.Config, error) {
	return config.Load(func(k string) string { return vars[k] })
}

// TestAnApprovalSigningKeyMustParse: a key that is no Ed25519 private
// key, or earlier keys that are none, stop the configuration (serve then
// refuses to start without a key in production: cmd/creativeapi).
func TestAnApprovalSigningKeyMustParse(t *testing.T) {
	t.Parallel()
	key, err := approval.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	rsa := "-----BEGIN PRIVATE KEY-----\nMIIBVQIBADANBgkqhkiG9w0BAQEFAASCAT8wggE7AgEAAkEAq7BFUpkGp3+LQmlQ\n-----END PRIVATE KEY-----\n"
	for _, tc := range []struct {
		rule string
		vars map[string]string
		want string
	}{
		{"a key that is no PEM refuses", map[string]string{"APPROVAL_SIGNING_KEY": "-----BEGIN nothing"}, "want one Ed25519 private key"},
		{"a key that is not Ed25519 refuses", map[string]string{"APPROVAL_SIGNING_KEY": rsa}, "APPROVAL_SIGNING_KEY"},
		{"a missing key file refuses", map[string]string{"APPROVAL_SIGNING_KEY": "/nonexistent/key.pem"}, "neither a PEM text nor a readable file"},
		{"a previous key that does not parse refuses", map[string]string{"APPROVAL_SIGNING_KEY_PREVIOUS": "junk"}, "APPROVAL_SIGNING_KEY_PREVIOUS"},
		{"the configuration needs none (serve does)", map[string]string{"APPROVAL_SIGNING_KEY": ""}, ""},
		{"a key in a file is read", map[string]string{"APPROVAL_SIGNING_KEY": writeKey(t, key)}, ""},
		{"a key in the variable is read", map[string]string{"APPROVAL_SIGNING_KEY": string(key), "APPROVAL_SIGNING_KEY_PREVIOUS": string(key)}, ""},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			_, err := load(tc.vars)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func writeKey(t *testing.T, key []byte) string {
	path := t.TempDir() + "/key.pem"
	if err := os.WriteFile(path, key, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTheDefaultsAreProductionOnes(t *testing.T) {
	t.Parallel()
	c, err := load(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.DevMode || !c.CookieSecure || c.TreasuryAddress != "" || len(c.TrustedProxies) != 0 || len(c.AllowedOrigins) != 0 {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestTheDevelopmentTreasuryNeedsDevMode(t *testing.T) {
	t.Parallel()
	if _, err := load(map[string]string{"TREASURY_ADDRESS": tron.DevTreasuryAddress}); err == nil ||
		!strings.Contains(err.Error(), "is the development treasury") {
		t.Fatalf("without DEV_MODE: %v", err)
	}
	if _, err := load(map[string]string{"TREASURY_ADDRESS": tron.DevTreasuryAddress, "DEV_MODE": "true"}); err != nil {
		t.Fatalf("with DEV_MODE: %v", err)
	}
	if _, err := load(map[string]string{"DEV_MODE": "maybe"}); err == nil || !strings.Contains(err.Error(), `DEV_MODE="maybe": want true or false`) {
		t.Fatalf("a bad DEV_MODE: %v", err)
	}
}

func TestTrustedProxiesAreNetworks(t *testing.T) {
	t.Parallel()
	c, err := load(map[string]string{"TRUSTED_PROXIES": " 10.0.0.0/8, 192.168.1.7 ,fd00::/8, ::ffff:172.16.0.0/108, 10.1.2.3/8"})
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.7/32"), netip.MustParsePrefix("fd00::/8"),
		netip.MustParsePrefix("172.16.0.0/12"), netip.MustParsePrefix("10.0.0.0/8"),
	}
	if !slices.Equal(c.TrustedProxies, want) {
		t.Fatalf("got %v, want %v", c.TrustedProxies, want)
	}
	_, err = load(map[string]string{"TRUSTED_PROXIES": "10.0.0.0/33,proxy.internal"})
	if err == nil || !strings.Contains(err.Error(), `"10.0.0.0/33" is not a CIDR`) || !strings.Contains(err.Error(), `"proxy.internal" is neither a CIDR`) {
		t.Fatalf("bad entries: %v", err)
	}
}

func TestNoNumberIsCutToFitWhereItIsStored(t *testing.T) {
	t.Parallel()
	for name, tt := range map[string]struct{ variable, value, want string }{
		"a pool size past 32 bits is not 2":        {"DB_MAX_CONNS", "4294967298", "DB_MAX_CONNS=4294967298: out of range"},
		"a pool size past what PostgreSQL holds":   {"DB_MAX_CONNS", "100000", "DB_MAX_CONNS=100000: must be between 2 and 10000"},
		"confirmations past 32 bits are not 19":    {"DEPOSIT_CONFIRMATIONS", "4294967315", "DEPOSIT_CONFIRMATIONS=4294967315: must be between 1 and 10000"},
		"an open-deposit limit past 32 bits":       {"DEPOSIT_MAX_OPEN_PER_USER", "4294967301", "DEPOSIT_MAX_OPEN_PER_USER=4294967301: must be between 1 and 1000000"},
		"a session lifetime past 32-bit seconds":   {"SESSION_ABSOLUTE_TTL", "700000h", "SESSION_ABSOLUTE_TTL=700000h0m0s: at most 87600h0m0s (10 years)"},
		"an idempotency lifetime past 32-bit secs": {"IDEMPOTENCY_TTL", "600000h", "IDEMPOTENCY_TTL=600000h0m0s: at most 87600h0m0s (10 years)"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := load(map[string]string{tt.variable: tt.value})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}

func TestDepositBoundsAreTheDepositRules(t *testing.T) {
	t.Parallel()
	c, err := load(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.DepositBounds() != deposit.DefaultBounds() {
		t.Fatalf("default bounds %+v, want deposit.DefaultBounds() %+v", c.DepositBounds(), deposit.DefaultBounds())
	}
	for name, env := range map[string]map[string]string{
		"a minimum of zero":         {"DEPOSIT_MIN_MINOR": "0"},
		"a minimum off the cent":    {"DEPOSIT_MIN_MINOR": "10000001"},
		"a maximum below the floor": {"DEPOSIT_MIN_MINOR": "20000000", "DEPOSIT_MAX_MINOR": "10000000"},
		"a maximum past 10^18":      {"DEPOSIT_MAX_MINOR": "2000000000000000000"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := load(env)
			if err == nil || !strings.Contains(err.Error(), "DEPOSIT_MIN_MINOR=") {
				t.Fatalf("got %v, want the bounds refused", err)
			}
		})
	}
}

func TestTheListeningSocketIsHandedOverOnlyToItsProcess(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, fds, pid string
		want           bool
		err            bool
	}{
		{"no socket: listen on ADDR", "", "", false, false},
		{"one socket for any process", "1", "", true, false},
		{"one socket for this process", "1", strconv.Itoa(os.Getpid()), true, false},
		{"a socket for another process is not ours", "1", "1", false, false},
		{"more sockets than the server takes", "2", "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := load(map[string]string{"LISTEN_FDS": tt.fds, "LISTEN_PID": tt.pid})
			if (err != nil) != tt.err || err != nil && !strings.Contains(err.Error(), "LISTEN_FDS") {
				t.Fatalf("err = %v, want an error naming LISTEN_FDS: %v", err, tt.err)
			}
			if c.ListenFD != tt.want {
				t.Errorf("ListenFD = %v, want %v", c.ListenFD, tt.want)
			}
		})
	}
}

func TestTheObjectStoreIsNamedWholeOrNotAtAll(t *testing.T) {
	t.Parallel()
	c, err := load(nil)
	if err != nil || c.UploadsEnabled() || c.PrivateS3() {
		t.Fatalf("no S3_* outside DEV_MODE: uploads off; got %v, enabled %v", err, c.UploadsEnabled())
	}
	c, err = load(map[string]string{"DEV_MODE": "true"})
	if err != nil || !c.PrivateS3() || c.S3Bucket == "" || c.UploadMaxBytes != 2<<30 {
		t.Fatalf("DEV_MODE alone: the private store; got %v, %+v", err, c)
	}
	full := map[string]string{"S3_ENDPOINT": "https://s3.example.test", "S3_BUCKET": "b", "S3_ACCESS_KEY_ID": "k", "S3_SECRET_ACCESS_KEY": "s"}
	c, err = load(full)
	if err != nil || !c.UploadsEnabled() || c.PrivateS3() {
		t.Fatalf("a whole S3 configuration: %v", err)
	}
	for _, tc := range []struct {
		name string
		vars map[string]string
		want string
	}{
		{"a bucket without credentials", map[string]string{"S3_BUCKET": "b"}, "set S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY too"},
		{"an endpoint without a bucket", map[string]string{"S3_ENDPOINT": "https://s3.example.test"}, "without S3_BUCKET"},
		{"an endpoint that is no URL", map[string]string{"S3_ENDPOINT": "s3.example.test", "S3_BUCKET": "b", "S3_ACCESS_KEY_ID": "k", "S3_SECRET_ACCESS_KEY": "s"}, "S3_ENDPOINT=\"s3.example.test\": want an absolute http(s) URL"},
		{"an upload bound of zero", map[string]string{"UPLOAD_MAX_BYTES": "0"}, "UPLOAD_MAX_BYTES=0"},
		{"an upload bound past 5 GiB", map[string]string{"UPLOAD_MAX_BYTES": strconv.FormatInt(5<<30+1, 10)}, "UPLOAD_MAX_BYTES=5368709121"},
		{"a quota of zero", map[string]string{"ORG_STORAGE_QUOTA_BYTES": "0"}, "ORG_STORAGE_QUOTA_BYTES=0"},
		{"an upload TTL past the presigning limit", map[string]string{"UPLOAD_TTL": "200h"}, "UPLOAD_TTL=200h0m0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := load(tc.vars); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// TestEveryVariableLoadReadsIsASetting: the settings table (which serve
// --help prints and Load takes its defaults from) holds exactly the
// variables Load reads, each once, so a variable cannot be read with a
// default the table does not show.
func TestEveryVariableLoadReadsIsASetting(t *testing.T) {
	t.Parallel()
	read := map[string]bool{}
	if _, err := config.Load(func(k string) string { read[k] = true; return "" }); err != nil {
		t.Fatalf("the defaults do not load: %v", err)
	}
	delete(read, "LISTEN_PID") // read only beside LISTEN_FDS, which is a setting
	listed := map[string]bool{}
	for _, s := range config.Settings() {
		if listed[s.Name] {
			t.Errorf("%s is in the settings twice", s.Name)
		}
		listed[s.Name] = true
		if !read[s.Name] {
			t.Errorf("%s is a setting Load does not read", s.Name)
		}
	}
	for k := range read {
		if !listed[k] {
			t.Errorf("Load reads %s, which is not in the settings", k)
		}
	}
}

// TestTheRateLimitsAreReadFromTheEnvironment: 600 reads and 120 commands
// a minute by default, what the environment says otherwise (0: none), and
// a negative budget refused.
func TestTheRateLimitsAreReadFromTheEnvironment(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rule            string
		vars            map[string]string
		reads, commands int
		wantErr         string
	}{
		{"the defaults", nil, 600, 120, ""},
		{"the environment's", map[string]string{"RATE_LIMIT_COMMANDS_PER_MINUTE": "5", "RATE_LIMIT_READS_PER_MINUTE": "0"}, 0, 5, ""},
		{"a negative budget refuses", map[string]string{"RATE_LIMIT_COMMANDS_PER_MINUTE": "-1"}, 0, 0, "RATE_LIMIT_COMMANDS_PER_MINUTE=-1"},
	} {
		c, err := load(tc.vars)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: err = %v", tc.rule, err)
			}
			continue
		}
		if err != nil || c.RateLimitReadsPerMinute != tc.reads || c.RateLimitCommandsPerMinute != tc.commands {
			t.Errorf("%s: reads %d, commands %d, err %v", tc.rule, c.RateLimitReadsPerMinute, c.RateLimitCommandsPerMinute, err)
		}
	}
}

func TestDepositShortfallToleranceIsTheDepositRule(t *testing.T) {
	t.Parallel()
	c, err := load(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.DepositShortfallTolerance != deposit.DefaultTolerance() {
		t.Fatalf("default tolerance %+v, want deposit.DefaultTolerance() %+v", c.DepositShortfallTolerance, deposit.DefaultTolerance())
	}
	c, err = load(map[string]string{"DEPOSIT_SHORTFALL_TOLERANCE": "0.5%", "DEPOSIT_SHORTFALL_TOLERANCE_MAX_MINOR": "2000000"})
	if err != nil || c.DepositShortfallTolerance != (deposit.Tolerance{BasisPoints: 50, MaxMinor: 2_000_000}) {
		t.Fatalf("0.5%% capped at 2 USDT: %+v, %v", c.DepositShortfallTolerance, err)
	}
	for name, env := range map[string]map[string]string{
		"a float spelling": {"DEPOSIT_SHORTFALL_TOLERANCE": "1e-2"},
		"above 100%":       {"DEPOSIT_SHORTFALL_TOLERANCE": "101%"},
		"a negative cap":   {"DEPOSIT_SHORTFALL_TOLERANCE_MAX_MINOR": "-1"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := load(env); err == nil || !strings.Contains(err.Error(), "DEPOSIT_SHORTFALL_TOLERANCE") {
				t.Fatalf("got %v, want the tolerance refused", err)
			}
		})
	}
}
