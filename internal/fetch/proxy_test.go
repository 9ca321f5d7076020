package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/proxytest"
)

func TestParseProxyURL(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		bad      bool
	}{
		{in: "http://proxy.example:3128", want: "http://proxy.example:3128"},
		{in: "proxy.example:3128", want: "http://proxy.example:3128"},
		{in: "HTTP://proxy.example:3128/", want: "http://proxy.example:3128"},
		{in: "http://u:p@127.0.0.1:8888", want: "http://u:p@127.0.0.1:8888"},
		{in: "http://[::1]:8888", want: "http://[::1]:8888"},
		{in: "http://proxy.example", want: "http://proxy.example"},
		{in: "", bad: true},
		{in: "https://proxy.example:443", bad: true},
		{in: "socks5://127.0.0.1:1080", bad: true},
		{in: "http://:3128", bad: true},
		{in: "http://proxy.example:99999", bad: true},
		{in: "http://proxy.example:3128/path", bad: true},
		{in: "http://proxy.example:3128/?q=1", bad: true},
	} {
		u, err := ParseProxyURL(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseProxyURL(%q) = %v, want an error", tc.in, u)
			}
			continue
		}
		if err != nil || u.String() != tc.want {
			t.Errorf("ParseProxyURL(%q) = %v, %v; want %s", tc.in, u, err, tc.want)
		}
	}
	// A password never appears in the error.
	if _, err := ParseProxyURL("https://user:secret@proxy.example:3128"); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("error %v shows the password, or no error", err)
	}
}

func TestProxyFor(t *testing.T) {
	px := mustURL(t, "http://proxy.example:3128")
	p := &Proxy{HTTP: px, HTTPS: px, NoProxy: "internal.example, .corp.example,10.0.0.0/8 192.0.2.7,[2001:db8::1], only80.example:80, *.star.example"}
	p.compile()
	for _, tc := range []struct {
		url     string
		proxied bool
	}{
		{"http://www.example.org/", true},
		{"https://www.example.org/", true},
		{"http://internal.example/", false},
		{"http://a.b.internal.example/", false},
		{"http://notinternal.example/", true},
		{"http://corp.example/", true}, // ".corp.example": subdomains only
		{"http://x.corp.example/", false},
		{"http://10.1.2.3/", false},
		{"http://11.1.2.3/", true},
		{"http://192.0.2.7:8080/", false},
		{"http://[2001:db8::1]/", false},
		{"http://only80.example/", false},
		{"https://only80.example/", true}, // port 443
		{"http://only80.example:8080/", true},
		{"http://a.star.example/", false},
		{"http://INTERNAL.EXAMPLE./", false},
		{"http://localhost/", false}, // loopback stays direct unless Loopback
		{"http://127.0.0.2:8080/", false},
		{"http://[::1]/", false},
		{"ftp://www.example.org/", false},
	} {
		if got := p.For(mustURL(t, tc.url)) != nil; got != tc.proxied {
			t.Errorf("For(%s) proxied = %v, want %v", tc.url, got, tc.proxied)
		}
	}
	p.Loopback = true
	if p.For(mustURL(t, "http://127.0.0.2:8080/")) == nil || p.For(mustURL(t, "http://localhost/")) == nil {
		t.Error("with Loopback, loopback targets go direct")
	}
	all := &Proxy{HTTP: px, NoProxy: "*", Loopback: true}
	all.compile()
	if all.For(mustURL(t, "http://www.example.org/")) != nil {
		t.Error(`NoProxy "*" proxied a request`)
	}
	httpOnly := &Proxy{HTTP: px}
	if httpOnly.For(mustURL(t, "https://www.example.org/")) != nil {
		t.Error("an https URL went to the http:// URLs' proxy")
	}
	both, _ := NewProxy("http://u:secret@proxy.example:3128", "", false)
	if s := both.String(); s != "http://u:xxxxx@proxy.example:3128" {
		t.Errorf("String() = %q", s)
	}
	if s := httpOnly.String(); s != "http:// http://proxy.example:3128, https:// direct" {
		t.Errorf("String() = %q", s)
	}
	var none *Proxy
	if none.For(mustURL(t, "http://www.example.org/")) != nil {
		t.Error("a nil Proxy proxied a request")
	}
}

func TestProxyFromEnvironment(t *testing.T) {
	for _, k := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy", "REQUEST_METHOD"} {
		t.Setenv(k, "")
	}
	if p, err := ProxyFromEnvironment(); p != nil || err != nil {
		t.Fatalf("no variables: %v, %v; want nil, nil", p, err)
	}
	t.Setenv("HTTP_PROXY", "proxy.example:3128")
	t.Setenv("https_proxy", "http://tunnel.example:8080")
	t.Setenv("NO_PROXY", "direct.example")
	p, err := ProxyFromEnvironment()
	if err != nil {
		t.Fatal(err)
	}
	p.compile()
	if got := p.For(mustURL(t, "http://www.example.org/")); got == nil || got.Host != "proxy.example:3128" {
		t.Errorf("http:// URL: proxy %v", got)
	}
	if got := p.For(mustURL(t, "https://www.example.org/")); got == nil || got.Host != "tunnel.example:8080" {
		t.Errorf("https:// URL: proxy %v", got)
	}
	if p.For(mustURL(t, "http://direct.example/")) != nil || p.For(mustURL(t, "http://127.0.0.1:8080/")) != nil {
		t.Error("NO_PROXY or a loopback target went through the proxy")
	}
	// A CGI program's request could set HTTP_PROXY (a Proxy: header).
	t.Setenv("REQUEST_METHOD", "GET")
	if p, err := ProxyFromEnvironment(); err != nil || p == nil || p.HTTP != nil || p.HTTPS == nil {
		t.Errorf("under CGI: %+v, %v; want HTTP_PROXY ignored", p, err)
	}
	t.Setenv("REQUEST_METHOD", "")
	t.Setenv("https_proxy", "socks5://127.0.0.1:1080") // the lower-case name first
	t.Setenv("HTTPS_PROXY", "http://tunnel.example:8080")
	if _, err := ProxyFromEnvironment(); err == nil || !strings.Contains(err.Error(), "HTTPS_PROXY") {
		t.Errorf("a socks5 proxy: %v, want an error naming HTTPS_PROXY", err)
	}
	// --noproxy replaces NO_PROXY; --proxy replaces both proxies and
	// carries loopback too.
	t.Setenv("https_proxy", "")
	p, err = NewProxy("", "www.example.org", true)
	if err != nil || p == nil || p.NoProxy != "www.example.org" {
		t.Fatalf("NewProxy from the environment: %+v, %v", p, err)
	}
	p, err = NewProxy("http://named.example:3128", "", true)
	if err != nil || p.HTTP.Host != "named.example:3128" || p.HTTPS.Host != "named.example:3128" || !p.Loopback {
		t.Errorf("NewProxy with --proxy: %+v, %v", p, err)
	}
	if p, err := NewProxy("", "", false); p != nil || err != nil {
		t.Errorf("NewProxy without --proxy nor the environment: %v, %v", p, err)
	}
}

// forwardProxy is a small HTTP forward proxy: requests in absolute form
// are answered by the backend, CONNECT tunnels go to the TLS backend,
// whatever the target. It keeps what it was asked, and can demand
// credentials.
type forwardProxy struct {
	srv     *httptest.Server
	backend string // host:port for plain requests
	tunnel  string // host:port for CONNECT
	auth    string // the Proxy-Authorization it demands; "": none

	mu   sync.Mutex
	seen []string // "GET http://…", "CONNECT host:443"
	hdrs []http.Header
}

func newForwardProxy(t *testing.T, backend, tunnel, auth string) *forwardProxy {
	p := &forwardProxy{backend: backend, tunnel: tunnel, auth: auth}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *forwardProxy) requests() ([]string, []http.Header) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...), append([]http.Header(nil), p.hdrs...)
}

func (p *forwardProxy) serve(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.seen = append(p.seen, r.Method+" "+r.RequestURI)
	p.hdrs = append(p.hdrs, r.Header.Clone())
	p.mu.Unlock()
	if p.auth != "" && r.Header.Get("Proxy-Authorization") != p.auth {
		w.Header().Set("Proxy-Authenticate", `Basic realm="test"`)
		w.WriteHeader(http.StatusProxyAuthRequired)
		return
	}
	if r.Method == http.MethodConnect {
		if strings.HasPrefix(r.Host, "refused.") {
			http.Error(w, "no tunnels there", http.StatusForbidden)
			return
		}
		up, err := net.Dial("tcp", p.tunnel)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		w.WriteHeader(http.StatusOK)
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			up.Close()
			return
		}
		go func() {
			io.Copy(up, brw)
			up.Close()
		}()
		io.Copy(conn, up)
		conn.Close()
		return
	}
	out, err := http.NewRequest(http.MethodGet, "http://"+p.backend+r.URL.RequestURI(), nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out.Host = r.Host
	for k, v := range r.Header {
		if k != "Proxy-Authorization" && k != "Proxy-Connection" {
			out.Header[k] = v
		}
	}
	resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

// TestProxy sends http:// and https:// requests through a forward proxy
// on loopback while private networks are refused: the proxy's own
// address is allowed, the targets are checked where they resolve here,
// http:// goes in absolute form and https:// through CONNECT, the
// credentials reach the proxy and nothing else.
func TestProxy(t *testing.T) {
	var (
		mu     sync.Mutex
		origin []*http.Request
	)
	record := func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		origin = append(origin, r.Clone(context.Background()))
		mu.Unlock()
		w.Write([]byte("page of " + r.Host + " over " + r.Proto))
	}
	plain := httptest.NewServer(http.HandlerFunc(record))
	defer plain.Close()
	secure := httptest.NewUnstartedServer(http.HandlerFunc(record))
	secure.EnableHTTP2 = true
	secure.StartTLS()
	defer secure.Close()
	pool := x509.NewCertPool()
	pool.AddCert(secure.Certificate())

	const auth = "Basic dXNlcjpwYXNz" // user:pass
	fp := newForwardProxy(t, plain.Listener.Addr().String(), secure.Listener.Addr().String(), auth)
	proxyURL := mustURL(t, "http://user:pass@"+fp.srv.Listener.Addr().String())
	// Public addresses for the names the test asks for (the proxy sends
	// everything to its backends), a private one for the name that must
	// be refused. No DNS is asked.
	public := netip.MustParseAddr("93.184.216.34")
	c := newClient(t, Config{
		Proxy: &Proxy{HTTP: proxyURL, HTTPS: proxyURL},
		Resolve: []Resolve{
			{Host: "www.example.com", Port: 80, Addrs: []netip.Addr{public}},
			{Host: "example.com", Port: 443, Addrs: []netip.Addr{public}},
			{Host: "inside.example", Port: 80, Addrs: []netip.Addr{netip.MustParseAddr("10.1.2.3")}},
			{Host: "refused.example", Port: 443, Addrs: []netip.Addr{public}},
		},
	})
	c.tr.TLSClientConfig = &tls.Config{RootCAs: pool}

	res := do(t, c, Request{URL: mustURL(t, "http://www.example.com/a?b=1")})
	if string(res.Body) != "page of www.example.com over HTTP/1.1" {
		t.Errorf("http:// through the proxy: body %q", res.Body)
	}
	if !strings.HasPrefix(string(res.RequestRaw), "GET /a?b=1 HTTP/1.1\r\nHost: www.example.com\r\n") || strings.Contains(string(res.RequestRaw), "Proxy-") {
		t.Errorf("RequestRaw is not the origin-form request without proxy fields:\n%s", res.RequestRaw)
	}
	if res.RemoteAddr != fp.srv.Listener.Addr().String() {
		t.Errorf("RemoteAddr %s, want the proxy's %s", res.RemoteAddr, fp.srv.Listener.Addr())
	}

	res = do(t, c, Request{URL: mustURL(t, "https://example.com/s")})
	if string(res.Body) != "page of example.com over HTTP/2.0" {
		t.Errorf("https:// through CONNECT: body %q", res.Body)
	}

	// A target inside the network is refused before the proxy hears of it.
	_, err := c.Do(context.Background(), Request{URL: mustURL(t, "http://inside.example/")})
	if !errors.Is(err, ErrPrivateNetwork) {
		t.Errorf("a target resolving to 10.1.2.3 through the proxy: %v, want ErrPrivateNetwork", err)
	}
	// A CONNECT the proxy refuses says so.
	_, err = c.Do(context.Background(), Request{URL: mustURL(t, "https://refused.example/")})
	if !errors.Is(err, ErrProxy) {
		t.Errorf("a refused CONNECT: %v, want ErrProxy", err)
	}

	seen, hdrs := fp.requests()
	want := []string{"GET http://www.example.com/a?b=1", "CONNECT example.com:443", "CONNECT refused.example:443"}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Errorf("the proxy was asked:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
	for i, h := range hdrs {
		if h.Get("Proxy-Authorization") != auth {
			t.Errorf("request %d to the proxy: Proxy-Authorization %q", i, h.Get("Proxy-Authorization"))
		}
		if h.Get("User-Agent") != testUA {
			t.Errorf("request %d to the proxy: User-Agent %q, want the crawler's", i, h.Get("User-Agent"))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(origin) != 2 {
		t.Fatalf("the servers saw %d requests, want 2", len(origin))
	}
	for _, r := range origin {
		if r.Header.Get("Proxy-Authorization") != "" {
			t.Errorf("the proxy's credentials reached the server (%s %s)", r.Proto, r.Host)
		}
		if r.Header.Get("User-Agent") != testUA {
			t.Errorf("User-Agent at the server: %q", r.Header.Get("User-Agent"))
		}
	}
}

// TestProxyAuthRequired: a proxy that wants credentials the crawler does
// not have is an error, not a page of the site.
func TestProxyAuthRequired(t *testing.T) {
	fp := newForwardProxy(t, "127.0.0.1:1", "127.0.0.1:1", "Basic c29tZW9uZTplbHNl")
	px := mustURL(t, "http://"+fp.srv.Listener.Addr().String())
	c := newClient(t, Config{AllowPrivateNetworks: true, Proxy: &Proxy{HTTP: px, HTTPS: px, Loopback: true}})
	for _, u := range []string{"http://127.0.0.1:8080/", "https://127.0.0.1:8443/"} {
		res, err := c.Do(context.Background(), Request{URL: mustURL(t, u)})
		if res != nil || !errors.Is(err, ErrProxy) {
			t.Errorf("%s through a proxy answering 407: %v, %v; want ErrProxy", u, res, err)
		}
	}
}

// TestProxyConfigErrors: a proxy that is not http:// is refused when the
// client is made.
func TestProxyConfigErrors(t *testing.T) {
	for _, p := range []*Proxy{
		{HTTP: mustURL(t, "https://proxy.example:443")},
		{HTTPS: mustURL(t, "socks5://proxy.example:1080")},
		{HTTP: mustURL(t, "http:///nohost")},
	} {
		if _, err := New(Config{UserAgent: testUA, Proxy: p}); err == nil {
			t.Errorf("New accepted proxy %+v", p)
		}
	}
}

// TestTinyproxy goes through Debian's tinyproxy: http:// in absolute
// form, https:// through CONNECT with HTTP/2 inside the tunnel, and the
// proxy's 407 without the right credentials.
func TestTinyproxy(t *testing.T) {
	tp := proxytest.Start(t, proxytest.Options{User: "crawler", Password: "pw-1"})
	var mu sync.Mutex
	var seen []string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Proto+" "+r.Host+r.URL.RequestURI()+" "+r.Header.Get("User-Agent"))
		mu.Unlock()
		w.Header().Set("ETag", `"v1"`)
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Write([]byte("body of " + r.URL.Path))
	})
	plain := httptest.NewServer(h)
	defer plain.Close()
	secure := httptest.NewUnstartedServer(h)
	secure.EnableHTTP2 = true
	secure.StartTLS()
	defer secure.Close()
	pool := x509.NewCertPool()
	pool.AddCert(secure.Certificate())

	px := mustURL(t, tp.URL())
	c := newClient(t, Config{AllowPrivateNetworks: true, Proxy: &Proxy{HTTP: px, HTTPS: px, Loopback: true}})
	c.tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	for _, base := range []string{plain.URL, secure.URL} {
		res := do(t, c, Request{URL: mustURL(t, base+"/p")})
		if res.Status != 200 || string(res.Body) != "body of /p" {
			t.Errorf("%s/p through tinyproxy: %d %q", base, res.Status, res.Body)
		}
		// A conditional GET through the proxy is still answered 304.
		res = do(t, c, Request{URL: mustURL(t, base+"/p"), ETag: `"v1"`})
		if !res.NotModified {
			t.Errorf("%s/p with If-None-Match through tinyproxy: %d, want 304", base, res.Status)
		}
	}
	mu.Lock()
	got := strings.Join(seen, "\n")
	mu.Unlock()
	want := strings.Join([]string{
		"HTTP/1.1 " + plain.Listener.Addr().String() + "/p " + testUA,
		"HTTP/1.1 " + plain.Listener.Addr().String() + "/p " + testUA,
		"HTTP/2.0 " + secure.Listener.Addr().String() + "/p " + testUA,
		"HTTP/2.0 " + secure.Listener.Addr().String() + "/p " + testUA,
	}, "\n")
	if got != want {
		t.Errorf("the servers saw:\n%s\nwant:\n%s", got, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reqs, err := tp.WaitRequests(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	var methods []string
	for _, r := range reqs {
		methods = append(methods, r.Method+" "+r.Target)
	}
	// tinyproxy closes a client connection after each request, so the
	// second http:// request is a request line of its own; the https://
	// requests share one tunnel.
	wantReqs := []string{"GET " + plain.URL + "/p", "GET " + plain.URL + "/p", "CONNECT " + secure.Listener.Addr().String()}
	if strings.Join(methods, "\n") != strings.Join(wantReqs, "\n") {
		t.Errorf("tinyproxy logged:\n%s\nwant:\n%s", strings.Join(methods, "\n"), strings.Join(wantReqs, "\n"))
	}

	// Without credentials tinyproxy answers 407, an error for both
	// schemes. With wrong ones it answers a CONNECT 407 too, but a
	// request in absolute form 401 (with WWW-Authenticate): that cannot
	// be told from the site's own 401, and is recorded as the answer.
	for _, proxy := range []string{"http://" + tp.Addr, "http://crawler:wrong@" + tp.Addr} {
		px := mustURL(t, proxy)
		c = newClient(t, Config{AllowPrivateNetworks: true, Proxy: &Proxy{HTTP: px, HTTPS: px, Loopback: true}})
		c.tr.TLSClientConfig = &tls.Config{RootCAs: pool}
		for _, base := range []string{plain.URL, secure.URL} {
			res, err := c.Do(context.Background(), Request{URL: mustURL(t, base+"/q")})
			if errors.Is(err, ErrProxy) || px.User != nil && base == plain.URL && err == nil && res.Status == http.StatusUnauthorized {
				continue
			}
			t.Errorf("%s/q through %s: %v, %v; want ErrProxy", base, redactProxy(proxy), res, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 4 {
		t.Errorf("requests refused by the proxy reached the servers: %q", seen[4:])
	}
}
