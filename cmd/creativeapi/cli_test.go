package main

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"creativeapi"
	"creativeapi/internal/config"
)

// runBare runs args with an empty environment (no DATABASE_URL, no
// DEV_MODE): whatever needs configuration or a database fails.
func runBare(args ...string) (stdout, stderr string, err error) {
	var out, errw bytes.Buffer
	err = run(context.Background(), args, func(string) string { return "" }, strings.NewReader(""), &out, &errw)
	return out.String(), errw.String(), err
}

func TestEveryCommandHelps(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args    []string
		command string
	}{
		{[]string{"serve", "--help"}, "serve"},
		{[]string{"serve", "--migrate", "-h"}, "serve"},
		{[]string{"migrate", "--help"}, "migrate"},
		{[]string{"seed", "-h"}, "seed"},
		{[]string{"users", "--help"}, "users"},
		{[]string{"users", "create", "--help"}, "users"},
		{[]string{"users", "create", "--bogus", "--help"}, "users"},
		{[]string{"users", "set-password", "-help"}, "users"},
		{[]string{"orgs", "--help"}, "orgs"},
		{[]string{"orgs", "add-member", "-h"}, "orgs"},
		{[]string{"transfers", "--help"}, "transfers"},
		{[]string{"transfers", "settle", "--help"}, "transfers"},
		{[]string{"transfers", "list", "-h"}, "transfers"},
		{[]string{"devchain", "--help"}, "devchain"},
		{[]string{"devchain", "pay", "-h"}, "devchain"},
		{[]string{"dev", "status", "--help"}, "dev"},
		{[]string{"version", "--help"}, "version"},
		{[]string{"approval", "verify", "--help"}, "approval"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			stdout, stderr, err := runBare(tt.args...)
			if err != nil || stderr != "" {
				t.Fatalf("err %v, stderr %q; want the usage and no error", err, stderr)
			}
			if stdout != usages[tt.command] {
				t.Errorf("stdout:\n%s\nwant the usage of %s:\n%s", stdout, tt.command, usages[tt.command])
			}
		})
	}
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		if stdout, _, err := runBare(args...); err != nil || stdout != usage {
			t.Errorf("%v: %v\n%s", args, err, stdout)
		}
	}
	// Every command's usage is reachable.
	for name, u := range usages {
		if !strings.Contains(usage, "\n  "+name+" ") {
			t.Errorf("the top-level usage does not list %s", name)
		}
		if !strings.Contains(u, "creativeapi "+name) {
			t.Errorf("the usage of %s does not name it:\n%s", name, u)
		}
	}
}

func TestUsageErrorsExitTwiceWithOneMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"nope"}, `unknown command "nope"`},
		{[]string{"users"}, "users: missing subcommand"},
		{[]string{"users", "delete"}, `users: unknown subcommand "delete"`},
		{[]string{"users", "list", "--bogus"}, "users list: flag provided but not defined: -bogus"},
		// A bad flag is reported before the missing DATABASE_URL.
		{[]string{"migrate", "--bogus"}, "migrate: flag provided but not defined: -bogus"},
		{[]string{"migrate", "extra"}, `migrate: unexpected argument "extra"`},
		{[]string{"serve", "--nope"}, "serve: flag provided but not defined: -nope"},
		{[]string{"seed", "--creatives", "x"}, `seed: invalid value "x" for flag -creatives`},
		{[]string{"transfers", "settle"}, "transfers settle: missing transfer ID"},
		{[]string{"transfers", "settle", "x"}, `transfers settle: "x" is not a transfer ID`},
		{[]string{"transfers", "settle", "0b1e3c1e-8d4a-4c57-9a3e-2b7d5e9f0c14", "--credit", "--reject", "--note", "x"}, "transfers settle: pick one of --credit, --refund and --reject"},
		{[]string{"transfers", "settle", "0b1e3c1e-8d4a-4c57-9a3e-2b7d5e9f0c14", "--note", "x"}, "transfers settle: pick one of --credit, --refund and --reject"},
		{[]string{"transfers", "settle", "0b1e3c1e-8d4a-4c57-9a3e-2b7d5e9f0c14", "--credit", "--refund-tx", strings.Repeat("ab", 32), "--note", "x"}, "transfers settle: --refund-tx takes the 64 hex digits of a transaction, with --refund"},
		{[]string{"transfers", "settle", "0b1e3c1e-8d4a-4c57-9a3e-2b7d5e9f0c14", "--refund", "--refund-tx", "abc", "--note", "x"}, "transfers settle: --refund-tx takes the 64 hex digits of a transaction, with --refund"},
		{[]string{"transfers", "list", "--limit", "0"}, "transfers list: --limit: want 1 to 1000"},
		{[]string{"devchain"}, "devchain: missing subcommand"},
		{[]string{"devchain", "pay"}, "devchain pay: give one of --amount-minor"},
		{[]string{"devchain", "pay", "--amount", "1", "--amount-minor", "1000000"}, "devchain pay: give one of --amount-minor"},
		{[]string{"devchain", "pay", "--amount-minor", "1.5"}, `devchain pay: --amount-minor "1.5"`},
		{[]string{"devchain", "pay", "--amount", "1.2345678"}, `devchain pay: --amount "1.2345678"`},
		{[]string{"dev", "stats"}, `dev: unknown subcommand "stats"`},
		{[]string{"version", "x"}, `version: unexpected argument "x"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			stdout, stderr, err := runBare(tt.args...)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q; want one line starting %q", err, tt.want)
			}
			if code := exitCode(err); code != 2 {
				t.Errorf("exit code %d, want 2", code)
			}
			// main prints the error: run itself prints nothing, so the
			// message appears once.
			if stdout != "" || stderr != "" {
				t.Errorf("run printed stdout %q, stderr %q", stdout, stderr)
			}
		})
	}
	// Failures that are not usage errors exit 1.
	if _, _, err := runBare("migrate"); err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "DATABASE_URL is not set") {
		t.Errorf("migrate without DATABASE_URL: %v (exit %d), want the configuration error, exit 1", err, exitCode(err))
	}
}

func TestVersionPrintsTheBuildAndTheAPIVersion(t *testing.T) {
	t.Parallel()
	want := regexp.MustCompile(`^creativeapi \S+ commit \S+ api ` + regexp.QuoteMeta(apiVersion(creativeapi.OpenAPIYAML)) + "\n$")
	for _, args := range [][]string{{"version"}, {"--version"}} {
		stdout, _, err := runBare(args...)
		if err != nil || !want.MatchString(stdout) {
			t.Errorf("%v: %v, %q; want %s", args, err, stdout, want)
		}
	}
	if v := apiVersion(creativeapi.OpenAPIYAML); !regexp.MustCompile(`^\d+\.\d+\.\d+`).MatchString(v) {
		t.Errorf("apiVersion = %q, want info.version of openapi.yaml", v)
	}
	if v := apiVersion([]byte("openapi: 3.0.3\ninfo:\n  title: x\n  version: \"2.1.0\"\npaths: {}\n")); v != "2.1.0" {
		t.Errorf("apiVersion of a quoted version = %q", v)
	}
}

// TestServeUsageListsEverySettingWithItsDefault: serve --help names every
// variable the configuration reads, each with the default Load applies
// (config.Settings, the one table of them), so neither a new variable nor
// a changed default can be left out.
func TestServeUsageListsEverySettingWithItsDefault(t *testing.T) {
	t.Parallel()
	read := map[string]bool{}
	_, _ = config.Load(func(k string) string { read[k] = true; return "" })
	var missing []string
	for k := range read {
		if k == "LISTEN_PID" { // only with LISTEN_FDS, which is listed
			continue
		}
		if !regexp.MustCompile(`\b` + k + `\b`).MatchString(serveUsage) {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	if len(read) < 30 || len(missing) > 0 {
		t.Errorf("serve --help misses %v (of %d variables read)", missing, len(read))
	}
	for _, s := range config.Settings() {
		want := "\n  " + s.Name + " "
		if s.Default != "" {
			want = "\n  " + s.Name + "=" + s.Default + "\n"
			if !strings.Contains(serveUsage, want) {
				want = "\n  " + s.Name + "=" + s.Default + " "
			}
		}
		if !strings.Contains(serveUsage, want) {
			t.Errorf("serve --help does not list %s with its default %q", s.Name, s.Default)
		}
	}
	if !strings.Contains(serveUsage, fmt.Sprintf("GOGC=%d GOMEMLIMIT=%dMiB", defaultGCPercent, defaultMemoryLimit>>20)) {
		t.Errorf("serve --help does not give the Go runtime's defaults serve sets")
	}
}
