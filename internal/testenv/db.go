// Package testenv is the test harness: a throwaway PostgreSQL per test
// binary, a migrated template database, a fresh database per test cloned
// from it, and an HTTP client that validates every response against
// openapi.yaml. Tests that use it live in external _test packages.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"creativeapi/internal/pgserver"
	"creativeapi/internal/store"
)

// cluster is the package's database server, set up by Main.
var cluster struct {
	adminURL string
	urlFor   func(name string) string
	template string
}

// Main runs a package's tests against a throwaway PostgreSQL: the one at
// TEST_DATABASE_URL (an admin URL) when set, else a private cluster started
// for this test binary. Call it from TestMain.
func Main(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	ctx := context.Background()
	if admin := os.Getenv("TEST_DATABASE_URL"); admin != "" {
		cfg, err := pgx.ParseConfig(admin)
		if err != nil {
			return 0, err
		}
		cluster.adminURL = admin
		cluster.urlFor = func(name string) string {
			return (&url.URL{Scheme: "postgres", User: url.UserPassword(cfg.User, cfg.Password),
				Host: fmt.Sprintf("%s:%d", cfg.Host, cfg.Port), Path: "/" + name, RawQuery: "sslmode=disable"}).String()
		}
	} else {
		dir, err := os.MkdirTemp("", "creativeapi-test-pg-")
		if err != nil {
			return 0, err
		}
		defer os.RemoveAll(dir)
		srv, err := pgserver.Start(ctx, pgserver.Options{DataDir: dir + "/data", Throwaway: true})
		if err != nil {
			return 0, err
		}
		defer os.RemoveAll(srv.DataDir) // as root, the cluster may live outside dir
		defer srv.Stop()
		cluster.adminURL = srv.URL("postgres")
		cluster.urlFor = srv.URL
	}
	cluster.template = "tmpl_" + randomName()
	if err := createTemplate(ctx); err != nil {
		return 0, err
	}
	defer dropDatabase(context.Background(), cluster.template)
	defer stopObjects()
	defer stopMail()
	code := m.Run()
	return code, writeProven()
}

func createTemplate(ctx context.Context) error {
	if err := exec(ctx, "CREATE DATABASE "+cluster.template); err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, cluster.urlFor(cluster.template))
	if err != nil {
		return err
	}
	defer pool.Close()
	_, err = store.Migrate(ctx, pool, slog.New(slog.NewTextHandler(io.Discard, nil)))
	return err
}

// DB is one test's own database.
type DB struct {
	URL   string
	Pool  *pgxpool.Pool
	Store *store.Store
}

// PoolOptions tune NewDB's pool.
type PoolOptions struct {
	Tracer      pgx.QueryTracer
	MaxConns    int32
	LockTimeout time.Duration
}

// NewDB clones the migrated template into a database of the test's own,
// dropped when the test ends.
func NewDB(t testing.TB, opts ...PoolOptions) *DB {
	t.Helper()
	ctx := context.Background()
	name := "t_" + randomName()
	if err := exec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", name, cluster.template)); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	var o PoolOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	url := cluster.urlFor(name)
	pool, err := openPool(ctx, url, o)
	if err != nil {
		t.Fatalf("open test database: %v", err)
	}
	t.Cleanup(func() {
		pool.Close()
		dropDatabase(context.Background(), name)
	})
	return &DB{URL: url, Pool: pool, Store: store.New(pool)}
}

// openPool opens a pool on url as the tests' servers use one; o's zero
// fields take the defaults (20 connections, a 5 s lock timeout).
func openPool(ctx context.Context, url string, o PoolOptions) (*pgxpool.Pool, error) {
	if o.MaxConns == 0 {
		o.MaxConns = 20
	}
	if o.LockTimeout == 0 {
		o.LockTimeout = 5 * time.Second
	}
	return store.Open(ctx, url, store.PoolConfig{
		ConnectTimeout: 5 * time.Second, StatementTimeout: 30 * time.Second, LockTimeout: o.LockTimeout,
		MaxConns: o.MaxConns, Tracer: o.Tracer,
	})
}

// AdminURL is the URL of the cluster's maintenance database.
func AdminURL() string { return cluster.adminURL }

func dropDatabase(ctx context.Context, name string) {
	_ = exec(ctx, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name))
}

func exec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, cluster.adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

func randomName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// NewEmptyDB creates a database with no schema at all, dropped when the test ends.
func NewEmptyDB(t testing.TB) *DB {
	t.Helper()
	ctx := context.Background()
	name := "e_" + randomName()
	if err := exec(ctx, "CREATE DATABASE "+name+" TEMPLATE template0"); err != nil {
		t.Fatalf("create empty database: %v", err)
	}
	pool, err := pgxpool.New(ctx, cluster.urlFor(name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pool.Close()
		dropDatabase(context.Background(), name)
	})
	return &DB{URL: cluster.urlFor(name), Pool: pool, Store: store.New(pool)}
}

// NewAdminConn connects to the cluster's maintenance database, for tests
// that act on a database from outside (outages, forced disconnects).
func NewAdminConn(t testing.TB) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), cluster.adminURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}
