// Package nginxtest runs a real nginx for tests and benchmarks, so that
// the crawler's rate control can be measured against nginx's own
// limit_req, not only against the synthetic web of internal/simweb. It is
// for tests and benchmarks only: the product must not import it
// (deps_test.go).
//
// Start writes a configuration for one or more Sites — each a server
// block on a loopback address, serving a directory, with an optional
// limit_req and gzip — into the test's temporary directory, runs nginx
// on it and stops it when the test ends. WriteSite fills a directory with
// the pages of a simweb host. Server.Entries reads the access log.
//
// nginx must be installed (apt-get install -y nginx-light; scripts/test
// installs it when run as root). Require and Start skip a test without
// it, unless the environment variable CI is set, where they fail it.
package nginxtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ErrNoNginx is returned by Binary when nginx is not installed.
var ErrNoNginx = errors.New("nginxtest: nginx is not installed (apt-get install -y nginx-light; scripts/test installs it when run as root)")

// Binary returns the path of the nginx binary: /usr/sbin/nginx, where
// Debian installs it (and which is not on an ordinary user's PATH), or
// nginx on PATH. It returns ErrNoNginx when there is neither.
func Binary() (string, error) {
	const debian = "/usr/sbin/nginx"
	if fi, err := os.Stat(debian); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return debian, nil
	}
	if p, err := exec.LookPath("nginx"); err == nil {
		return p, nil
	}
	return "", ErrNoNginx
}

// Require returns the nginx binary. Without one it skips the test, or
// fails it when the environment variable CI is non-empty: CI installs
// nginx (scripts/test), so there its absence is a broken setup, not a
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

// Limit is a site's request rate limit: nginx's limit_req with nodelay,
// keyed on the client address ($binary_remote_addr) in a zone of the
// site's own (1 MB).
type Limit struct {
	// Rate is the sustained rate in requests per second. The default (0)
	// means no limit.
	Rate int
	// Burst is the number of requests above the rate that are served at
	// once (limit_req burst=, always with nodelay). The default is 0:
	// one request per 1/Rate seconds, the next one early is refused.
	Burst int
	// Status is the status of a refusal (limit_req_status), 400 to 599.
	// The default is 503, as in nginx.
	Status int
	// RetryAfter, if positive, adds "Retry-After: N" (seconds) to
	// refusals, and only to them. The default (0) sends none, as nginx
	// does.
	RetryAfter int
}

// Site is one server block of the configuration.
type Site struct {
	// Name is the server_name, a host name ("a.test"). Sites on one
	// address are told apart by the Host header; the first is the default
	// server. Names must be distinct.
	Name string
	// Addr is the listen address: a loopback IP address and a port,
	// "127.0.0.2:8080" or "[::1]:8080". Other addresses are refused. Port
	// 0 picks a free port (Server.Addr tells which).
	Addr string
	// Root is the directory served. Unknown paths answer 404; files
	// without an extension are text/html; "/dir/" serves dir/index.html;
	// a request with a query is served the file whose name is the path
	// and the query ("list?page=3"), if there is one (see WriteSite).
	Root string
	// Limit is the request rate limit. The zero Limit has none.
	Limit Limit
	// Gzip compresses HTML, text, CSS, JavaScript, JSON and XML answers
	// for clients that accept gzip (gzip on; gzip_vary on).
	Gzip bool
	// Directives are more directives for the server block, each written
	// as given with a ';' added (none after a block, "types { }"):
	// "etag off", "if_modified_since off", "ssi on". They are the test's own text, checked only for line
	// breaks and NUL. The default is none.
	Directives []string
	// Locations are more location blocks, written before the default
	// "location /", for answers the site gives on some paths only: a
	// robots.txt that answers 503, or that is an HTML page. The default
	// is none.
	Locations []Location
	// NotFound, when set, is the URI served for a path that has no file,
	// with the status of that file (200), instead of 404: a soft 404, as
	// "try_files $uri $uri/ /index.html" makes one. It must start with
	// '/'. The default ("") answers 404.
	NotFound string
}

// Location is a location block of a Site.
type Location struct {
	// Match is what follows "location": "= /robots.txt" (that path
	// only), "/private/" (a prefix), "~ \.php$" (a regular expression).
	Match string
	// Directives are the block's directives, each written as given with
	// a ';' added (none after a block): "return 503", "types { }",
	// "default_type text/html", "try_files /index.html =404".
	Directives []string
}

// Server is a running nginx started by Start or Launch. Its methods are
// safe for concurrent use. It runs until Stop, which Start arranges to be
// called when the test ends.
type Server struct {
	dir   string
	sites []Site // with the ports chosen
	cmd   *exec.Cmd
	done  chan struct{} // closed when nginx's master process has exited
	wait  error         // cmd.Wait's error; read after done

	stopOnce sync.Once
	stopErr  error
}

// Start starts nginx with sites, configured in t.TempDir(), and stops it
// when the test ends. It skips or fails the test without nginx (Require),
// and fails it when nginx does not start within 30 seconds.
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

// Launch is Start without a testing.TB: it writes nginx.conf into dir,
// which must exist, along with nginx's pid file, logs and temporary
// directories, runs nginx (in the foreground, in a process group of its
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
		return nil, fmt.Errorf("nginxtest: %w", err)
	}
	if strings.ContainsAny(dir, `"$\;{}`+"\n\r\x00") {
		return nil, fmt.Errorf("nginxtest: directory %q has a character nginx.conf cannot quote", dir)
	}
	for i := range sites {
		if sites[i].Addr, err = pickPort(sites[i].Addr); err != nil {
			return nil, err
		}
	}
	conf, err := config(bin, dir, sites)
	if err != nil {
		return nil, err
	}
	for _, p := range tempDirs {
		if err := os.MkdirAll(filepath.Join(dir, "temp", p), 0o700); err != nil {
			return nil, fmt.Errorf("nginxtest: %w", err)
		}
	}
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return nil, fmt.Errorf("nginxtest: %w", err)
	}
	// nginx writes to stderr only what it cannot write to its error log;
	// a file, unlike a pipe, does not tie cmd.Wait to the workers, which
	// inherit it.
	stderr, err := os.Create(filepath.Join(dir, "stderr.log"))
	if err != nil {
		return nil, fmt.Errorf("nginxtest: %w", err)
	}
	defer stderr.Close()
	// -e: the error log before nginx.conf is read (nginx ≥ 1.19.5).
	cmd := exec.Command(bin, "-p", dir+"/", "-c", confPath, "-e", filepath.Join(dir, "error.log"))
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = stderr, stderr
	// A process group of its own, so that a master that must be killed
	// takes its workers with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("nginxtest: %w", err)
	}
	s := &Server{dir: dir, sites: sites, cmd: cmd, done: make(chan struct{})}
	go func() {
		s.wait = cmd.Wait()
		close(s.done)
	}()
	if err := s.waitReady(ctx); err != nil {
		s.Stop()
		return nil, fmt.Errorf("nginxtest: nginx did not start: %w%s", err, s.logs())
	}
	return s, nil
}

// waitReady waits until nginx has written its pid file, which it does
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

// pid returns the pid in nginx's pid file.
func (s *Server) pid() (int, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, "nginx.pid"))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// logs returns nginx's stderr and error log, for an error message.
func (s *Server) logs() string {
	var b strings.Builder
	for _, f := range []string{"stderr.log", "error.log"} {
		if out, _ := os.ReadFile(filepath.Join(s.dir, f)); len(bytes.TrimSpace(out)) > 0 {
			fmt.Fprintf(&b, "\n%s:\n%s", f, bytes.TrimSpace(out))
		}
	}
	return b.String()
}

// stopTimeout is how long Stop waits for a graceful shutdown.
const stopTimeout = 10 * time.Second

// Stop stops nginx and waits until its processes are gone: SIGQUIT (let
// requests in progress finish, close idle connections) to the master
// process, whose pid is the one in nginx.pid, then SIGKILL to its process
// group after 10 seconds. It returns an error if nginx had to be killed
// or had exited before with an error. Calls after the first return the
// first one's result.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() { s.stopErr = s.stop() })
	return s.stopErr
}

func (s *Server) stop() error {
	// The master is our child (daemon off), so its pid cannot be reused
	// before cmd.Wait has reaped it: signalling cmd.Process is safe,
	// where a pid read from a file alone might name another process.
	pid := s.cmd.Process.Pid
	var err error
	if p, perr := s.pid(); perr == nil && p != pid {
		err = fmt.Errorf("nginxtest: nginx.pid says %d, but the master is %d", p, pid)
	}
	select {
	case <-s.done:
		if s.wait != nil {
			err = errors.Join(err, fmt.Errorf("nginxtest: nginx exited before Stop: %v%s", s.wait, s.logs()))
		}
	default:
		s.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-s.done:
		case <-time.After(stopTimeout):
			// The master is not reaped yet, so its group id is still ours.
			syscall.Kill(-pid, syscall.SIGKILL)
			<-s.done
			err = errors.Join(err, fmt.Errorf("nginxtest: nginx did not stop within %v of SIGQUIT and was killed%s", stopTimeout, s.logs()))
		}
	}
	// Workers left behind by a master that died keep the group alive;
	// kill them and wait until none is left.
	syscall.Kill(-pid, syscall.SIGKILL)
	for deadline := time.Now().Add(stopTimeout); syscall.Kill(-pid, 0) == nil; {
		if time.Now().After(deadline) {
			return errors.Join(err, fmt.Errorf("nginxtest: nginx's workers (process group %d) are still running", pid))
		}
		time.Sleep(10 * time.Millisecond)
	}
	return err
}

// Dir returns the directory of nginx.conf, the logs and the pid file.
func (s *Server) Dir() string { return s.dir }

// Sites returns the sites as served, with the ports Start chose.
func (s *Server) Sites() []Site { return append([]Site(nil), s.sites...) }

// Addr returns the address ("127.0.0.2:8080") of the site called name, or
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
// none. Its requests carry the address as Host; nginx answers them with
// the address's first site, which is the site itself unless several
// share the address.
func (s *Server) URL(name string) string {
	if a := s.Addr(name); a != "" {
		return "http://" + a
	}
	return ""
}

var validName = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$`)

// checkSites validates sites and returns a copy with defaults filled in.
func checkSites(sites []Site) ([]Site, error) {
	if len(sites) == 0 {
		return nil, errors.New("nginxtest: no site")
	}
	out := make([]Site, len(sites))
	names := map[string]bool{}
	for i, s := range sites {
		if !validName.MatchString(s.Name) {
			return nil, fmt.Errorf("nginxtest: site name %q is not a host name", s.Name)
		}
		if names[strings.ToLower(s.Name)] {
			return nil, fmt.Errorf("nginxtest: two sites are called %q", s.Name)
		}
		names[strings.ToLower(s.Name)] = true
		host, port, err := net.SplitHostPort(s.Addr)
		if err != nil {
			return nil, fmt.Errorf("nginxtest: site %s: address %q: %w", s.Name, s.Addr, err)
		}
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			return nil, fmt.Errorf("nginxtest: site %s: address %q is not a loopback IP address: the test servers listen on loopback only", s.Name, s.Addr)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			return nil, fmt.Errorf("nginxtest: site %s: address %q has no valid port", s.Name, s.Addr)
		}
		if s.Root == "" {
			return nil, fmt.Errorf("nginxtest: site %s: no Root", s.Name)
		}
		if s.Root, err = filepath.Abs(s.Root); err != nil {
			return nil, fmt.Errorf("nginxtest: site %s: %w", s.Name, err)
		}
		if strings.ContainsAny(s.Root, `"$\;{}`+"\n\r\x00") {
			return nil, fmt.Errorf("nginxtest: site %s: Root %q has a character nginx.conf cannot quote", s.Name, s.Root)
		}
		l := &s.Limit
		if l.Rate < 0 || l.Burst < 0 || l.RetryAfter < 0 {
			return nil, fmt.Errorf("nginxtest: site %s: negative Limit %+v", s.Name, *l)
		}
		if l.Status == 0 {
			l.Status = 503
		}
		if l.Status < 400 || l.Status > 599 {
			return nil, fmt.Errorf("nginxtest: site %s: Limit.Status %d not in 400..599", s.Name, l.Status)
		}
		texts := append([]string(nil), s.Directives...)
		for _, loc := range s.Locations {
			if strings.TrimSpace(loc.Match) == "" {
				return nil, fmt.Errorf("nginxtest: site %s: a Location without Match", s.Name)
			}
			texts = append(texts, loc.Match)
			texts = append(texts, loc.Directives...)
		}
		for _, d := range texts {
			if strings.ContainsAny(d, "\n\r\x00") {
				return nil, fmt.Errorf("nginxtest: site %s: %q: a directive must fit on one line", s.Name, d)
			}
		}
		if s.NotFound != "" && (!strings.HasPrefix(s.NotFound, "/") || strings.ContainsAny(s.NotFound, " \t\"$;{}\\\n\r\x00")) {
			return nil, fmt.Errorf("nginxtest: site %s: NotFound %q is not a plain URI path", s.Name, s.NotFound)
		}
		out[i] = s
	}
	return out, nil
}

// pickPort returns addr, with a free port in place of port 0. Another
// process could take the port before nginx binds it; Start then fails
// with nginx's "Address already in use".
func pickPort(addr string) (string, error) {
	host, port, _ := net.SplitHostPort(addr)
	if port != "0" {
		return addr, nil
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("nginxtest: no free port on %s: %w", host, err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// tempDirs are the *_temp_path directories, under DIR/temp. nginx
// creates the compiled-in defaults (/var/lib/nginx/…) at startup unless
// told otherwise, which fails for a user other than root.
var tempDirs = []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"}

// logFormat is the access log format: one line per request, fields
// separated by tabs; Entries parses it. nginx escapes '"', '\' and bytes
// outside printable ASCII as \xHH (so a tab in a header cannot split a
// field) and logs an empty value as "-".
const logFormat = "$msec\t$server_name\t$status\t$request_method\t$request_uri\t$body_bytes_sent\t$request_time\t" +
	"$remote_addr\t$http_host\t$http_user_agent\t$connection\t$connection_requests\t$limit_req_status"

// config returns the text of nginx.conf for sites served from dir by bin.
func config(bin, dir string, sites []Site) (string, error) {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	q := strconv.Quote // the paths and names are checked: no '"', '\' or '$'
	p("# Written by internal/nginxtest (gentlecrawl) for one test.")
	if os.Geteuid() == 0 {
		// Workers would otherwise run as nobody, who cannot read the
		// test's temporary directory.
		p("user root;")
	}
	p("worker_processes 1;")
	// In the foreground: nginx is Launch's child, whose exit it sees.
	p("daemon off;")
	p("pid %s;", q(filepath.Join(dir, "nginx.pid")))
	p("lock_file %s;", q(filepath.Join(dir, "nginx.lock")))
	p("error_log %s notice;", q(filepath.Join(dir, "error.log")))
	p("events { worker_connections 1024; }")
	p("http {")
	p("  types { text/html html htm; text/plain txt; text/css css; application/javascript js; application/json json;")
	p("          application/xml xml; image/png png; image/jpeg jpg jpeg; image/gif gif; image/svg+xml svg;")
	p("          application/pdf pdf; application/zip zip; application/gzip gz; }")
	p("  default_type text/html;")
	p("  charset utf-8;")
	p("  sendfile on;")
	// keepalive_timeout (75s) and keepalive_requests (1000) are nginx's
	// defaults, so connection reuse is as a crawler meets it.
	missing, err := missingModules(bin)
	if err != nil {
		return "", err
	}
	for _, t := range tempDirs {
		if !missing[t] {
			p("  %s_temp_path %s;", t, q(filepath.Join(dir, "temp", t)))
		}
	}
	p("  log_format nginxtest %s;", q(logFormat))
	// Unbuffered (no buffer= or gzip=): nginx writes each line as its
	// request ends.
	p("  access_log %s nginxtest;", q(filepath.Join(dir, "access.log")))
	// Refusals are in the access log ($limit_req_status); keep them out of
	// the error log, below its level.
	p("  limit_req_log_level info;")
	for i, s := range sites {
		if s.Limit.Rate > 0 {
			p("  limit_req_zone $binary_remote_addr zone=site%d:1m rate=%dr/s;", i, s.Limit.Rate)
			if s.Limit.RetryAfter > 0 {
				// $limit_req_status is REJECTED only for a refusal of
				// limit_req, and add_header adds nothing for an empty
				// value: so Retry-After goes on refusals and on nothing
				// else, not even other answers with the same status.
				p("  map $limit_req_status $retry_after%d { REJECTED %d; default \"\"; }", i, s.Limit.RetryAfter)
			}
		}
	}
	for i, s := range sites {
		p("  server {")
		p("    listen %s;", s.Addr)
		p("    server_name %s;", s.Name)
		p("    root %s;", q(s.Root))
		p("    index index.html;")
		if l := s.Limit; l.Rate > 0 {
			if l.Burst > 0 {
				p("    limit_req zone=site%d burst=%d nodelay;", i, l.Burst)
			} else {
				// nginx refuses "burst=0"; without burst none is allowed.
				p("    limit_req zone=site%d;", i)
			}
			p("    limit_req_status %d;", l.Status)
			if l.RetryAfter > 0 {
				// always: add_header otherwise skips error statuses.
				p("    add_header Retry-After $retry_after%d always;", i)
			}
		}
		if s.Gzip {
			p("    gzip on;")
			p("    gzip_vary on;")
			p("    gzip_types text/plain text/css application/javascript application/json application/xml text/xml;")
		}
		for _, d := range s.Directives {
			p("    %s", directive(d))
		}
		for _, loc := range s.Locations {
			p("    location %s {", loc.Match)
			for _, d := range loc.Directives {
				p("      %s", directive(d))
			}
			p("    }")
		}
		// A query selects the file named with it, as WriteSite saves the
		// pages whose URL has one; then the file, the directory's index,
		// or 404 (or NotFound's file: a soft 404).
		fallback := "=404"
		if s.NotFound != "" {
			fallback = s.NotFound
		}
		p(`    location / { try_files "$uri$is_args$args" $uri $uri/ %s; }`, fallback)
		p("  }")
	}
	p("}")
	return b.String(), nil
}

// directive ends d with ';', unless it is a block.
func directive(d string) string {
	if d = strings.TrimSpace(d); strings.HasSuffix(d, "}") || strings.HasSuffix(d, ";") {
		return d
	}
	return d + ";"
}

var modules struct {
	sync.Mutex
	missing map[string]map[string]bool // by binary
}

// missingModules returns the temp-path modules (tempDirs) that bin was
// built without: their *_temp_path directives would be unknown.
func missingModules(bin string) (map[string]bool, error) {
	modules.Lock()
	defer modules.Unlock()
	if m, ok := modules.missing[bin]; ok {
		return m, nil
	}
	out, err := exec.Command(bin, "-V").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("nginxtest: %s -V: %v: %s", bin, err, out)
	}
	m := map[string]bool{}
	for _, t := range tempDirs {
		if t != "client_body" && bytes.Contains(out, []byte("--without-http_"+t+"_module")) {
			m[t] = true
		}
	}
	if modules.missing == nil {
		modules.missing = map[string]map[string]bool{}
	}
	modules.missing[bin] = m
	return m, nil
}
