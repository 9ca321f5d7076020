package cmstest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/apachetest"
)

// PHP runs in Apache as mod_php, which is not thread-safe: Debian's
// libapache2-mod-php switches Apache to the prefork MPM, and so does this
// configuration. internal/apachetest's configuration (the event MPM, no
// PHP, no mod_rewrite) cannot serve PHP, so the sites have their own, in
// the same self-contained style; Binary and ModuleDir come from there.

// phpModule returns the path of mod_php (libphpX.Y.so) in
// apachetest.ModuleDir, or "" if there is none.
func phpModule() string {
	ms, _ := filepath.Glob(filepath.Join(apachetest.ModuleDir, "libphp*.so"))
	if len(ms) == 0 {
		return ""
	}
	return ms[len(ms)-1]
}

// apacheNeeds are the files a site's Apache needs, and their packages.
func apacheNeeds() map[string]string {
	m := map[string]string{
		"/usr/sbin/apache2": "apache2",
		filepath.Join(apachetest.ModuleDir, "mod_mpm_prefork.so"): "apache2",
		filepath.Join(apachetest.ModuleDir, "mod_rewrite.so"):     "apache2",
		phpBinary: "php-cli",
	}
	if phpModule() == "" {
		m[filepath.Join(apachetest.ModuleDir, "libphp8.2.so")] = "libapache2-mod-php"
	}
	return m
}

// apache is a running Apache for one site.
type apache struct {
	dir  string
	addr string // 127.0.0.1:port
	proc *process
}

// apacheSite is what a site's configuration says beyond the common part.
type apacheSite struct {
	// Root is the DocumentRoot.
	Root string
	// Override is the AllowOverride of Root: "None", or "FileInfo" for
	// WordPress's .htaccess (mod_rewrite).
	Override string
	// Index is the DirectoryIndex.
	Index string
	// Lines are more directives for the server, as written.
	Lines []string
}

// modules are the modules the configuration loads from ModuleDir, beyond
// those Debian's apache2 has built in (core, mod_so, mod_watchdog,
// http_core, mod_log_config, mod_logio, mod_version, mod_unixd).
var modules = []struct{ name, file string }{
	{"mpm_prefork_module", "mod_mpm_prefork.so"},
	{"authz_core_module", "mod_authz_core.so"},
	{"mime_module", "mod_mime.so"},
	{"dir_module", "mod_dir.so"},
	{"rewrite_module", "mod_rewrite.so"},
	{"log_config_module", "mod_log_config.so"},
}

// logFormat is the access log format: tab-separated, with Apache's
// escaping of the request line and the header ('"', '\' and control
// characters as \", \\, \t, \xHH…; "-" for an absent header), so that a
// tab never splits a field.
const logFormat = `%{end:usec}t\t%>s\t%r\t%B\t%{User-Agent}i`

// mimeTypes is the TypesConfig: the types the two CMSs serve files of.
const mimeTypes = `text/html html htm
text/plain txt
text/css css
application/javascript js mjs
application/json json
application/xml xml
image/png png
image/jpeg jpg jpeg
image/gif gif
image/svg+xml svg
image/x-icon ico
font/woff woff
font/woff2 woff2
`

// config returns apache2.conf for site, served from dir on addr.
func config(dir, addr string, site apacheSite) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	q := strconv.Quote
	p("# Written by internal/cmstest (gentlecrawl) for one test.")
	p("ServerRoot %s", q(dir))
	p("DefaultRuntimeDir %s", q(dir))
	p("PidFile %s", q(filepath.Join(dir, "apache2.pid")))
	p("ErrorLog %s", q(filepath.Join(dir, "error.log")))
	p("LogLevel warn")
	for _, m := range modules {
		p("<IfModule !%s>", m.name)
		p("  LoadModule %s %s", m.name, q(filepath.Join(apachetest.ModuleDir, m.file)))
		p("</IfModule>")
	}
	p("LoadModule php_module %s", q(phpModule()))
	if os.Geteuid() == 0 {
		p("User %s", runUser)
		p("Group %s", runUser)
	}
	// Enough processes for a few concurrent requests on two cores; each
	// PHP request runs in one.
	p("StartServers 4")
	p("MinSpareServers 2")
	p("MaxSpareServers 8")
	p("MaxRequestWorkers 16")
	p("MaxConnectionsPerChild 0")
	p("ServerName 127.0.0.1")
	p("ServerTokens OS")
	p("TraceEnable Off")
	p("TypesConfig %s", q(filepath.Join(dir, "mime.types")))
	p("LogFormat %s cmstest", q(logFormat))
	p("CustomLog %s cmstest", q(filepath.Join(dir, "access.log")))
	p("<Directory />")
	p("  Options FollowSymLinks")
	p("  AllowOverride None")
	p("  Require all denied")
	p("</Directory>")
	// As Debian's apache2.conf and php8.2.conf have it.
	p(`<FilesMatch "^\.ht">`)
	p("  Require all denied")
	p("</FilesMatch>")
	p(`<FilesMatch ".+\.ph(ar|p|tml)$">`)
	p("  SetHandler application/x-httpd-php")
	p("</FilesMatch>")
	p("Listen %s", addr)
	p("DocumentRoot %s", q(site.Root))
	p("DirectoryIndex %s", site.Index)
	p("<Directory %s>", q(site.Root))
	p("  Options FollowSymLinks")
	p("  AllowOverride %s", site.Override)
	p("  Require all granted")
	p("</Directory>")
	for _, l := range site.Lines {
		p("%s", l)
	}
	return b.String()
}

// startApache writes the configuration of site into dir and starts Apache
// on a free port of 127.0.0.1. It tries three ports: another process may
// take the one picked before Apache binds it.
func startApache(ctx context.Context, dir string, site apacheSite) (*apache, error) {
	bin, err := apachetest.Binary()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "mime.types"), []byte(mimeTypes), 0o644); err != nil {
		return nil, err
	}
	var errs []error
	for range 3 {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		a, err := launchApache(ctx, bin, dir, addr, site)
		if err == nil {
			return a, nil
		}
		errs = append(errs, err)
		if !strings.Contains(err.Error(), "Address already in use") {
			break
		}
	}
	return nil, errors.Join(errs...)
}

func launchApache(ctx context.Context, bin, dir, addr string, site apacheSite) (*apache, error) {
	conf := filepath.Join(dir, "apache2.conf")
	if err := os.WriteFile(conf, []byte(config(dir, addr, site)), 0o644); err != nil {
		return nil, err
	}
	for _, f := range []string{"apache2.pid", "error.log", "access.log", "stderr.log"} {
		os.Remove(filepath.Join(dir, f))
	}
	stderr, err := os.Create(filepath.Join(dir, "stderr.log"))
	if err != nil {
		return nil, err
	}
	defer stderr.Close()
	// -DFOREGROUND: the parent does not detach, so that it stays our
	// child. Apache reads no environment variable from a configuration
	// that names none.
	cmd := exec.Command(bin, "-d", dir, "-f", conf, "-DFOREGROUND")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C", "TZ=UTC"}
	cmd.Stdout, cmd.Stderr = stderr, stderr
	p, err := startProcess(cmd)
	if err != nil {
		return nil, fmt.Errorf("cmstest: apache2: %w", err)
	}
	a := &apache{dir: dir, addr: addr, proc: p}
	if err := a.waitReady(ctx); err != nil {
		a.proc.stop(10 * time.Second)
		return nil, fmt.Errorf("cmstest: apache2 did not start: %w%s", err, a.logs())
	}
	return a, nil
}

// waitReady waits until Apache has written its pid file, which it does
// after binding its listener, and the address accepts connections.
func (a *apache) waitReady(ctx context.Context) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-a.proc.done:
			return fmt.Errorf("it exited (%v)", a.proc.wait)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		b, _ := os.ReadFile(filepath.Join(a.dir, "apache2.pid"))
		if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); pid != a.proc.cmd.Process.Pid {
			continue
		}
		if c, err := net.DialTimeout("tcp", a.addr, 100*time.Millisecond); err == nil {
			c.Close()
			return nil
		}
	}
}

// logs returns Apache's stderr and error log, for an error message.
func (a *apache) logs() string {
	var b strings.Builder
	for _, f := range []string{"stderr.log", "error.log"} {
		if out, _ := os.ReadFile(filepath.Join(a.dir, f)); len(bytes.TrimSpace(out)) > 0 {
			fmt.Fprintf(&b, "\n%s:\n%s", f, lastLines(out, 30))
		}
	}
	return b.String()
}

// stop stops Apache: SIGTERM (the parent stops its children and exits),
// SIGKILL to its process group after 10 seconds.
func (a *apache) stop() error {
	if err := a.proc.stop(10 * time.Second); err != nil {
		return fmt.Errorf("cmstest: apache2: %w%s", err, a.logs())
	}
	return nil
}

// requests reads and parses the access log. A last line without its
// newline is still being written, and left out.
func (a *apache) requests() ([]Request, error) {
	b, err := os.ReadFile(filepath.Join(a.dir, "access.log"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cmstest: %w", err)
	}
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[:i+1]
	} else {
		b = nil
	}
	var out []Request
	for n := 1; len(b) > 0; n++ {
		line, rest, _ := bytes.Cut(b, []byte("\n"))
		b = rest
		r, err := parseLine(string(line))
		if err != nil {
			return out, fmt.Errorf("cmstest: access.log line %d: %w: %q", n, err, line)
		}
		out = append(out, r)
	}
	return out, nil
}

func parseLine(line string) (Request, error) {
	f := strings.Split(line, "\t")
	if len(f) != 5 {
		return Request{}, fmt.Errorf("%d fields, want 5", len(f))
	}
	var r Request
	usec, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return r, err
	}
	r.Time = time.UnixMicro(usec)
	if r.Status, err = strconv.Atoi(f[1]); err != nil {
		return r, err
	}
	// The request line: at most three words; one Apache refused may have
	// fewer.
	reqLine := unescape(f[2])
	r.Method = reqLine
	if m, rest, ok := strings.Cut(reqLine, " "); ok {
		r.Method = m
		r.URI, _, _ = strings.Cut(rest, " ")
	}
	if r.Bytes, err = strconv.ParseInt(f[3], 10, 64); err != nil {
		return r, err
	}
	r.UserAgent = unescape(f[4])
	return r, nil
}

// unescape undoes Apache's log escaping (ap_escape_logitem): "-" for an
// absent value; \" and \\ for '"' and '\'; \b, \n, \r, \t, \v for those
// control characters; \xHH for other bytes outside printable ASCII.
func unescape(s string) string {
	if s == "-" {
		return ""
	}
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch c := s[i+1]; c {
		case '"', '\\':
			b.WriteByte(c)
		case 'b':
			b.WriteByte('\b')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case 'x':
			if i+3 < len(s) {
				if v, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil {
					b.WriteByte(byte(v))
					i += 3
					continue
				}
			}
			b.WriteByte(s[i])
			continue
		default:
			b.WriteByte(s[i])
			continue
		}
		i++
	}
	return b.String()
}

// process is a server started as our child, in a process group of its
// own, so that its children can be stopped with it. It gets SIGTERM when
// the test process dies (Pdeathsig), so that a test binary killed before
// its cleanups leaves no server behind: Apache then stops its children,
// MariaDB shuts down. (Its files in /dev/shm stay.)
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when it has exited
	wait error         // cmd.Wait's error; read after done
}

func startProcess(cmd *exec.Cmd) (*process, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.wait = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// stop sends SIGTERM, waits up to timeout, then kills the process group,
// and waits until none of the group is left. It returns an error if the
// process had to be killed or had exited before.
func (p *process) stop(timeout time.Duration) error {
	pid := p.cmd.Process.Pid
	var err error
	select {
	case <-p.done:
		err = fmt.Errorf("%w (%v)", errStopped, p.wait)
	default:
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(timeout):
			syscall.Kill(-pid, syscall.SIGKILL)
			<-p.done
			err = fmt.Errorf("it did not stop within %v of SIGTERM and was killed", timeout)
		}
	}
	// Children left behind keep the group alive: kill them and wait
	// until none is left.
	syscall.Kill(-pid, syscall.SIGKILL)
	for deadline := time.Now().Add(timeout); syscall.Kill(-pid, 0) == nil; {
		if time.Now().After(deadline) {
			return errors.Join(err, fmt.Errorf("its children (process group %d) are still running", pid))
		}
		time.Sleep(10 * time.Millisecond)
	}
	return err
}
