// Package apachetest runs a real Apache httpd 2.4 (Debian's apache2) for
// tests and benchmarks, as internal/nginxtest runs nginx: so that the
// crawler can be checked against what Apache actually answers — above
// all to conditional requests for responses mod_deflate compressed, whose
// ETag it changes ("…-gzip", Apache bug 45023). It is for tests and
// benchmarks only: the product must not import it (deps_test.go).
//
// Start writes a self-contained configuration (it does not include
// /etc/apache2/apache2.conf) for one or more Sites — each a name-based
// virtual host on a loopback address, serving a directory, with optional
// mod_deflate and response headers — into the test's temporary
// directory, runs apache2 in the foreground on it and stops it when the
// test ends. Server.Entries reads the access log, which records the
// validators and Accept-Encoding of each request.
//
// apache2 must be installed (apt-get install -y apache2; scripts/test
// installs it when run as root, without starting the system service).
// Require and Start skip a test without it, unless the environment
// variable CI is set, where they fail it.
package apachetest

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
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ErrNoApache is returned by Binary when apache2 is not installed.
var ErrNoApache = errors.New("apachetest: apache2 is not installed (apt-get install -y apache2; scripts/test installs it when run as root)")

// ModuleDir is where Debian installs Apache's loadable modules.
const ModuleDir = "/usr/lib/apache2/modules"

// Binary returns the path of the apache2 binary: /usr/sbin/apache2, where
// Debian installs it (and which is not on an ordinary user's PATH), or
// apache2 on PATH. It returns ErrNoApache when there is neither, or when
// ModuleDir has no MPM module.
func Binary() (string, error) {
	if _, err := os.Stat(filepath.Join(ModuleDir, "mod_mpm_event.so")); err != nil {
		return "", ErrNoApache
	}
	const debian = "/usr/sbin/apache2"
	if fi, err := os.Stat(debian); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return debian, nil
	}
	if p, err := exec.LookPath("apache2"); err == nil {
		return p, nil
	}
	return "", ErrNoApache
}

// Require returns the apache2 binary. Without one it skips the test, or
// fails it when the environment variable CI is non-empty: CI installs
// apache2 (scripts/test), so there its absence is a broken setup, not a
// reason to skip.
func Require(t testing.TB) string {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%v; CI is set, so this test must run", err)
		}
		t.Skip(err)
	}
	return bin
}

// Site is one virtual host of the configuration.
type Site struct {
	// Name is the ServerName, a host name ("a.test"). Sites on one
	// address are name-based virtual hosts told apart by the Host
	// header; the first is the address's default. Names must be
	// distinct.
	Name string
	// Addr is the listen address: a loopback IP address and a port,
	// "127.0.0.3:8080" or "[::1]:8080". Other addresses are refused. Port
	// 0 picks a free port (Server.Addr tells which); sites that give the
	// same address, port 0 included, share it.
	Addr string
	// Root is the DocumentRoot. Unknown paths answer 404, "/dir/" serves
	// dir/index.html and "/dir" redirects to it (mod_dir); the
	// Content-Type is by extension (.html, .txt, .css, .js, .json, .xml,
	// images, …), none for a file without one. Files have Apache's
	// default ETag (FileETag MTime Size: "mtime-size" in hex) and their
	// modification time as Last-Modified.
	//
	// Run as root, Apache serves files as www-data: they must be readable
	// by others (0644, directories 0755, as os.WriteFile and os.MkdirAll
	// make them under the usual umask). The directories above Root must
	// let www-data through; Launch adds the search permission for others
	// (o+x, not the right to list) to those under os.TempDir() that lack
	// it — t.TempDir()'s parent is 0700 — and refuses a Root elsewhere
	// that www-data cannot reach.
	Root string
	// Deflate compresses answers of the types Debian's deflate.conf names
	// (text/html, text/plain, text/xml, text/css, text/javascript,
	// application/javascript, application/xml, …) for clients that accept
	// gzip, with mod_deflate's defaults as Debian ships them: Vary:
	// Accept-Encoding, and DeflateAlterETag left at AddSuffix, so that a
	// compressed answer's ETag is the file's with "-gzip" inside the
	// quotes.
	Deflate bool
	// Headers are mod_headers directives for the site, each the
	// arguments of one Header line ("set Cache-Control \"max-age=60\"",
	// "always set X-Test 1").
	Headers []string
	// Directives are more directives for the virtual host, each one line
	// written as given: "DeflateAlterETag Remove", "FileETag None",
	// "ErrorDocument 404 /index.html". They are the test's own text,
	// checked only for line breaks and NUL. The default is none.
	Directives []string
}

// Server is a running Apache started by Start or Launch. Its methods are
// safe for concurrent use. It runs until Stop, which Start arranges to be
// called when the test ends.
type Server struct {
	dir   string
	sites []Site // with the ports chosen
	cmd   *exec.Cmd
	done  chan struct{} // closed when Apache's parent process has exited
	wait  error         // cmd.Wait's error; read after done

	stopOnce sync.Once
	stopErr  error
}

// Start starts Apache with sites, configured in t.TempDir(), and stops it
// when the test ends. It skips or fails the test without apache2
// (Require), and fails it when Apache does not start within 30 seconds.
func Start(t testing.TB, sites ...Site) *Server {
	t.Helper()
	Require(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s, err := Launch(ctx, t.TempDir(), sites...)
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

// Launch is Start without a testing.TB: it writes apache2.conf and
// mime.types into dir, which must exist, where Apache also writes its pid
// file and logs, runs apache2 -DFOREGROUND (in a process group of its
// own) and returns once every site's address accepts connections, or
// when ctx is done. The caller must call Stop.
func Launch(ctx context.Context, dir string, sites ...Site) (*Server, error) {
	sites, err := checkSites(sites)
	if err != nil {
		return nil, err
	}
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, fmt.Errorf("apachetest: %w", err)
	}
	if !quotable(dir) {
		return nil, fmt.Errorf("apachetest: directory %q has a character apache2.conf cannot quote", dir)
	}
	asRoot := os.Geteuid() == 0
	if asRoot {
		for _, s := range sites {
			if err := letThrough(s.Root); err != nil {
				return nil, fmt.Errorf("apachetest: site %s: %w", s.Name, err)
			}
		}
	}
	chosen := map[string]string{} // a given address with port 0 → the one picked
	for i := range sites {
		a := sites[i].Addr
		if c, ok := chosen[a]; ok {
			sites[i].Addr = c
			continue
		}
		if sites[i].Addr, err = pickPort(a); err != nil {
			return nil, err
		}
		chosen[a] = sites[i].Addr
	}
	if err := os.WriteFile(filepath.Join(dir, "mime.types"), []byte(mimeTypes), 0o644); err != nil {
		return nil, fmt.Errorf("apachetest: %w", err)
	}
	confPath := filepath.Join(dir, "apache2.conf")
	if err := os.WriteFile(confPath, []byte(config(dir, sites, asRoot)), 0o644); err != nil {
		return nil, fmt.Errorf("apachetest: %w", err)
	}
	// Apache writes to stderr what comes before its error log is open; a
	// file, unlike a pipe, does not tie cmd.Wait to the children, which
	// inherit it.
	stderr, err := os.Create(filepath.Join(dir, "stderr.log"))
	if err != nil {
		return nil, fmt.Errorf("apachetest: %w", err)
	}
	defer stderr.Close()
	// -DFOREGROUND: the parent neither forks nor detaches, so it stays
	// Launch's child, whose exit it sees. -d sets ServerRoot before the
	// configuration is read.
	cmd := exec.Command(bin, "-d", dir, "-f", confPath, "-DFOREGROUND")
	cmd.Dir = dir
	// Apache reads no environment variable from a configuration that
	// names none; Debian's init scripts set APACHE_* for its own.
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"}
	cmd.Stdout, cmd.Stderr = stderr, stderr
	// A process group of its own, so that a parent that must be killed
	// takes its children with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("apachetest: %w", err)
	}
	s := &Server{dir: dir, sites: sites, cmd: cmd, done: make(chan struct{})}
	go func() {
		s.wait = cmd.Wait()
		close(s.done)
	}()
	if err := s.waitReady(ctx); err != nil {
		s.Stop()
		return nil, fmt.Errorf("apachetest: apache2 did not start: %w%s", err, s.logs())
	}
	return s, nil
}

// waitReady waits until Apache has written its pid file, which it does
// after binding its listeners, and every address accepts connections.
func (s *Server) waitReady(ctx context.Context) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-s.done:
			return fmt.Errorf("it exited (%v)", s.wait)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		if pid, _ := s.pid(); pid != s.cmd.Process.Pid {
			continue
		}
		ready := true
		for _, site := range s.sites {
			c, err := net.DialTimeout("tcp", site.Addr, 100*time.Millisecond)
			if err != nil {
				ready = false
				break
			}
			c.Close()
		}
		if ready {
			return nil
		}
	}
}

// pid returns the pid in Apache's pid file.
func (s *Server) pid() (int, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, "apache2.pid"))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// logs returns Apache's stderr and error log, for an error message.
func (s *Server) logs() string {
	var b strings.Builder
	for _, f := range []string{"stderr.log", "error.log"} {
		if out, _ := os.ReadFile(filepath.Join(s.dir, f)); len(bytes.TrimSpace(out)) > 0 {
			fmt.Fprintf(&b, "\n%s:\n%s", f, bytes.TrimSpace(out))
		}
	}
	return b.String()
}

// stopTimeout is how long Stop waits for Apache to stop.
const stopTimeout = 10 * time.Second

// Stop stops Apache and waits until its processes are gone: SIGTERM
// (apachectl stop: the parent stops its children, ending requests in
// progress, and exits) to the parent process, whose pid is the one in
// apache2.pid, then SIGKILL to its process group after 10 seconds. It
// returns an error if Apache had to be killed or had exited before with
// an error. Calls after the first return the first one's result.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() { s.stopErr = s.stop() })
	return s.stopErr
}

func (s *Server) stop() error {
	// The parent is our child (-DFOREGROUND), so its pid cannot be
	// reused before cmd.Wait has reaped it: signalling cmd.Process is
	// safe, where a pid read from a file alone might name another
	// process.
	pid := s.cmd.Process.Pid
	var err error
	if p, perr := s.pid(); perr == nil && p != pid {
		err = fmt.Errorf("apachetest: apache2.pid says %d, but the parent is %d", p, pid)
	}
	select {
	case <-s.done:
		if s.wait != nil {
			err = errors.Join(err, fmt.Errorf("apachetest: apache2 exited before Stop: %v%s", s.wait, s.logs()))
		}
	default:
		s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(stopTimeout):
			// The parent is not reaped yet, so its group id is still ours.
			syscall.Kill(-pid, syscall.SIGKILL)
			<-s.done
			err = errors.Join(err, fmt.Errorf("apachetest: apache2 did not stop within %v of SIGTERM and was killed%s", stopTimeout, s.logs()))
		}
	}
	// Children left behind by a parent that died keep the group alive;
	// kill them and wait until none is left.
	syscall.Kill(-pid, syscall.SIGKILL)
	for deadline := time.Now().Add(stopTimeout); syscall.Kill(-pid, 0) == nil; {
		if time.Now().After(deadline) {
			return errors.Join(err, fmt.Errorf("apachetest: Apache's children (process group %d) are still running", pid))
		}
		time.Sleep(10 * time.Millisecond)
	}
	return err
}

// Pid returns the process id of Apache's parent process, which is also
// the id of the process group of all its processes.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Dir returns the directory of apache2.conf, the logs and the pid file.
func (s *Server) Dir() string { return s.dir }

// Sites returns the sites as served, with the ports Start chose.
func (s *Server) Sites() []Site {
	out := append([]Site(nil), s.sites...)
	for i := range out {
		out[i].Headers = append([]string(nil), out[i].Headers...)
	}
	return out
}

// Addr returns the address ("127.0.0.3:8080") of the site called name, or
// "" if there is none.
func (s *Server) Addr(name string) string {
	for _, site := range s.sites {
		if site.Name == name {
			return site.Addr
		}
	}
	return ""
}

// URL returns "http://ADDR" for the site called name, or "" if there is
// none. Its requests carry the address as Host; Apache answers them with
// the address's first site, which is the site itself unless several
// share the address (then send Host: name).
func (s *Server) URL(name string) string {
	if a := s.Addr(name); a != "" {
		return "http://" + a
	}
	return ""
}

var validName = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$`)

// quotable reports whether s can go between double quotes in
// apache2.conf as it is: no quote, backslash, "$" (${VAR} is expanded),
// "%" (a format in log file names) or control character.
func quotable(s string) bool {
	for _, r := range s {
		if r < ' ' || r == 0x7f || strings.ContainsRune(`"\$%`, r) {
			return false
		}
	}
	return true
}

// checkSites validates sites and returns a copy with Root made absolute.
func checkSites(sites []Site) ([]Site, error) {
	if len(sites) == 0 {
		return nil, errors.New("apachetest: no site")
	}
	out := make([]Site, len(sites))
	names := map[string]bool{}
	for i, s := range sites {
		if !validName.MatchString(s.Name) {
			return nil, fmt.Errorf("apachetest: site name %q is not a host name", s.Name)
		}
		if names[strings.ToLower(s.Name)] {
			return nil, fmt.Errorf("apachetest: two sites are called %q", s.Name)
		}
		names[strings.ToLower(s.Name)] = true
		host, port, err := net.SplitHostPort(s.Addr)
		if err != nil {
			return nil, fmt.Errorf("apachetest: site %s: address %q: %w", s.Name, s.Addr, err)
		}
		ip := net.ParseIP(host)
		if ip == nil || !ip.IsLoopback() {
			return nil, fmt.Errorf("apachetest: site %s: address %q is not a loopback IP address: the test servers listen on loopback only", s.Name, s.Addr)
		}
		n, err := strconv.Atoi(port)
		if err != nil || n < 0 || n > 65535 {
			return nil, fmt.Errorf("apachetest: site %s: address %q has no valid port", s.Name, s.Addr)
		}
		s.Addr = net.JoinHostPort(ip.String(), strconv.Itoa(n)) // one spelling per address
		if s.Root == "" {
			return nil, fmt.Errorf("apachetest: site %s: no Root", s.Name)
		}
		if s.Root, err = filepath.Abs(s.Root); err != nil {
			return nil, fmt.Errorf("apachetest: site %s: %w", s.Name, err)
		}
		if !quotable(s.Root) {
			return nil, fmt.Errorf("apachetest: site %s: Root %q has a character apache2.conf cannot quote", s.Name, s.Root)
		}
		if fi, err := os.Stat(s.Root); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("apachetest: site %s: Root %q is not a directory", s.Name, s.Root)
		}
		for _, h := range s.Headers {
			if strings.ContainsAny(h, "\n\r\x00") || strings.TrimSpace(h) == "" {
				return nil, fmt.Errorf("apachetest: site %s: Header %q is not one line", s.Name, h)
			}
		}
		s.Headers = append([]string(nil), s.Headers...)
		for _, d := range s.Directives {
			if strings.ContainsAny(d, "\n\r\x00") || strings.TrimSpace(d) == "" {
				return nil, fmt.Errorf("apachetest: site %s: directive %q is not one line", s.Name, d)
			}
		}
		s.Directives = append([]string(nil), s.Directives...)
		out[i] = s
	}
	return out, nil
}

// pickPort returns addr, with a free port in place of port 0. Another
// process could take the port before Apache binds it; Start then fails
// with Apache's "Address already in use".
func pickPort(addr string) (string, error) {
	host, port, _ := net.SplitHostPort(addr)
	if port != "0" {
		return addr, nil
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("apachetest: no free port on %s: %w", host, err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// runUser is the user (and group) Apache's children run as when it is
// started as root, as Debian's configuration has them: Apache refuses to
// serve as root.
const runUser = "www-data"

// letThrough makes sure runUser can reach dir: each directory from / to
// dir must let it search (x). Those under os.TempDir() that do not are
// given o+x; for others it returns an error.
func letThrough(dir string) error {
	u, err := user.Lookup(runUser)
	if err != nil {
		return fmt.Errorf("the user %s, whom Apache serves as, does not exist: %w", runUser, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
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
			if rel, err := filepath.Rel(tmp, p); err != nil || rel == ".." || strings.HasPrefix(rel, "../") || rel == "." {
				return fmt.Errorf("%s (%v) does not let %s through, which Apache serves as: make it o+x, or use a Root under %s", p, fi.Mode().Perm(), runUser, tmp)
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
	case int(st.Uid) == uid:
		return m&0o100 != 0
	case int(st.Gid) == gid:
		return m&0o010 != 0
	default:
		return m&0o001 != 0
	}
}

// mimeTypes is the TypesConfig of the configuration: the types of
// nginxtest's, which a crawler meets, not the 1,500 of /etc/mime.types.
const mimeTypes = `text/html html htm
text/plain txt
text/css css
text/xml
text/javascript
application/javascript js mjs
application/json json
application/xml xml
application/rss+xml rss
image/png png
image/jpeg jpg jpeg
image/gif gif
image/svg+xml svg
application/pdf pdf
application/zip zip
application/gzip gz
`

// deflateTypes are the types Debian's mods-available/deflate.conf
// compresses.
var deflateTypes = []string{
	"text/html text/plain text/xml text/css text/javascript",
	"application/x-javascript application/javascript application/ecmascript",
	"application/rss+xml",
	"application/wasm",
	"application/xml",
}

// modules are the modules the configuration loads from ModuleDir, by
// name, beyond those Debian's apache2 has built in (apache2 -l: core,
// mod_so, mod_watchdog, http_core, mod_log_config, mod_logio,
// mod_version, mod_unixd).
var modules = []struct{ name, file string }{
	{"mpm_event_module", "mod_mpm_event.so"}, // Debian's default MPM
	{"authz_core_module", "mod_authz_core.so"},
	{"mime_module", "mod_mime.so"},
	{"dir_module", "mod_dir.so"},
	{"filter_module", "mod_filter.so"}, // AddOutputFilterByType
	{"deflate_module", "mod_deflate.so"},
	{"headers_module", "mod_headers.so"},
	{"log_config_module", "mod_log_config.so"}, // built into Debian's
}

// logFormat is the access log format (LogFormat; "\t" is a tab): one line
// per request, fields separated by tabs; Entries parses it. Apache
// escapes '"', '\' and control characters in the request line and
// headers (\", \\, \t, \xHH, …: a tab in a header cannot split a field)
// and logs an absent header as "-".
const logFormat = `%{end:usec}t\t%v\t%>s\t%r\t%B\t%D\t%a\t%{remote}p\t%k\t%{Host}i\t%{User-Agent}i\t` +
	`%{Accept-Encoding}i\t%{If-None-Match}i\t%{If-Modified-Since}i\t%{ETag}o\t%{Content-Encoding}o`

// logFields is the number of fields of logFormat.
var logFields = strings.Count(logFormat, `\t`) + 1

// config returns the text of apache2.conf for sites served from dir.
func config(dir string, sites []Site, asRoot bool) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	// Between double quotes Apache unescapes only \" (and LogFormat its
	// own \t): the paths are checked to have no '"', '\', '$' or '%'.
	q := func(s string) string { return `"` + s + `"` }
	p("# Written by internal/apachetest (gentlecrawl) for one test.")
	p("ServerRoot %s", q(dir))
	p("DefaultRuntimeDir %s", q(dir))
	p("PidFile %s", q(filepath.Join(dir, "apache2.pid")))
	p("ErrorLog %s", q(filepath.Join(dir, "error.log")))
	p("LogLevel notice")
	for _, m := range modules {
		p("<IfModule !%s>", m.name)
		p("  LoadModule %s %s", m.name, q(filepath.Join(ModuleDir, m.file)))
		p("</IfModule>")
	}
	if asRoot {
		p("User %s", runUser)
		p("Group %s", runUser)
	}
	// Debian's mpm_event.conf.
	p("StartServers 2")
	p("MinSpareThreads 25")
	p("MaxSpareThreads 75")
	p("ThreadLimit 64")
	p("ThreadsPerChild 25")
	p("MaxRequestWorkers 150")
	p("MaxConnectionsPerChild 0")
	// Timeout, KeepAlive, MaxKeepAliveRequests, KeepAliveTimeout and
	// FileETag are left at Apache's defaults, which are Debian's: 300,
	// On, 100, 5 and MTime Size.
	p("ServerName %s", sites[0].Name)
	p("ServerTokens OS") // Debian's security.conf: "Apache/2.4.x (Debian)"
	p("TraceEnable Off")
	p("TypesConfig %s", q(filepath.Join(dir, "mime.types")))
	p("LogFormat %s apachetest", q(logFormat))
	// Unbuffered (BufferedLogs Off): each line is written as its request
	// ends.
	p("CustomLog %s apachetest", q(filepath.Join(dir, "access.log")))
	p("<Directory />")
	p("  AllowOverride None")
	p("  Require all denied")
	p("</Directory>")
	listened := map[string]bool{}
	for _, s := range sites {
		if !listened[s.Addr] {
			p("Listen %s", s.Addr)
			listened[s.Addr] = true
		}
	}
	for _, s := range sites {
		p("<VirtualHost %s>", s.Addr)
		p("  ServerName %s", s.Name)
		p("  DocumentRoot %s", q(s.Root))
		p("  <Directory %s>", q(s.Root))
		p("    Options FollowSymLinks")
		p("    AllowOverride None")
		p("    Require all granted")
		p("  </Directory>")
		p("  DirectoryIndex index.html")
		if s.Deflate {
			// Debian's deflate.conf, DeflateAlterETag and all else at
			// their defaults.
			for _, t := range deflateTypes {
				p("  AddOutputFilterByType DEFLATE %s", t)
			}
		}
		for _, h := range s.Headers {
			p("  Header %s", h)
		}
		for _, d := range s.Directives {
			p("  %s", d)
		}
		p("</VirtualHost>")
	}
	return b.String()
}
