package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/botauthtest"
	"github.com/gentlecrawl/gentlecrawl/internal/httpsig"
	"github.com/gentlecrawl/gentlecrawl/internal/warccheck"
	"github.com/gentlecrawl/gentlecrawl/site"
	"github.com/gentlecrawl/gentlecrawl/warc"
)

// helperArgs carries the command line of a child process of the test
// binary (helperRun).
const helperArgs = "GENTLECRAWL_CLI_HELPER_ARGS"

// TestCLIHelperProcess is the child process of helperRun, not a test.
func TestCLIHelperProcess(t *testing.T) {
	raw := os.Getenv(helperArgs)
	if raw == "" {
		t.Skip("the child process of helperRun")
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	os.Exit(Run(ctx, args, os.Stdout, os.Stderr))
}

// helperRun runs a command line in a child process of the test binary,
// with env added: for settings read once per process, such as the
// certificates Go trusts (SSL_CERT_FILE).
func helperRun(t *testing.T, env []string, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	a, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCLIHelperProcess$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), helperArgs+"="+string(a)), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errb.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, out.String(), errb.String()
}

// recorded is a request as a test site received it.
type recorded struct {
	scheme string
	req    *http.Request
}

type recorder struct {
	mu   sync.Mutex
	reqs []recorded
}

func (rec *recorder) wrap(scheme string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, recorded{scheme, r.Clone(context.Background())})
		rec.mu.Unlock()
		h(w, r)
	}
}

func (rec *recorder) all() []recorded {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]recorded(nil), rec.reqs...)
}

// TestSignedCrawl: keygen's key, published by an agent's origin; a crawl
// with --sign-key over http:// (the crawler's own HTTP/1.1 client) and
// https:// (net/http's Transport), robots.txt, a sitemap and a redirect to
// another authority included: every request the sites receive is signed
// for its own authority, npm's web-bot-auth and package site verify each
// against the published directory, the WARC request records hold the
// fields as sent, and gentlecrawl verify says so of a request from a log.
// Without --sign-key nothing is signed.
func TestSignedCrawl(t *testing.T) {
	keys := t.TempDir()
	if code, out, errs := run(t, "keygen", "--out", keys); code != 0 || !strings.Contains(out, "Key id (JWK thumbprint): ") {
		t.Fatalf("keygen: %d\n%s%s", code, out, errs)
	}
	if fi, err := os.Stat(filepath.Join(keys, keyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the private key: %v, %v", fi.Mode(), err)
	}
	directory, err := os.ReadFile(filepath.Join(keys, directoryFile))
	if err != nil {
		t.Fatal(err)
	}
	published, _, err := httpsig.ParseDirectory(directory)
	if err != nil || len(published) != 1 {
		t.Fatalf("keygen's directory: %v", err)
	}

	// The agent's origin publishes the directory; over TLS, with
	// httptest's certificate, which every TLS server here shares.
	agent := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != httpsig.WellKnownPath {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", httpsig.MediaType)
		w.Header().Set("Cache-Control", "max-age=86400")
		w.Write(directory)
	}))
	defer agent.Close()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: agent.Certificate().Raw}), 0o644)

	var rec recorder
	page := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, body)
		}
	}
	b := httptest.NewServer(rec.wrap("http", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/target":
			page(`<p>moved here</p>`)(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	defer b.Close()
	// HTTP/2, as most https:// sites speak it.
	c := httptest.NewUnstartedServer(rec.wrap("https", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			page(`<a href="/c2">c2</a>`)(w, r)
		case "/c2":
			page(`<p>c2</p>`)(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	c.EnableHTTP2 = true
	c.StartTLS()
	defer c.Close()
	var a *httptest.Server
	a = httptest.NewUnstartedServer(rec.wrap("http", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nAllow: /\nSitemap: %s/sitemap.xml\n", a.URL)
		case "/sitemap.xml":
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprintf(w, `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%s/from-sitemap</loc></url></urlset>`, a.URL)
		case "/":
			page(`<a href="/one">one</a> <a href="/moved">moved</a>`)(w, r)
		case "/moved":
			http.Redirect(w, r, b.URL+"/target", http.StatusMovedPermanently)
		case "/one", "/from-sitemap":
			page(`<a href="/">home</a>`)(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	a.Start()
	defer a.Close()

	// The crawl trusts httptest's certificate in a process of its own.
	job := t.TempDir()
	crawlStart := time.Now()
	code, out, errs := helperRun(t, []string{"SSL_CERT_FILE=" + caFile}, "",
		"crawl", "--job", job, "--allow-private-networks", "--delay", "20ms", "-q",
		"--sign-key", filepath.Join(keys, keyFile), "--signature-agent", agent.URL+"/",
		a.URL+"/", c.URL+"/")
	if code != 0 {
		t.Fatalf("crawl: exit %d\n%s%s", code, out, errs)
	}
	warccheck.Job(t, job)
	reqs := rec.all()
	want := map[string]bool{}
	for _, p := range []string{"/robots.txt", "/sitemap.xml", "/", "/one", "/moved", "/from-sitemap"} {
		want[a.Listener.Addr().String()+p] = true
	}
	for _, p := range []string{"/robots.txt", "/target"} {
		want[b.Listener.Addr().String()+p] = true
	}
	for _, p := range []string{"/robots.txt", "/", "/c2"} {
		want[c.Listener.Addr().String()+p] = true
	}
	for _, r := range reqs {
		delete(want, r.req.Host+r.req.RequestURI)
	}
	if len(want) > 0 {
		t.Fatalf("the crawl did not ask for %v (asked %d)", want, len(reqs))
	}

	// Package site verifies each request as its server received it.
	pool := x509.NewCertPool()
	pool.AddCert(agent.Certificate())
	ba := &site.BotAuth{AllowPrivateNetworks: true, TLSConfig: &tls.Config{RootCAs: pool}}
	byNonce := map[string]*http.Request{}
	var npmReqs []botauthtest.Request
	for _, r := range reqs {
		if got := r.req.Header.Get("Signature-Agent"); got != `"`+agent.URL+`"` {
			t.Errorf("%s %s: Signature-Agent %q", r.req.Host, r.req.RequestURI, got)
		}
		if !strings.HasPrefix(r.req.UserAgent(), "gentlecrawl/") {
			t.Errorf("User-Agent %q", r.req.UserAgent())
		}
		if r.scheme == "https" && r.req.ProtoMajor != 2 {
			t.Errorf("%s: %s, want HTTP/2", r.req.RequestURI, r.req.Proto)
		}
		id := ba.VerifyRequest(withTLS(r))
		if id.Verdict != site.VerifiedBySignature || id.Agent != agent.URL || published[id.KeyID] == nil {
			t.Errorf("%s://%s%s: %v: %s", r.scheme, r.req.Host, r.req.RequestURI, id.Verdict, id.Why)
		}
		sigs, _ := httpsig.ParseSignatures(r.req.Header, httpsig.DefaultLimits)
		if len(sigs) == 1 {
			byNonce[sigs[0].Nonce] = r.req
		}
		npmReqs = append(npmReqs, botauthtest.FromHTTP(r.req, r.scheme))
	}
	if len(byNonce) != len(reqs) {
		t.Errorf("%d nonces for %d requests", len(byNonce), len(reqs))
	}

	// The WARC request records hold the fields the sites received.
	files, _ := filepath.Glob(filepath.Join(job, "warc", "*.warc.gz"))
	inWARC := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		wr, err := warc.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		for {
			record, err := wr.Next()
			if err != nil {
				break
			}
			if record.Type != "request" {
				continue
			}
			req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(record.Block)))
			if err != nil {
				t.Fatalf("%s: %v", record.Get("WARC-Target-URI"), err)
			}
			sigs, err := httpsig.ParseSignatures(req.Header, httpsig.DefaultLimits)
			if err != nil || len(sigs) != 1 {
				t.Errorf("%s: the request record has %d signatures (%v)", record.Get("WARC-Target-URI"), len(sigs), err)
				continue
			}
			got := byNonce[sigs[0].Nonce]
			if got == nil {
				t.Errorf("%s: the request record's nonce was not received", record.Get("WARC-Target-URI"))
				continue
			}
			inWARC++
			for _, f := range []string{"Signature", "Signature-Input", "Signature-Agent", "User-Agent"} {
				if req.Header.Get(f) != got.Header.Get(f) {
					t.Errorf("%s: %s recorded %q, received %q", record.Get("WARC-Target-URI"), f, req.Header.Get(f), got.Header.Get(f))
				}
			}
		}
	}
	if inWARC < 8 {
		t.Errorf("%d request records matched", inWARC)
	}

	// gentlecrawl verify, of a request as a log gives it.
	var text strings.Builder
	var one *http.Request
	for _, r := range reqs {
		if r.req.RequestURI == "/one" {
			one = r.req
		}
	}
	fmt.Fprintf(&text, "GET /one HTTP/1.1\nHost: %s\n", one.Host)
	for k, vs := range one.Header {
		fmt.Fprintf(&text, "%s: %s\n", k, vs[0])
	}
	env := []string{"SSL_CERT_FILE=" + caFile}
	code, out, errs = helperRun(t, env, text.String(), "verify", "--allow-private-networks", "--scheme", "http")
	if code != 0 || !strings.Contains(out, "verdict:    signature") || !strings.Contains(out, "agent:      "+agent.URL) {
		t.Errorf("verify: exit %d\n%s%s", code, out, errs)
	}
	later := crawlStart.Add(10 * time.Minute).UTC().Format(time.RFC3339)
	code, out, _ = helperRun(t, env, text.String(), "verify", "--allow-private-networks", "--scheme", "http", "--at", later, "--json")
	var v struct{ Verdict, Why, Signature string }
	if json.Unmarshal([]byte(out), &v); code != 1 || v.Verdict != "unverified" || !strings.Contains(v.Why, "expired") {
		t.Errorf("verify --at %s: exit %d, %+v", later, code, v)
	}

	// Without --sign-key, nothing is signed.
	before := len(rec.all())
	if code, out, errs := run(t, "crawl", "--job", t.TempDir(), "--allow-private-networks", "--delay", "20ms", "-q", a.URL+"/"); code != 0 {
		t.Fatalf("unsigned crawl: %d\n%s%s", code, out, errs)
	}
	unsigned := rec.all()[before:]
	if len(unsigned) < 4 {
		t.Fatalf("%d requests of the unsigned crawl", len(unsigned))
	}
	for _, r := range unsigned {
		for _, f := range []string{"Signature", "Signature-Input", "Signature-Agent"} {
			if v := r.req.Header.Get(f); v != "" {
				t.Errorf("unsigned crawl, %s: %s: %s", r.req.RequestURI, f, v)
			}
		}
	}

	// Last, as it skips without node: npm's web-bot-auth verifies each
	// signed request against the directory as published. Its signatures
	// hold for a minute, and web-bot-auth allows no skew.
	if d := time.Since(crawlStart); d > 50*time.Second {
		t.Fatalf("the signatures of the crawl have expired (%v)", d)
	}
	verdicts := botauthtest.Verify(t, caFile, npmReqs)
	ok := 0
	for i, v := range verdicts {
		if !v.OK || published[v.KeyID] == nil || v.ContentType != httpsig.MediaType {
			t.Errorf("web-bot-auth on %s: %+v", npmReqs[i].URL, v)
		} else {
			ok++
		}
	}
	t.Logf("%d requests signed (%d request records match them); web-bot-auth %s verified %d", len(reqs), inWARC, botauthtest.Version, ok)
}

// withTLS marks a recorded https:// request as having come over TLS, as
// the server saw it.
func withTLS(r recorded) *http.Request {
	req := r.req
	if r.scheme == "https" && req.TLS == nil {
		req.TLS = &tls.ConnectionState{}
	}
	return req
}

func TestSigningFlagsRefused(t *testing.T) {
	keys := t.TempDir()
	if code, _, _ := run(t, "keygen", "--out", keys); code != 0 {
		t.Fatal("keygen failed")
	}
	key := filepath.Join(keys, keyFile)
	os.WriteFile(filepath.Join(keys, "public.json"), []byte(`{"kty":"OKP","crv":"Ed25519","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"}`), 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--sign-key", key}, "--sign-key needs --signature-agent"},
		{[]string{"--signature-agent", "https://crawler.example"}, "--signature-agent needs --sign-key"},
		{[]string{"--sign-key", key, "--signature-agent", "http://crawler.example"}, "https://"},
		{[]string{"--sign-key", key, "--signature-agent", "https://crawler.example/keys"}, "origin"},
		{[]string{"--sign-key", filepath.Join(keys, directoryFile), "--signature-agent", "https://crawler.example"}, "not a private key"},
		{[]string{"--sign-key", filepath.Join(keys, "public.json"), "--signature-agent", "https://crawler.example"}, "private key (d) is missing"},
		{[]string{"--sign-key", filepath.Join(keys, "absent"), "--signature-agent", "https://crawler.example"}, "no such file"},
	} {
		args := append([]string{"crawl", "--job", t.TempDir(), "http://example.org/"}, c.args...)
		code, _, errs := run(t, args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
	if code, _, errs := run(t, "keygen", "--out", keys); code != 1 || !strings.Contains(errs, "exists") {
		t.Errorf("keygen over a key: %d %q", code, errs)
	}
	if code, _, _ := run(t, "keygen"); code != 2 {
		t.Errorf("keygen without --out: %d", code)
	}
	// A key others can read is used, with a warning.
	os.Chmod(key, 0o644)
	var errb bytes.Buffer
	if _, err := readSignKey(key, &errb); err != nil || !strings.Contains(errb.String(), "chmod 600") {
		t.Errorf("readable key: %v, %q", err, errb.String())
	}
}

func TestVerifyInput(t *testing.T) {
	for _, c := range []struct {
		in   string
		code int
		want string
	}{
		{"", 2, "empty"},
		{"garbage\n", 2, "not a request head"},
		{"GET / HTTP/1.1\nUser-Agent: x\n", 2, "no Host"},
		{strings.Repeat("x", maxRequestText+1), 2, "more than"},
		{"GET / HTTP/1.1\r\nHost: example.org\r\nUser-Agent: curl/8\r\n\r\nbody", 1, "verdict:    unverified"},
		{"\n\nGET https://example.org/a?b HTTP/1.1\nUser-Agent: curl/8", 1, "no Web Bot Auth signature"},
		{"GET / HTTP/1.1\nHost: example.org\nSignature-Input: sig1=(\"@authority\"\nSignature: sig1=:AA==:\n", 1, "malformed signature fields"},
	} {
		var out, errb bytes.Buffer
		cmd := newRoot(context.Background(), &out, &errb)
		cmd.SetIn(strings.NewReader(c.in))
		cmd.SetArgs([]string{"verify", "-"})
		err := cmd.Execute()
		got := 0
		if ex, ok := err.(exitError); ok {
			got = ex.code
		} else if err != nil {
			got = 1
		}
		if got != c.code || !strings.Contains(out.String()+errb.String()+fmt.Sprint(err), c.want) {
			t.Errorf("%.40q: exit %d, %q %v; want %d and %q", c.in, got, out.String(), err, c.code, c.want)
		}
	}
}
