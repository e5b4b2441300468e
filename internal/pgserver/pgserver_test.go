package pgserver_test

import (
	"context"
	"os"
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
