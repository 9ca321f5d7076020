package cmstest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// mariadbNeeds are the files a private MariaDB needs, and their package.
var mariadbNeeds = map[string]string{
	"/usr/sbin/mariadbd":          "mariadb-server",
	"/usr/bin/mariadb-install-db": "mariadb-server",
}

// mariadb is a private MariaDB server: its own data directory, listening
// on a Unix socket only (skip-networking), root without a password. It is
// a throwaway: durability is traded for speed.
type mariadb struct {
	dir    string
	socket string
	proc   *process
}

// myCnf is the server's configuration: small buffers and redo log,
// no flush at commit, no doublewrite, no performance schema.
const myCnf = `[mysqld]
datadir=%[1]s/data
socket=%[2]s
pid-file=%[1]s/mariadbd.pid
log-error=%[1]s/mariadbd.err
skip-networking
skip-name-resolve
skip-log-bin
innodb_buffer_pool_size=64M
innodb_log_file_size=8M
innodb_flush_log_at_trx_commit=0
innodb_doublewrite=0
innodb_use_native_aio=0
performance_schema=OFF
character-set-server=utf8mb4
collation-server=utf8mb4_unicode_ci
`

// startMariaDB initialises a data directory in dir (mariadb-install-db)
// and starts the server on it; socketDir holds the socket, which the
// site's PHP must reach. It returns once the socket accepts connections.
func startMariaDB(ctx context.Context, dir, socketDir string) (*mariadb, error) {
	m := &mariadb{dir: dir, socket: filepath.Join(socketDir, "mysqld.sock")}
	// A Unix socket's path is limited to 107 bytes.
	if len(m.socket) > 100 {
		return nil, fmt.Errorf("cmstest: MariaDB's socket path %s is too long", m.socket)
	}
	cnf := filepath.Join(dir, "my.cnf")
	if err := os.WriteFile(cnf, fmt.Appendf(nil, myCnf, dir, m.socket), 0o644); err != nil {
		return nil, err
	}
	var asRoot []string
	if os.Geteuid() == 0 {
		// mariadbd refuses to run as root unless told to; the data is the
		// test's, in its temporary directory, so root may own it.
		asRoot = []string{"--user=root"}
	}
	// --defaults-file must come first. "normal" authentication gives
	// root@localhost an empty password, which any local user may use.
	install := exec.CommandContext(ctx, "/usr/bin/mariadb-install-db", append([]string{"--defaults-file=" + cnf,
		"--auth-root-authentication-method=normal", "--skip-test-db"}, asRoot...)...)
	install.Dir = dir
	install.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"}
	if out, err := install.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("cmstest: mariadb-install-db: %v\n%s", err, lastLines(out, 30))
	}
	stderr, err := os.Create(filepath.Join(dir, "stderr.log"))
	if err != nil {
		return nil, err
	}
	defer stderr.Close()
	cmd := exec.Command("/usr/sbin/mariadbd", append([]string{"--defaults-file=" + cnf}, asRoot...)...)
	cmd.Dir = dir
	cmd.Env = install.Env
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if m.proc, err = startProcess(cmd); err != nil {
		return nil, fmt.Errorf("cmstest: mariadbd: %w", err)
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-m.proc.done:
			return nil, fmt.Errorf("cmstest: mariadbd exited (%v)%s", m.proc.wait, m.logs())
		case <-ctx.Done():
			m.stop()
			return nil, fmt.Errorf("cmstest: mariadbd did not start: %w%s", ctx.Err(), m.logs())
		case <-tick.C:
		}
		if c, err := net.DialTimeout("unix", m.socket, 100*time.Millisecond); err == nil {
			c.Close()
			return m, nil
		}
	}
}

// logs returns the server's error log, for an error message.
func (m *mariadb) logs() string {
	var b strings.Builder
	for _, f := range []string{"stderr.log", "mariadbd.err"} {
		if out, _ := os.ReadFile(filepath.Join(m.dir, f)); len(strings.TrimSpace(string(out))) > 0 {
			fmt.Fprintf(&b, "\n%s:\n%s", f, lastLines(out, 30))
		}
	}
	return b.String()
}

// stop shuts the server down (SIGTERM: a normal shutdown), killing it
// after 30 seconds.
func (m *mariadb) stop() error {
	if err := m.proc.stop(30 * time.Second); err != nil {
		return fmt.Errorf("cmstest: mariadbd: %w%s", err, m.logs())
	}
	return nil
}
