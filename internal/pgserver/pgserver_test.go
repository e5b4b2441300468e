package pgserver_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"creativeapi/internal/pgserver"
)

// connect tries url and reports whether the cluster let it in.
func connect(t *testing.T, url string) error {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err == nil {
		conn.Close(context.Background())
	}
	return err
}

// without returns url with its password replaced (or removed when "").
func withPassword(t *testing.T, url, password string) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	userinfo := pgserver.SuperUser
	if password != "" {
		userinfo += ":" + password
	}
	return strings.Replace(url, pgserver.SuperUser+":"+cfg.Password, userinfo, 1)
}

func start(t *testing.T, dir string) *pgserver.Server {
	t.Helper()
	srv, err := pgserver.Start(context.Background(), pgserver.Options{DataDir: dir, Throwaway: true})
	if err != nil {
		t.Fatal(err)
	}
	// As root the cluster may live outside dir (see Start).
	t.Cleanup(func() { _ = srv.Stop(); _ = os.RemoveAll(srv.DataDir) })
	return srv
}

func TestThePrivateClusterLetsInOnlyItsOwnersPassword(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "pg")
	srv := start(t, dir)
	defer srv.Stop()
	if err := connect(t, srv.URL("postgres")); err != nil {
		t.Fatalf("with the cluster's password: %v", err)
	}
	for name, url := range map[string]string{
		"no password":    withPassword(t, srv.URL("postgres"), ""),
		"wrong password": withPassword(t, srv.URL("postgres"), "guess"),
		"another role":   strings.Replace(srv.URL("postgres"), pgserver.SuperUser+":", "postgres:", 1),
	} {
		if err := connect(t, url); err == nil {
			t.Errorf("%s: connected", name)
		}
	}
	hba, err := os.ReadFile(filepath.Join(srv.DataDir, "pg_hba.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(hba), "trust") || strings.Contains(string(hba), "\nlocal") {
		t.Errorf("pg_hba.conf trusts connections:\n%s", hba)
	}
	fi, err := os.Stat(filepath.Join(srv.DataDir, "creativeapi.password"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("password file: %v %v, want mode 0600", fi, err)
	}
}

func TestAClusterThatTrustedEveryConnectionGetsAPasswordAtItsNextStart(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "pg")
	srv := start(t, dir)
	first := srv.Password()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	// As clusters were made before passwords were required.
	if err := os.Remove(filepath.Join(srv.DataDir, "creativeapi.password")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(srv.DataDir, "pg_hba.conf"), []byte("host all all 127.0.0.1/32 trust\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv = start(t, dir)
	defer srv.Stop()
	if srv.Password() == first || srv.Password() == "" {
		t.Fatalf("password %q after the upgrade, was %q", srv.Password(), first)
	}
	if err := connect(t, withPassword(t, srv.URL("postgres"), "")); err == nil {
		t.Fatal("connected without a password")
	}
	if err := connect(t, srv.URL("postgres")); err != nil {
		t.Fatalf("with the new password: %v", err)
	}
}

func TestARestartedClusterKeepsItsPassword(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "pg")
	srv := start(t, dir)
	first := srv.Password()
	_ = srv.Stop()
	srv = start(t, dir)
	defer srv.Stop()
	if srv.Password() != first {
		t.Fatalf("password changed across a restart")
	}
	if err := connect(t, srv.URL("postgres")); err != nil {
		t.Fatal(err)
	}
}

// TestTheReadinessWaitAcceptsOnlyTheClusterItStarted: when the port a
// start chose is answered by another cluster (a lost race for the port),
// the wait must not take it for ours, even when it knows our password (a
// copied data directory): it serves another data directory, or its
// postmaster is not the process we started.
func TestTheReadinessWaitAcceptsOnlyTheClusterItStarted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := start(t, filepath.Join(t.TempDir(), "pg"))
	if err := pgserver.IsOurs(ctx, srv.DataDir, srv.Port, srv.Password(), processOf(t, srv.PID())); err != nil {
		t.Fatalf("the cluster itself: %v", err)
	}
	other := exec.Command("sleep", "60")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	tests := []struct {
		name    string
		dataDir string
		cmd     *exec.Cmd
	}{
		{"another data directory answers", srv.DataDir + "-copy", processOf(t, srv.PID())},
		{"another postmaster holds the data directory", srv.DataDir, other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := pgserver.IsOurs(ctx, tt.dataDir, srv.Port, srv.Password(), tt.cmd); err == nil {
				t.Fatal("accepted as ours")
			}
		})
	}
}

// processOf is a started command for the running process pid.
func processOf(t *testing.T, pid int) *exec.Cmd {
	t.Helper()
	p, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	return &exec.Cmd{Process: p}
}
