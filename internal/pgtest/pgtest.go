// Package pgtest runs a throwaway PostgreSQL server for tests and
// benchmarks: the shared frontier (internal/frontier/postgres) is tested
// against the real thing, never a mock. It is for tests only: the product
// must not import it (deps_test.go).
//
// Start runs initdb into a new temporary directory — as the postgres user
// when the test runs as root, since the server refuses to run as root —
// and starts the server listening on 127.0.0.1 only, on a free port, with
// its Unix socket in the same directory. Stop shuts it down (a fast
// shutdown, as pg_ctl stop -m fast) and removes the directory; Restart
// stops it (fast, or immediate as in a crash) and starts it again on the
// same port and data, as clients see a restart of their database server.
// Each test gets a database of its own (CreateDB, or DB in a test).
//
// One server can serve a whole package's tests: call Main from TestMain,
// and Require and DB share one server, stopped when the tests end.
// Without Main they start a server per test.
//
// PostgreSQL must be installed (Debian's postgresql package; scripts/test
// installs it when run as root). Require and DB skip a test without it,
// unless the environment variable CI is set, where they fail it.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNoPostgres is returned when the PostgreSQL server programs are not
// installed.
var ErrNoPostgres = errors.New("pgtest: PostgreSQL is not installed (apt-get install -y postgresql; scripts/test installs it when run as root)")

// debianDirs is where Debian installs each major version's server
// programs, which are not on PATH.
const debianDirs = "/usr/lib/postgresql/*/bin"

// BinDir returns the directory holding initdb and postgres: the newest of
// Debian's /usr/lib/postgresql/VERSION/bin, or the directory initdb on PATH
// links to. It returns ErrNoPostgres when there is none.
func BinDir() (string, error) {
	dirs, _ := filepath.Glob(debianDirs)
	// Newest major version first: "16" sorts after "9" only as a number.
	slices.SortFunc(dirs, func(a, b string) int { return versionOf(b) - versionOf(a) })
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		dirs = append(dirs, filepath.Dir(p))
	}
	for _, d := range dirs {
		if executable(filepath.Join(d, "initdb")) && executable(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", ErrNoPostgres
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func executable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// Config changes how Start runs the server. The zero value is for tests.
type Config struct {
	// Durable keeps PostgreSQL's defaults for durability: fsync on, and
	// every commit waits for its WAL flush. By default a test server runs
	// with fsync=off, synchronous_commit=off and full_page_writes=off:
	// nothing it holds must survive a crash of the machine, and tests run
	// much faster. Benchmarks that report what a real server
	// does set it.
	Durable bool
	// Dir is the directory the server's temporary directory is made in;
	// empty means os.TempDir(). A benchmark whose database outgrows /tmp,
	// or that keeps its server beside its results, sets it.
	Dir string
	// Settings are server settings given to postgres after the defaults
	// ("name=value", as postgres -c takes them): a benchmark of millions
	// of rows sizes shared_buffers and max_wal_size as an operator would.
	Settings []string
}

// Server is a running PostgreSQL started by Start. Its methods are safe for
// concurrent use.
type Server struct {
	dir  string // temporary: the data directory, the socket, the log
	port int
	dbs  atomic.Int64 // databases created
	// How it was started, for Restart.
	bin  string
	cred *syscall.Credential
	cfg  Config

	mu   sync.Mutex    // cmd and done, which Restart replaces
	cmd  *exec.Cmd     // the postmaster
	done chan struct{} // closed when the server process has exited

	stopOnce sync.Once
	stopErr  error
}

// startTimeout bounds initdb and the server's start.
const startTimeout = 60 * time.Second

// Start runs initdb into a new temporary directory and starts the server.
// The caller must call Stop.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("pgtest: running as root, the server must run as the postgres user, which does not exist: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	// Not t.TempDir: its parent is private to the user running the test,
	// whom the postgres user may not be.
	dir, err := os.MkdirTemp(cfg.Dir, "pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	s := &Server{dir: dir, done: make(chan struct{}), bin: bin, cred: cred, cfg: cfg}
	fail := func(err error) (*Server, error) {
		if s.cmd != nil {
			s.Stop()
		} else {
			os.RemoveAll(dir)
		}
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fail(fmt.Errorf("pgtest: %w", err))
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"),
		"-D", data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C",
		// The cluster is thrown away: nothing to sync.
		"--no-sync")
	initdb.Env = serverEnv()
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("pgtest: initdb: %w\n%s", err, out))
	}
	for attempt := 0; ; attempt++ {
		port, err := freePort()
		if err == nil {
			err = s.launch(ctx, port, false)
		}
		if err == nil {
			return s, nil
		}
		// The free port picked may have been taken before the server
		// bound it: try another, a few times.
		if !errors.Is(err, errPortTaken) || attempt == 4 {
			return fail(err)
		}
	}
}

var errPortTaken = errors.New("pgtest: the port was taken")

// launch starts the server on port, its data directory the one in s.dir,
// and waits until it accepts connections. The server's output goes to the
// log, appended to it when again.
func (s *Server) launch(ctx context.Context, port int, again bool) error {
	args := []string{"-D", filepath.Join(s.dir, "data"), "-p", strconv.Itoa(port), "-k", s.dir,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "max_connections=200",
	}
	if !s.cfg.Durable {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	for _, kv := range s.cfg.Settings {
		args = append(args, "-c", kv)
	}
	logPath := filepath.Join(s.dir, "postgres.log")
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if again {
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	log, err := os.OpenFile(logPath, flags, 0o644)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer log.Close()
	var logged int64
	if st, err := log.Stat(); err == nil {
		logged = st.Size()
	}
	cmd := exec.Command(filepath.Join(s.bin, "postgres"), args...)
	cmd.Env = serverEnv()
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: s.cred,
		Setpgid:    true,
		// Should the test process die without stopping it, the server
		// shuts down at once (SIGQUIT: immediate shutdown) rather than
		// outlive it.
		Pdeathsig: syscall.SIGQUIT,
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	s.port = port
	// What this launch logged (a restart's log follows the last run's).
	output := func() string {
		out, _ := os.ReadFile(logPath)
		return string(out[min(int64(len(out)), logged):])
	}
	for {
		conn, err := pgx.Connect(ctx, s.DSN("postgres"))
		if err == nil {
			conn.Close(ctx)
			s.mu.Lock()
			s.cmd, s.done = cmd, done
			s.mu.Unlock()
			return nil
		}
		select {
		case <-done:
			out := output()
			if strings.Contains(out, "could not bind") || strings.Contains(out, "Address already in use") {
				return errPortTaken
			}
			return fmt.Errorf("pgtest: postgres exited: %v\n%s", cmd.ProcessState, out)
		case <-ctx.Done():
			cmd.Process.Signal(syscall.SIGQUIT)
			<-done
			return fmt.Errorf("pgtest: postgres did not accept connections in time (%v): %v\n%s", ctx.Err(), err, output())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Shutdown modes of Restart, as pg_ctl stop -m names them.
const (
	// Fast: open transactions rolled back, clients disconnected, a
	// checkpoint written (SIGINT).
	Fast = "fast"
	// Immediate: every server process quits at once, without a
	// checkpoint; the next start recovers from the log, as after a crash
	// of the server (SIGQUIT).
	Immediate = "immediate"
)

// Restart stops the server with a fast or an immediate shutdown (mode
// Fast or Immediate), waits until it has exited, and starts it again on
// the same port with the same data directory: what a client sees when the
// database server is restarted under it. It waits until the server
// accepts connections again. The port may have been taken meanwhile; it
// is tried again for a while before Restart gives up.
func (s *Server) Restart(ctx context.Context, mode string) error {
	sig := syscall.SIGINT
	switch mode {
	case Fast:
	case Immediate:
		sig = syscall.SIGQUIT
	default:
		return fmt.Errorf("pgtest: unknown shutdown mode %q", mode)
	}
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return errors.New("pgtest: Restart of a server not running")
	}
	cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(stopTimeout):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return errors.New("pgtest: postgres did not stop in time and was killed")
	}
	if mode == Immediate {
		// The postmaster is gone; its children quit on their own,
		// without it: wait until none holds the data directory.
		s.waitChildren(cmd.Process.Pid)
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	for {
		err := s.launch(ctx, s.port, true)
		if !errors.Is(err, errPortTaken) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pgtest: restart: port %d still taken: %w", s.port, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitChildren waits, for a while, until no process is left in the
// process group of the postmaster pid (its backends and workers).
func (s *Server) waitChildren(pid int) {
	for deadline := time.Now().Add(stopTimeout); time.Now().Before(deadline); {
		if err := syscall.Kill(-pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// serverEnv is the environment of initdb and the server: ours, without
// the PG variables that would change what they do.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") && !strings.HasPrefix(kv, "LC_") && !strings.HasPrefix(kv, "LANG") {
			env = append(env, kv)
		}
	}
	return append(env, "LC_ALL=C")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: no free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// CPUTime returns the processor time the server has used so far: its
// postmaster's and every backend's, live or exited, user and system. A
// benchmark divides it by the work done, a figure that other load on the
// machine does not change the way it changes a rate. Linux only (/proc).
func (s *Server) CPUTime() (time.Duration, error) {
	s.mu.Lock()
	pid := s.cmd.Process.Pid
	s.mu.Unlock()
	ticks, err := procTicks(pid, true)
	if err != nil {
		return 0, err
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("pgtest: %w", err)
	}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil || child == pid {
			continue
		}
		if ppid, err := procPPID(child); err == nil && ppid == pid {
			if t, err := procTicks(child, false); err == nil {
				ticks += t
			}
		}
	}
	// USER_HZ is 100 on every Linux that Go runs on.
	return time.Duration(ticks) * (time.Second / 100), nil
}

// procStat returns the fields of /proc/PID/stat after the command name.
func procStat(pid int) ([]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil, fmt.Errorf("pgtest: malformed /proc/%d/stat", pid)
	}
	return strings.Fields(string(b[i+1:])), nil
}

func procPPID(pid int) (int, error) {
	f, err := procStat(pid)
	if err != nil || len(f) < 2 {
		return 0, fmt.Errorf("pgtest: /proc/%d/stat: %v", pid, err)
	}
	return strconv.Atoi(f[1])
}

// procTicks sums utime and stime (fields 14 and 15 of stat, 12 and 13
// after the name), and with children the times of the children it
// waited for (16, 17).
func procTicks(pid int, children bool) (int64, error) {
	f, err := procStat(pid)
	if err != nil {
		return 0, err
	}
	if len(f) < 15 {
		return 0, fmt.Errorf("pgtest: malformed /proc/%d/stat", pid)
	}
	idx := []int{11, 12}
	if children {
		idx = append(idx, 13, 14)
	}
	var sum int64
	for _, i := range idx {
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("pgtest: /proc/%d/stat: %w", pid, err)
		}
		sum += n
	}
	return sum, nil
}

// Port is the TCP port the server listens on, on 127.0.0.1.
func (s *Server) Port() int { return s.port }

// Dir is the server's temporary directory: its data directory ("data"), its
// Unix socket and its log ("postgres.log"), removed by Stop.
func (s *Server) Dir() string { return s.dir }

// DSN returns the URL of database db on the server, as the superuser
// postgres (trusted: no password), without TLS.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// CreateDB creates a new, empty database and returns its DSN.
func (s *Server) CreateDB(ctx context.Context) (string, error) {
	name := "db" + strconv.FormatInt(s.dbs.Add(1), 10)
	if err := s.exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("pgtest: create database: %w", err)
	}
	return s.DSN(name), nil
}

// DropDB drops the database of a DSN CreateDB returned, closing the
// connections still open to it.
func (s *Server) DropDB(ctx context.Context, dsn string) error {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	if err := s.exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{cfg.Database}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("pgtest: drop database: %w", err)
	}
	return nil
}

func (s *Server) exec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// stopTimeout bounds a fast shutdown; after it the server is killed.
const stopTimeout = 30 * time.Second

// Stop shuts the server down and removes its directory. Stopping it again
// does nothing.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		s.mu.Lock()
		cmd, done := s.cmd, s.done
		s.mu.Unlock()
		if cmd != nil {
			// SIGINT is PostgreSQL's fast shutdown (pg_ctl stop -m fast):
			// open transactions are rolled back, clients disconnected.
			cmd.Process.Signal(syscall.SIGINT)
			select {
			case <-done:
			case <-time.After(stopTimeout):
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-done
				s.stopErr = errors.New("pgtest: postgres did not stop in time and was killed")
			}
		}
		if err := os.RemoveAll(s.dir); err != nil && s.stopErr == nil {
			s.stopErr = fmt.Errorf("pgtest: %w", err)
		}
	})
	return s.stopErr
}

// The server Main shares among a package's tests.
var shared struct {
	sync.Mutex
	main   bool // Main runs the tests
	server *Server
	err    error
}

// Main runs a package's tests, as TestMain: Require and DB then share one
// server, started by the first test that needs it and stopped when the
// tests end. It does not return.
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
func Main(m *testing.M) {
	shared.Lock()
	shared.main = true
	shared.Unlock()
	code := m.Run()
	shared.Lock()
	if shared.server != nil {
		if err := shared.server.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			if code == 0 {
				code = 1
			}
		}
	}
	shared.Unlock()
	os.Exit(code)
}

// Require returns a running server: the package's shared one under Main,
// else one of the test's own, stopped when it ends. Without PostgreSQL it
// skips the test, or fails it when the environment variable CI is
// non-empty: CI installs PostgreSQL (scripts/test), so there its absence
// is a broken setup, not a reason to skip. It fails the test when the
// server does not start.
func Require(t testing.TB) *Server {
	t.Helper()
	if _, err := BinDir(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%v; CI is set, so this test must run", err)
		}
		t.Skip(err)
	}
	shared.Lock()
	defer shared.Unlock()
	if !shared.main {
		s, err := Start(context.Background(), Config{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := s.Stop(); err != nil {
				t.Error(err)
			}
		})
		return s
	}
	if shared.server == nil && shared.err == nil {
		shared.server, shared.err = Start(context.Background(), Config{})
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.server
}

// Own returns a server of the test's own, never the package's shared one,
// stopped when the test ends: for a test that restarts it (Restart). It
// skips or fails the test without PostgreSQL as Require does.
func Own(t testing.TB, cfg Config) *Server {
	t.Helper()
	if _, err := BinDir(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%v; CI is set, so this test must run", err)
		}
		t.Skip(err)
	}
	s, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// DB returns the DSN of a new database for the test (on Require's server),
// dropped when the test ends.
func DB(t testing.TB) string {
	t.Helper()
	s := Require(t)
	dsn, err := s.CreateDB(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Registered first, so it runs after the cleanups that close the
		// test's connections; FORCE closes those a test left open.
		if err := s.DropDB(context.Background(), dsn); err != nil {
			t.Error(err)
		}
	})
	return dsn
}
