// Package proxytest runs a real HTTP proxy, Debian's tinyproxy, on
// loopback for tests: the crawler's requests through it, in absolute form
// for http:// and through CONNECT for https://, are those a user behind a
// proxy makes.
//
// Tests call Start, which skips the test when tinyproxy is not installed,
// unless the CI environment variable is set: then it fails, since CI must
// run every test. scripts/test installs it (apt-get install tinyproxy).
package proxytest

import (
	"bufio"
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

// Binary returns the path of tinyproxy, or an error saying how to install
// it.
func Binary() (string, error) {
	for _, p := range []string{"/usr/bin/tinyproxy", "/usr/sbin/tinyproxy"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("tinyproxy"); err == nil {
		return p, nil
	}
	return "", errors.New("proxytest: tinyproxy is not installed (apt-get install tinyproxy)")
}

// Require skips the test when tinyproxy is missing, or fails it when the
// CI environment variable is set.
func Require(t testing.TB) {
	t.Helper()
	if _, err := Binary(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// Options configure the proxy.
type Options struct {
	// User and Password, when User is set, are demanded of every request
	// (tinyproxy's BasicAuth): without them it answers 407.
	User, Password string
}

// Proxy is a running tinyproxy.
type Proxy struct {
	// Addr is the host:port it listens on, on 127.0.0.1.
	Addr string

	opts Options
	dir  string
	cmd  *exec.Cmd
	done chan struct{}

	stopOnce sync.Once
}

// URL is the proxy's URL, with the credentials of Options when set.
func (p *Proxy) URL() string {
	if p.opts.User != "" {
		return "http://" + p.opts.User + ":" + p.opts.Password + "@" + p.Addr
	}
	return "http://" + p.Addr
}

// Start runs tinyproxy in t.TempDir() and stops it when the test ends.
func Start(t testing.TB, opts Options) *Proxy {
	t.Helper()
	Require(t)
	var p *Proxy
	var err error
	// The port is chosen free, then handed to tinyproxy: another process
	// can take it in between, so a failed start tries another.
	for range 5 {
		if p, err = launch(t.TempDir(), opts); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

var credential = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

func launch(dir string, opts Options) (*Proxy, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	if opts.User != "" && (!credential.MatchString(opts.User) || !credential.MatchString(opts.Password)) {
		return nil, errors.New("proxytest: user and password must be letters, digits, '.', '_' or '-'")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	// No ConnectPort line: CONNECT to any port. LogLevel Connect logs
	// each request line, which Requests reads.
	conf := fmt.Sprintf("Port %d\nListen 127.0.0.1\nTimeout 60\nMaxClients 256\nAllow 127.0.0.1\nLogLevel Connect\n", port)
	if opts.User != "" {
		conf += fmt.Sprintf("BasicAuth %s %s\n", opts.User, opts.Password)
	}
	confPath := filepath.Join(dir, "tinyproxy.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "tinyproxy.log"))
	if err != nil {
		return nil, err
	}
	defer log.Close()
	// -d: in the foreground, logging to standard output.
	cmd := exec.Command(bin, "-d", "-c", confPath)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("proxytest: %w", err)
	}
	p := &Proxy{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), opts: opts, dir: dir, cmd: cmd, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(p.done)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case <-p.done:
			b, _ := os.ReadFile(filepath.Join(dir, "tinyproxy.log"))
			return nil, fmt.Errorf("proxytest: tinyproxy exited at start:\n%s", b)
		default:
		}
		if c, err := net.DialTimeout("tcp", p.Addr, time.Second); err == nil {
			c.Close()
			return p, nil
		}
		if time.Now().After(deadline) {
			p.Stop()
			return nil, errors.New("proxytest: tinyproxy did not listen within 20 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop stops tinyproxy: SIGTERM, then SIGKILL to its process group after
// five seconds.
func (p *Proxy) Stop() {
	p.stopOnce.Do(func() {
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
	})
}

// Request is one request line tinyproxy received, in the order received.
type Request struct {
	Method string // GET, CONNECT, …
	Target string // "http://host:port/path" (absolute form) or "host:port" (CONNECT)
}

// requestLine matches tinyproxy's log line of a request:
// "CONNECT   Dec 06 12:41:52.312 [12698]: Request (file descriptor 4): GET http://… HTTP/1.1".
var requestLine = regexp.MustCompile(`\]: Request \(file descriptor \d+\): (\S+) (\S+) HTTP/\d\.\d$`)

// Requests returns the requests logged so far.
func (p *Proxy) Requests() ([]Request, error) {
	f, err := os.Open(filepath.Join(p.dir, "tinyproxy.log"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Request
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if m := requestLine.FindStringSubmatch(strings.TrimRight(sc.Text(), "\r")); m != nil {
			out = append(out, Request{Method: m[1], Target: m[2]})
		}
	}
	return out, sc.Err()
}

// WaitRequests waits until at least n requests are logged (tinyproxy logs
// a request as it reads it, but a test may read the log first), or ctx
// ends.
func (p *Proxy) WaitRequests(ctx context.Context, n int) ([]Request, error) {
	for {
		reqs, err := p.Requests()
		if err != nil || len(reqs) >= n {
			return reqs, err
		}
		select {
		case <-ctx.Done():
			return reqs, fmt.Errorf("proxytest: %d requests logged, want %d: %w", len(reqs), n, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
