// Package cmstest runs two real content management systems from Debian's
// packages on loopback, filled with seeded content, for tests that measure
// a crawl against the real thing: WordPress (with MariaDB) and DokuWiki,
// each under a private Apache httpd with mod_php. Each Site comes with its
// ground truth, the list of its real content URLs as the CMS itself prints
// them, and its access log, so that a test can compare the requests a
// crawler made with the pages it had to fetch.
//
// Everything a site writes — Apache's configuration and logs, the
// database, WordPress's entry points and wp-config.php, DokuWiki's
// configuration and data — lives in a temporary directory of the test's
// (in /dev/shm when that is a tmpfs, else t.TempDir()) and is removed
// with it; the code of the packages (/usr/share/wordpress,
// /usr/share/dokuwiki and the theme, templates and plugins they link to)
// is used as installed, read-only. Nothing else on the machine is
// touched: no system service is started, /etc/wordpress is not read,
// DokuWiki's configuration files are copied from /etc/dokuwiki, and its
// data in /var/lib/dokuwiki/data is left alone.
//
// Setting a site up makes no HTTP request, and the site makes none of its
// own while it serves (WordPress's cron is off), so that its access log
// holds the test's requests only.
//
// The packages must be installed (scripts/test installs them when run as
// root): apache2, libapache2-mod-php, php-mysql, mariadb-server, wordpress
// and wordpress-theme-twentytwentyone for WordPress, dokuwiki for
// DokuWiki. Without them WordPress and DokuWiki skip the test, unless the
// environment variable CI is set, where they fail it.
//
// It is for tests only: the product must not import it.
package cmstest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Site is a CMS running on loopback for one test, stopped when the test
// ends.
type Site struct {
	// URL is the site's base URL, "http://127.0.0.1:PORT/", where a crawl
	// starts: WordPress's home page; for DokuWiki a redirect to the start
	// page.
	URL string
	// Real is the ground truth: the absolute URLs of the site's real
	// pages, spelled as the CMS prints them in its links (with "&", not
	// "&amp;"), distinct and sorted. WordPress's and DokuWiki's doc
	// comments say what each holds. Every one answers 200, and each is
	// reachable from URL through links on pages of Real.
	Real []string
	// Kind maps each URL of Real to what it is: "home", "home-page",
	// "post", "page", "category", "category-page", "tag", "author",
	// "month", "day" for WordPress; "page", "index" for DokuWiki.
	Kind map[string]string
	// Setup is how long setting the site up took, from the call to
	// WordPress or DokuWiki to a server ready for requests.
	Setup time.Duration
	// Dir is the site's directory: apache2.conf, access.log, error.log,
	// and the CMS's files. It is inside the test's temporary directory.
	Dir string

	apache *apache
}

// Request is one request as the site's Apache logged it.
type Request struct {
	// Time is when the request ended.
	Time time.Time
	// Method and URI are from the request line as sent: "GET",
	// "/2023/05/some-post/?replytocom=12". URI is not decoded.
	Method, URI string
	// Status is the final status (%>s).
	Status int
	// Bytes is the size of the body sent (%B).
	Bytes int64
	// UserAgent is the User-Agent header, "" when absent.
	UserAgent string
}

// Path is the path of URI, without the query.
func (r Request) Path() string {
	p, _, _ := strings.Cut(r.URI, "?")
	return p
}

// Requests reads the access log: every request the site has answered, in
// the order they ended. Setting the site up makes no request, so these
// are the test's own. Apache writes each line after its response has
// been sent: a client that has just read a response may not find it yet
// (WaitRequests waits).
func (s *Site) Requests() ([]Request, error) {
	return s.apache.requests()
}

// WaitRequests waits until the access log holds at least n requests, or
// ctx is done, and returns them.
func (s *Site) WaitRequests(ctx context.Context, n int) ([]Request, error) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		rs, err := s.Requests()
		if err != nil || len(rs) >= n {
			return rs, err
		}
		select {
		case <-ctx.Done():
			return rs, fmt.Errorf("cmstest: %d requests in the access log, waiting for %d: %w", len(rs), n, ctx.Err())
		case <-tick.C:
		}
	}
}

// newSite returns the Site for a ground truth given as kind → URLs.
func newSite(base string, truth map[string][]string, dir string, a *apache, start time.Time) (*Site, error) {
	s := &Site{URL: base, Kind: map[string]string{}, Dir: dir, apache: a}
	for kind, urls := range truth {
		for _, u := range urls {
			if !strings.HasPrefix(u, base) {
				return nil, fmt.Errorf("cmstest: ground truth URL %q (%s) is not on %s", u, kind, base)
			}
			if k, dup := s.Kind[u]; dup {
				return nil, fmt.Errorf("cmstest: ground truth URL %q is both %s and %s", u, k, kind)
			}
			s.Kind[u] = kind
			s.Real = append(s.Real, u)
		}
	}
	slices.Sort(s.Real)
	s.Setup = time.Since(start)
	return s, nil
}

// workDir returns a new directory for a site's files, removed when the
// test ends: in /dev/shm when that is a tmpfs, else t.TempDir(). Both
// CMSs make many small writes, renames and directory creations (DokuWiki
// a lock directory for each file it writes), which on a virtual
// machine's disk wait for the disk each time: on tmpfs DokuWiki's setup is
// much faster.
func workDir(t testing.TB) (string, error) {
	var st syscall.Statfs_t
	if syscall.Statfs("/dev/shm", &st) == nil && st.Type == 0x01021994 { // TMPFS_MAGIC
		d, err := os.MkdirTemp("/dev/shm", "cmstest-")
		if err == nil {
			t.Cleanup(func() {
				if err := os.RemoveAll(d); err != nil {
					t.Error(err)
				}
			})
			// MkdirTemp makes it 0700: the server's user must get in.
			return d, os.Chmod(d, 0o755)
		}
	}
	return t.TempDir(), nil
}

// missing returns an error naming the files of paths that do not exist,
// and the packages that install them.
func missing(what string, paths map[string]string) error {
	var pkgs, files []string
	for path, pkg := range paths {
		if _, err := os.Stat(path); err != nil {
			files = append(files, path)
			if !slices.Contains(pkgs, pkg) {
				pkgs = append(pkgs, pkg)
			}
		}
	}
	if len(files) == 0 {
		return nil
	}
	slices.Sort(pkgs)
	slices.Sort(files)
	return fmt.Errorf("cmstest: %s needs Debian's %s (apt-get install -y %s; scripts/test installs them when run as root): %s not found",
		what, strings.Join(pkgs, ", "), strings.Join(pkgs, " "), strings.Join(files, ", "))
}

// require skips the test when err (from missing) is not nil, or fails it
// when the environment variable CI is non-empty: CI installs the packages
// (scripts/test), so there their absence is a broken setup.
func require(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%v; CI is set, so this test must run", err)
	}
	t.Skip(err)
}

// phpBinary is the PHP command-line interpreter (Debian's php-cli, which
// libapache2-mod-php brings).
const phpBinary = "/usr/bin/php"

// runPHP runs the PHP script file with args in dir and returns its
// standard output; its standard error goes into the error.
func runPHP(ctx context.Context, dir, script string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, phpBinary, append([]string{"-d", "display_errors=stderr", "-d", "memory_limit=512M", script}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C", "TZ=UTC"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.Bytes(), fmt.Errorf("cmstest: php %s %s: %v\n%s%s", filepath.Base(script), strings.Join(args, " "), err, lastLines(stdout.Bytes(), 20), lastLines(stderr.Bytes(), 40))
	}
	return stdout.Bytes(), nil
}

// lastLines returns the last n lines of b, for an error message.
func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	s := strings.Join(lines, "\n")
	if s != "" {
		s += "\n"
	}
	return s
}

// runUser is the user Apache's children (and so PHP) run as when the test
// runs as root, as in Debian's configuration: Apache refuses to serve as
// root.
const runUser = "www-data"

// serverIDs returns the uid and gid the site's PHP runs as: runUser's when
// the test runs as root, else the test's own.
func serverIDs() (uid, gid int, err error) {
	if os.Geteuid() != 0 {
		return os.Geteuid(), os.Getegid(), nil
	}
	u, err := user.Lookup(runUser)
	if err != nil {
		return 0, 0, fmt.Errorf("cmstest: the user %s, whom Apache serves as, does not exist: %w", runUser, err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid, nil
}

// giveToServer makes dir and everything under it owned by the user the
// site's PHP runs as, so that it can write there (DokuWiki's data, its
// caches and index, WordPress's uploads). Run as another user than root it
// has nothing to do: the files are already the test's.
func giveToServer(dir string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	uid, gid, err := serverIDs()
	if err != nil {
		return err
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

// letThrough makes sure the server's user can reach dir: each directory
// from / to dir must let it search (x). Those under os.TempDir() that do
// not are given o+x (t.TempDir()'s parent is 0700); for others it returns
// an error.
func letThrough(dir string) error {
	uid, gid, err := serverIDs()
	if err != nil {
		return err
	}
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		tmp = os.TempDir()
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	for p := real; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		if !canSearch(fi, uid, gid) {
			if rel, err := filepath.Rel(tmp, p); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
				return fmt.Errorf("cmstest: %s (%v) does not let %s through, which the site's PHP runs as: make it o+x, or set TMPDIR elsewhere", p, fi.Mode().Perm(), runUser)
			}
			if err := os.Chmod(p, fi.Mode().Perm()|0o001); err != nil {
				return err
			}
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

// canSearch reports whether the user uid of group gid may search the
// directory fi (its supplementary groups aside).
func canSearch(fi fs.FileInfo, uid, gid int) bool {
	m := fi.Mode().Perm()
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !ok:
		return m&0o001 != 0
	case uid == 0:
		return true
	case int(st.Uid) == uid:
		return m&0o100 != 0
	case int(st.Gid) == gid:
		return m&0o010 != 0
	default:
		return m&0o001 != 0
	}
}

// copyTree copies the directory src to dst: directories and regular files
// (mode kept, owned by the caller), symbolic links as links with the same
// target.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type().IsRegular():
			return copyFile(p, to)
		}
		return nil // sockets, devices: none expected
	})
}

// copyFile copies the regular file src to dst, with its permission bits.
func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, fi.Mode().Perm())
}

// freePort returns a port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("cmstest: no free port on 127.0.0.1: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// phpString quotes s as a PHP single-quoted string literal.
func phpString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// errStopped is returned by a stop of a process that had exited before.
var errStopped = errors.New("exited before it was stopped")
