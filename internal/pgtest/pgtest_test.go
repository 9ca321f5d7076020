package pgtest_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/gentlecrawl/gentlecrawl/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestDatabases: each DB is a database of its own on the shared server,
// reachable on loopback, empty, and written to independently.
func TestDatabases(t *testing.T) {
	a, b := pgtest.DB(t), pgtest.DB(t)
	if a == b {
		t.Fatalf("two databases with one DSN: %s", a)
	}
	if !strings.HasPrefix(a, "postgres://postgres@127.0.0.1:") || !strings.HasSuffix(a, "?sslmode=disable") {
		t.Errorf("DSN = %q", a)
	}
	ctx := t.Context()
	ca, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close(ctx)
	cb, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close(ctx)
	if _, err := ca.Exec(ctx, "CREATE TABLE t (x int); INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := ca.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 1 {
		t.Fatalf("count = %d, %v", n, err)
	}
	if _, err := cb.Exec(ctx, "SELECT * FROM t"); err == nil {
		t.Error("a table of one test's database is visible in another's")
	}
	var addr string
	if err := ca.QueryRow(ctx, "SELECT current_setting('listen_addresses')").Scan(&addr); err != nil || addr != "127.0.0.1" {
		t.Errorf("listen_addresses = %q, %v; want loopback only", addr, err)
	}
	var fsync string
	if err := ca.QueryRow(ctx, "SELECT current_setting('fsync')").Scan(&fsync); err != nil || fsync != "off" {
		t.Errorf("fsync = %q, %v; want off for tests", fsync, err)
	}
}

// TestCPUTime: the server's processor time grows with the work it does.
func TestCPUTime(t *testing.T) {
	s := pgtest.Require(t)
	before, err := s.CPUTime()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(t.Context(), pgtest.DB(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	var n int64
	if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM generate_series(1, 3000000)").Scan(&n); err != nil {
		t.Fatal(err)
	}
	after, err := s.CPUTime()
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Errorf("CPU time %v then %v: the query's time is not counted", before, after)
	}
}

// TestStartStop: a server of its own, durable, stopped and removed: its
// directory is gone and its port refuses connections.
func TestStartStop(t *testing.T) {
	pgtest.Require(t)
	s, err := pgtest.Start(t.Context(), pgtest.Config{Durable: true})
	if err != nil {
		t.Fatal(err)
	}
	dsn, err := s.CreateDB(t.Context())
	if err != nil {
		s.Stop()
		t.Fatal(err)
	}
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		s.Stop()
		t.Fatal(err)
	}
	var fsync string
	err = conn.QueryRow(t.Context(), "SELECT current_setting('fsync')").Scan(&fsync)
	conn.Close(t.Context())
	if err != nil || fsync != "on" {
		t.Errorf("durable server: fsync = %q, %v", fsync, err)
	}
	if err := s.DropDB(t.Context(), dsn); err != nil {
		t.Error(err)
	}
	dir := s.Dir()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the server's directory is still there: %v", err)
	}
	if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(s.Port())); err == nil {
		c.Close()
		t.Error("the port still accepts connections after Stop")
	}
	if _, err := pgx.Connect(context.Background(), dsn); err == nil {
		t.Error("connected after Stop")
	}
}

// TestDirSettings: the server's directory is made in Config.Dir, and
// Config.Settings reach the server.
func TestDirSettings(t *testing.T) {
	pgtest.Require(t)
	// Not t.TempDir: the server may run as another user, who must reach it.
	parent, err := os.MkdirTemp("", "pgtest-parent-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(parent)
	if err := os.Chmod(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := pgtest.Start(t.Context(), pgtest.Config{Dir: parent, Settings: []string{"work_mem=7MB"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if filepath.Dir(s.Dir()) != parent {
		t.Errorf("the server's directory %s is not in %s", s.Dir(), parent)
	}
	conn, err := pgx.Connect(t.Context(), s.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	var mem string
	if err := conn.QueryRow(t.Context(), "SELECT current_setting('work_mem')").Scan(&mem); err != nil || mem != "7MB" {
		t.Errorf("work_mem = %q, %v; want the 7MB given", mem, err)
	}
}

func TestBinDir(t *testing.T) {
	dir, err := pgtest.BinDir()
	if errors.Is(err, pgtest.ErrNoPostgres) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"initdb", "postgres"} {
		if _, err := os.Stat(dir + "/" + p); err != nil {
			t.Error(err)
		}
	}
}

// TestRestart: a server of its own, restarted with a fast then an
// immediate shutdown, comes back on the same port with its data: what a
// commit that waited for its flush wrote survives both. A connection of
// before a restart is broken; a new one works.
func TestRestart(t *testing.T) {
	s := pgtest.Own(t, pgtest.Config{})
	ctx := t.Context()
	dsn, err := s.CreateDB(ctx)
	if err != nil {
		t.Fatal(err)
	}
	port := s.Port()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	// The test server runs with synchronous_commit off: this session's
	// commits wait for their flush, as a durable server's do.
	if _, err := conn.Exec(ctx, "SET synchronous_commit = on; CREATE TABLE t (x int)"); err != nil {
		t.Fatal(err)
	}
	for i, mode := range []string{pgtest.Fast, pgtest.Immediate} {
		if _, err := conn.Exec(ctx, "INSERT INTO t VALUES ($1)", i); err != nil {
			t.Fatal(err)
		}
		if err := s.Restart(ctx, mode); err != nil {
			t.Fatalf("%s restart: %v", mode, err)
		}
		if s.Port() != port {
			t.Errorf("%s restart: port %d, was %d", mode, s.Port(), port)
		}
		if _, err := conn.Exec(ctx, "SELECT 1"); err == nil {
			t.Errorf("%s restart: a connection of before it still works", mode)
		}
		conn.Close(ctx)
		if conn, err = pgx.Connect(ctx, dsn); err != nil {
			t.Fatalf("%s restart: %v", mode, err)
		}
		if _, err := conn.Exec(ctx, "SET synchronous_commit = on"); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != i+1 {
			t.Errorf("%s restart: %d rows, %v; want the %d committed", mode, n, err, i+1)
		}
	}
	conn.Close(ctx)
	if err := s.Restart(ctx, "smart"); err == nil {
		t.Error("Restart with an unknown mode succeeded")
	}
}
