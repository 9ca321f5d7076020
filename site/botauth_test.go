package site_test

import (
	"context"
	"crypto/ed25519"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"

	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/botauthtest"
	"github.com/gentlecrawl/gentlecrawl/internal/httpsig"
	"github.com/gentlecrawl/gentlecrawl/site"
)

// agentServer is a signing agent's origin on loopback, over TLS: it serves
// a key directory at the well-known path, as its handler says, and counts
// the fetches.
type agentServer struct {
	*httptest.Server
	fetches atomic.Int32
	pub     ed25519.PublicKey
	priv    ed25519.PrivateKey
}

func newAgent(t *testing.T, h func(a *agentServer, w http.ResponseWriter, r *http.Request)) *agentServer {
	t.Helper()
	a := &agentServer{}
	a.pub, a.priv, _ = ed25519.GenerateKey(nil)
	if h == nil {
		h = func(a *agentServer, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", httpsig.MediaType)
			w.Write(httpsig.MarshalDirectory(a.pub))
		}
	}
	a.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == httpsig.WellKnownPath {
			a.fetches.Add(1)
		}
		h(a, w, r)
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *agentServer) origin() string { return a.URL }

// tlsConfig trusts the agents' test certificate (one for every httptest
// TLS server).
func (a *agentServer) tlsConfig() *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(a.Certificate())
	return &tls.Config{RootCAs: pool}
}

// caFile writes the agents' certificate for node.
func (a *agentServer) caFile(t *testing.T) string {
	f := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(f, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: a.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// signed is a GET of https://site.example/page signed by key for agent at
// the time at.
func signed(t *testing.T, key ed25519.PrivateKey, agent string, at time.Time) site.Message {
	t.Helper()
	s, err := httpsig.NewSigner(key, agent, 0)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{"User-Agent": {"examplebot/1.0"}}
	if err := s.Sign(h, "https", "site.example", at); err != nil {
		t.Fatal(err)
	}
	return site.Message{Method: "GET", Scheme: "https", Authority: "site.example", Target: "/page", Header: h}
}

func (a *agentServer) botAuth() *site.BotAuth {
	return &site.BotAuth{AllowPrivateNetworks: true, TLSConfig: a.tlsConfig(), Verifier: &site.Verifier{Resolver: &fakeDNS{}}}
}

func cloneMessage(m site.Message) site.Message {
	m.Header = m.Header.Clone()
	return m
}

func TestBotAuthVerifiesSignature(t *testing.T) {
	a := newAgent(t, nil)
	b := a.botAuth()
	m := signed(t, a.priv, a.origin(), time.Now())
	id := b.Verify(context.Background(), cloneMessage(m))
	if id.Verdict != site.VerifiedBySignature || id.Signature != site.SignatureValid || id.Agent != a.origin() || id.KeyID != httpsig.Thumbprint(a.pub) {
		t.Fatalf("identity %+v", id)
	}
	if !strings.Contains(id.Why, "signed by "+a.origin()) || id.Expires.IsZero() {
		t.Errorf("Why %q, Expires %v", id.Why, id.Expires)
	}
	// The same request again is a replay.
	id = b.Verify(context.Background(), cloneMessage(m))
	if id.Verdict != site.Spoofed || !errors.Is(id.SignatureErr, site.ErrReplay) {
		t.Errorf("replay: %+v", id)
	}
	// Another signature from the same agent is fine, and needs no fetch.
	id = b.Verify(context.Background(), signed(t, a.priv, a.origin(), time.Now()))
	if id.Verdict != site.VerifiedBySignature {
		t.Errorf("second request: %+v", id)
	}
	if n := a.fetches.Load(); n != 1 {
		t.Errorf("%d directory fetches, want 1", n)
	}
}

func TestBotAuthRejects(t *testing.T) {
	a := newAgent(t, nil)
	other := newAgent(t, nil) // publishes another key
	now := time.Now()
	type check struct {
		verdict site.Verdict
		status  site.SignatureStatus
		err     error
	}
	forged := check{site.Spoofed, site.SignatureForged, site.ErrBadSignature}
	for _, c := range []struct {
		name   string
		change func(m *site.Message)
		at     time.Time // BotAuth's clock; zero: now
		want   check
	}{
		{"another authority", func(m *site.Message) { m.Authority = "evil.example" }, time.Time{}, forged},
		{"signature changed", func(m *site.Message) {
			m.Header.Set("Signature", "sig1=:"+strings.Repeat("A", 86)+"==:")
		}, time.Time{}, forged},
		{"nonce changed", func(m *site.Message) {
			m.Header.Set("Signature-Input", strings.Replace(m.Header.Get("Signature-Input"), `nonce="`, `nonce="x`, 1))
		}, time.Time{}, forged},
		{"another agent", func(m *site.Message) {
			m.Header.Set("Signature-Agent", `"`+other.origin()+`"`)
		}, time.Time{}, check{site.Unverified, site.SignatureInvalid, site.ErrUnknownKey}},
		{"expired", nil, now.Add(2 * time.Minute), check{site.Unverified, site.SignatureInvalid, site.ErrSignatureExpired}},
		{"from the future", nil, now.Add(-time.Minute), check{site.Unverified, site.SignatureInvalid, site.ErrSignatureEarly}},
		{"other algorithm", func(m *site.Message) {
			m.Header.Set("Signature-Input", strings.Replace(m.Header.Get("Signature-Input"), `alg="ed25519"`, `alg="rsa-pss-sha512"`, 1))
		}, time.Time{}, check{site.Unverified, site.SignatureInvalid, site.ErrUnsupported}},
		{"other tag", func(m *site.Message) {
			m.Header.Set("Signature-Input", strings.Replace(m.Header.Get("Signature-Input"), `web-bot-auth`, `other`, 1))
		}, time.Time{}, check{site.Unverified, site.SignatureNone, nil}},
		{"no nonce", func(m *site.Message) {
			in := m.Header.Get("Signature-Input")
			i := strings.Index(in, ";nonce=")
			j := strings.Index(in, ";tag=")
			m.Header.Set("Signature-Input", in[:i]+in[j:])
		}, time.Time{}, check{site.Unverified, site.SignatureInvalid, site.ErrSignatureMalformed}},
		{"agent not covered", func(m *site.Message) {
			m.Header.Set("Signature-Input", strings.Replace(m.Header.Get("Signature-Input"), ` "signature-agent"`, ``, 1))
		}, time.Time{}, check{site.Unverified, site.SignatureInvalid, nil}},
		{"agent over http", func(m *site.Message) {
			m.Header.Set("Signature-Agent", `"`+strings.Replace(a.origin(), "https:", "http:", 1)+`"`)
		}, time.Time{}, check{site.Unverified, site.SignatureInvalid, nil}},
		{"agent removed", func(m *site.Message) { m.Header.Del("Signature-Agent") }, time.Time{}, check{site.Unverified, site.SignatureInvalid, nil}},
		{"signature removed", func(m *site.Message) { m.Header.Del("Signature") }, time.Time{}, check{site.Unverified, site.SignatureInvalid, site.ErrSignatureMalformed}},
		{"oversized", func(m *site.Message) {
			m.Header.Set("Signature-Input", m.Header.Get("Signature-Input")+`;x="`+strings.Repeat("x", 100<<10)+`"`)
		}, time.Time{}, check{site.Unverified, site.SignatureInvalid, httpsig.ErrTooLarge}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := a.botAuth()
			if !c.at.IsZero() {
				b.Now = func() time.Time { return c.at }
			}
			m := signed(t, a.priv, a.origin(), now)
			if c.change != nil {
				c.change(&m)
			}
			id := b.Verify(context.Background(), m)
			t.Logf("%v: %s", id.Verdict, id.Why)
			if id.Verdict != c.want.verdict || id.Signature != c.want.status || c.want.err != nil && !errors.Is(id.SignatureErr, c.want.err) {
				t.Errorf("%s: verdict %v, signature %v, %v; want %v, %v, %v", id.Why, id.Verdict, id.Signature, id.SignatureErr, c.want.verdict, c.want.status, c.want.err)
			}
			if id.Why == "" {
				t.Error("no Why")
			}
		})
	}
	if n := a.fetches.Load(); n > 4 {
		// Only the signatures that got that far fetched the directory
		// (once per BotAuth): the forged ones.
		t.Errorf("%d directory fetches", n)
	}
}

// TestBotAuthMalformed: whatever the fields hold, a verdict, never a
// panic.
func TestBotAuthMalformed(t *testing.T) {
	a := newAgent(t, nil)
	b := a.botAuth()
	for _, f := range [][3]string{
		{`sig1=("@authority"`, `sig1=:AA==:`, `"https://x.example"`},
		{`sig1=("@authority" "signature-agent");created=x`, `sig1=:AA==:`, `"https://x.example"`},
		{`sig1=("@authority" "signature-agent");created=1;expires=2;keyid="k";nonce="n";tag="web-bot-auth"`, `sig1=:AA==:`, `"https://x.example"`},
		{`sig1=("@authority" "signature-agent");created=1;expires=2;keyid="k";nonce="n";tag="web-bot-auth"`, `sig1=:AA==:`, `garbage"`},
		{`sig1=()`, `sig1=:AA==:`, ``},
		{`sig1`, `sig1`, `sig1`},
		{`=`, `=`, `=`},
		{`sig1=("@query-param";name="a");tag="web-bot-auth"`, `sig1=:AA==:`, ``},
		{"\x00\xff", "\x00", "\x7f"},
		{`a=(` + strings.Repeat(`"x" `, 1000) + `)`, `a=:AA==:`, ``},
		{strings.Repeat(`a=1,`, 1000) + `a=1`, `a=:AA==:`, ``},
	} {
		h := http.Header{}
		for i, name := range []string{"Signature-Input", "Signature", "Signature-Agent"} {
			if f[i] != "" {
				h.Set(name, f[i])
			}
		}
		id := b.Verify(context.Background(), site.Message{Method: "GET", Scheme: "https", Authority: "site.example", Target: "/", Header: h})
		if id.Verdict != site.Unverified || id.Why == "" {
			t.Errorf("%q: %+v", f, id)
		}
	}
	if n := a.fetches.Load(); n != 0 {
		t.Errorf("%d fetches for malformed signatures", n)
	}
}

// TestBotAuthDirectories: every way a key directory can fail is a clear
// verdict, within the time limit, and remembered for a while.
func TestBotAuthDirectories(t *testing.T) {
	big := `{"keys":[],"pad":"` + strings.Repeat("x", 70<<10) + `"}`
	for _, c := range []struct {
		name    string
		handler func(a *agentServer) http.HandlerFunc
		why     string
	}{
		{"not found", func(*agentServer) http.HandlerFunc { return http.NotFound }, "404"},
		{"html", func(*agentServer) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				fmt.Fprint(w, "<!doctype html><title>Welcome</title>")
			}
		}, "HTML page"},
		{"text", func(*agentServer) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain")
				fmt.Fprint(w, "{}")
			}
		}, "media type"},
		{"not json", func(*agentServer) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", httpsig.MediaType)
				fmt.Fprint(w, "{keys:")
			}
		}, "not a JWK Set"},
		{"huge, declared", func(*agentServer) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", httpsig.MediaType)
				fmt.Fprint(w, big)
			}
		}, "more than the 65536"},
		{"huge, chunked", func(*agentServer) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", httpsig.MediaType)
				for range 100 {
					fmt.Fprint(w, big[:1<<10])
					w.(http.Flusher).Flush()
				}
			}
		}, "more than the 65536"},
		{"redirect loop", func(*agentServer) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, r.URL.Path, http.StatusFound)
			}
		}, "redirects"},
		{"rsa only", func(*agentServer) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", httpsig.MediaType)
				fmt.Fprint(w, `{"keys":[{"kty":"RSA","e":"AQAB","n":"AQAB"}]}`)
			}
		}, "no Ed25519 key"},
		{"slow body", func(*agentServer) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", httpsig.MediaType)
				for range 100 {
					fmt.Fprint(w, " ")
					w.(http.Flusher).Flush()
					select {
					case <-r.Context().Done():
						// Abort the stream: a handler that returned would end
						// the body, and a loaded machine could deliver that end
						// before the client's deadline is noticed.
						panic(http.ErrAbortHandler)
					case <-time.After(100 * time.Millisecond):
					}
				}
			}
		}, "timed out after 500ms"},
		{"no answer", func(*agentServer) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done():
					// Never an answer: returning would send an empty 200.
					panic(http.ErrAbortHandler)
				case <-time.After(10 * time.Second):
				}
			}
		}, "timed out after 500ms"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := newAgent(t, func(a *agentServer, w http.ResponseWriter, r *http.Request) { c.handler(a)(w, r) })
			b := a.botAuth()
			b.DirectoryTimeout = 500 * time.Millisecond
			start := time.Now()
			id := b.Verify(context.Background(), signed(t, a.priv, a.origin(), time.Now()))
			t.Logf("%v: %s", id.Verdict, id.Why)
			var de *site.DirectoryError
			if id.Verdict != site.Unverified || id.Signature != site.SignatureInvalid || !errors.As(id.SignatureErr, &de) || !strings.Contains(id.Why, c.why) {
				t.Errorf("%+v; want a directory error saying %q", id, c.why)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %v", d)
			}
			// The failure is remembered: no second fetch at once.
			b.Verify(context.Background(), signed(t, a.priv, a.origin(), time.Now()))
			if n := a.fetches.Load(); n != 1 {
				t.Errorf("%d fetches, want 1", n)
			}
		})
	}
}

func TestBotAuthRefusesPrivateDirectory(t *testing.T) {
	a := newAgent(t, nil)
	b := a.botAuth()
	b.AllowPrivateNetworks = false
	id := b.Verify(context.Background(), signed(t, a.priv, a.origin(), time.Now()))
	if id.Verdict != site.Unverified || !errors.Is(id.SignatureErr, site.ErrPrivateAddress) || a.fetches.Load() != 0 {
		t.Errorf("%+v, %d fetches", id, a.fetches.Load())
	}
}

// TestBotAuthCache: a directory is kept as its Cache-Control says, within
// the floor and the ceiling; a key it lacks has it fetched again once the
// floor has passed; requests waiting for it share one fetch.
func TestBotAuthCache(t *testing.T) {
	var mu sync.Mutex
	maxAge := "max-age=600"
	var keys []ed25519.PublicKey
	gate := make(chan struct{})
	a := newAgent(t, func(a *agentServer, w http.ResponseWriter, r *http.Request) {
		<-gate
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", httpsig.MediaType)
		w.Header().Set("Cache-Control", maxAge)
		w.Write(httpsig.MarshalDirectory(append([]ed25519.PublicKey{a.pub}, keys...)...))
	})
	var clock atomic.Int64
	clock.Store(time.Now().Unix())
	now := func() time.Time { return time.Unix(clock.Load(), 0) }
	b := a.botAuth()
	b.Now = now

	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if id := b.Verify(context.Background(), signed(t, a.priv, a.origin(), now())); id.Verdict != site.VerifiedBySignature {
				t.Errorf("%+v", id)
			}
		}()
	}
	time.Sleep(100 * time.Millisecond)
	close(gate)
	wg.Wait()
	if n := a.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches for 20 requests at once, want 1", n)
	}
	// A new key, 2 minutes later: under the 5-minute floor, not fetched.
	pub2, priv2, _ := ed25519.GenerateKey(nil)
	mu.Lock()
	keys = append(keys, pub2)
	mu.Unlock()
	clock.Add(120)
	if id := b.Verify(context.Background(), signed(t, priv2, a.origin(), now())); !errors.Is(id.SignatureErr, site.ErrUnknownKey) {
		t.Errorf("new key before the floor: %+v", id)
	}
	clock.Add(200) // past the floor, within max-age: the unknown key has it fetched
	if id := b.Verify(context.Background(), signed(t, priv2, a.origin(), now())); id.Verdict != site.VerifiedBySignature {
		t.Errorf("new key after the floor: %+v", id)
	}
	if n := a.fetches.Load(); n != 2 {
		t.Errorf("%d fetches, want 2", n)
	}
	clock.Add(599) // within max-age of the second fetch
	b.Verify(context.Background(), signed(t, a.priv, a.origin(), now()))
	if n := a.fetches.Load(); n != 2 {
		t.Errorf("%d fetches within max-age, want 2", n)
	}
	clock.Add(2)
	b.Verify(context.Background(), signed(t, a.priv, a.origin(), now()))
	if n := a.fetches.Load(); n != 3 {
		t.Errorf("%d fetches after max-age, want 3", n)
	}
	// max-age beyond the ceiling is cut to it.
	mu.Lock()
	maxAge = "max-age=999999999"
	mu.Unlock()
	b.MaxDirectoryTTL = 0
	clock.Add(601)
	b.Verify(context.Background(), signed(t, a.priv, a.origin(), now()))
	clock.Add(24*3600 + 1)
	b.Verify(context.Background(), signed(t, a.priv, a.origin(), now()))
	if n := a.fetches.Load(); n != 5 {
		t.Errorf("%d fetches past the 24h ceiling, want 5", n)
	}
}

// TestBotAuthWithDNS: the verdict of a signature and of a User-Agent's
// claim together.
func TestBotAuthWithDNS(t *testing.T) {
	a := newAgent(t, nil)
	dns := &fakeDNS{
		ptr:  map[string][]string{"66.249.66.1": {"crawl-66-249-66-1.googlebot.com."}},
		addr: map[string][]string{"crawl-66-249-66-1.googlebot.com.": {"66.249.66.1"}},
		fail: map[string]error{"192.0.2.9": errors.New("SERVFAIL")},
	}
	b := a.botAuth()
	b.Verifier = &site.Verifier{Resolver: dns}
	const googlebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	for _, c := range []struct {
		name   string
		signed bool
		ua, ip string
		want   site.Verdict
		why    string
	}{
		{"googlebot", false, googlebot, "66.249.66.1", site.VerifiedByDNS, "crawl-66-249-66-1.googlebot.com"},
		{"fake googlebot", false, googlebot, "203.0.113.7", site.Spoofed, "not Googlebot's address"},
		{"fake googlebot, signed", true, googlebot, "203.0.113.7", site.Spoofed, "not Googlebot's address"},
		{"googlebot, signed", true, googlebot, "66.249.66.1", site.VerifiedBySignature, "Googlebot confirmed by dns"},
		{"dns failure", false, googlebot, "192.0.2.9", site.Unverified, "could not be checked"},
		{"no address", false, googlebot, "", site.Unverified, "could not be checked"},
		{"a person", false, "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0", "203.0.113.7", site.Unverified, "no Web Bot Auth signature; the User-Agent names no known crawler"},
		{"signed bot", true, "examplebot/1.0", "203.0.113.7", site.VerifiedBySignature, "signed by"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := site.Message{Method: "GET", Scheme: "https", Authority: "site.example", Target: "/", Header: http.Header{}}
			if c.signed {
				m = signed(t, a.priv, a.origin(), time.Now())
			}
			m.Header.Set("User-Agent", c.ua)
			if c.ip != "" {
				m.ClientIP = netip.MustParseAddr(c.ip)
			}
			id := b.Verify(context.Background(), m)
			if id.Verdict != c.want || !strings.Contains(id.Why, c.why) {
				t.Errorf("%v: %q; want %v: %q", id.Verdict, id.Why, c.want, c.why)
			}
		})
	}
}

func TestBotAuthHandler(t *testing.T) {
	a := newAgent(t, nil)
	b := a.botAuth()
	srv := httptest.NewServer(b.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := site.IdentityFrom(r.Context())
		if !ok {
			http.Error(w, "no identity", 500)
			return
		}
		if id.Verdict == site.Spoofed {
			http.Error(w, id.Why, http.StatusForbidden)
			return
		}
		fmt.Fprintf(w, "%s %s", id.Verdict, id.Agent)
	})))
	defer srv.Close()
	m := signed(t, a.priv, a.origin(), time.Now())
	get := func(h http.Header) (int, string) {
		req, _ := http.NewRequest("GET", srv.URL+"/page", nil)
		req.Host = "site.example"
		for k, v := range h {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 512)
		n, _ := resp.Body.Read(buf)
		b.Write(buf[:n])
		return resp.StatusCode, b.String()
	}
	if code, body := get(m.Header); code != 200 || body != "signature "+a.origin() {
		t.Errorf("signed: %d %q", code, body)
	}
	if code, body := get(m.Header); code != 403 || !strings.Contains(body, "seen before") {
		t.Errorf("replayed: %d %q", code, body)
	}
	if code, body := get(http.Header{"User-Agent": {"curl/8"}}); code != 200 || body != "unverified " {
		t.Errorf("unsigned: %d %q", code, body)
	}
	if _, ok := site.IdentityFrom(context.Background()); ok {
		t.Error("an identity in a bare context")
	}
}

// TestBotAuthVerifiesWebBotAuthNPM: requests signed by npm's web-bot-auth
// (the reference implementation) verify; tampered, replayed and expired
// ones do not.
func TestBotAuthVerifiesWebBotAuthNPM(t *testing.T) {
	botauthtest.Node(t)
	a := newAgent(t, nil)
	jwk, _ := json.Marshal(httpsig.PrivateJWK(a.priv))
	now := time.Now()
	agentField := `"` + a.origin() + `"`
	reqs := []botauthtest.Request{
		{URL: "https://site.example/page", Header: map[string]string{"signature-agent": agentField}},
		{URL: "https://site.example:8443/other?q=1", Header: map[string]string{"signature-agent": agentField}},
		{URL: "https://site.example/tampered", Header: map[string]string{"signature-agent": agentField}},
		{URL: "https://site.example/unsigned-agent", Header: map[string]string{}},
	}
	sigs := botauthtest.Sign(t, jwk, now, time.Minute, reqs)
	msg := func(i int) site.Message {
		h := http.Header{}
		for k, v := range reqs[i].Header {
			h.Set(k, v)
		}
		for k, v := range sigs[i] {
			h[k] = v
		}
		authority, target := "site.example", "/"+strings.SplitN(reqs[i].URL, "/", 4)[3]
		if i == 1 {
			authority = "site.example:8443"
		}
		return site.Message{Method: "GET", Scheme: "https", Authority: authority, Target: target, Header: h}
	}
	b := a.botAuth()
	for i := range 2 {
		id := b.Verify(context.Background(), msg(i))
		if id.Verdict != site.VerifiedBySignature || id.Agent != a.origin() || id.KeyID != httpsig.Thumbprint(a.pub) {
			t.Errorf("request %d signed by web-bot-auth: %+v", i, id)
		}
	}
	if id := b.Verify(context.Background(), msg(0)); id.Verdict != site.Spoofed || !errors.Is(id.SignatureErr, site.ErrReplay) {
		t.Errorf("replayed: %+v", id)
	}
	m := msg(2)
	m.Authority = "elsewhere.example"
	if id := b.Verify(context.Background(), m); id.Verdict != site.Spoofed || !errors.Is(id.SignatureErr, site.ErrBadSignature) {
		t.Errorf("tampered: %+v", id)
	}
	// Without a Signature-Agent, web-bot-auth covers @authority alone:
	// nothing says whose key to fetch.
	if id := b.Verify(context.Background(), msg(3)); id.Verdict != site.Unverified || !strings.Contains(id.Why, "Signature-Agent") {
		t.Errorf("no Signature-Agent: %+v", id)
	}
	late := a.botAuth()
	late.Now = func() time.Time { return now.Add(2 * time.Minute) }
	if id := late.Verify(context.Background(), msg(1)); id.Verdict != site.Unverified || !errors.Is(id.SignatureErr, site.ErrSignatureExpired) {
		t.Errorf("expired: %+v", id)
	}
}

// TestWebBotAuthNPMVerifiesSigner: web-bot-auth verifies what httpsig's
// Signer makes, against the agent's directory as served; and refuses a
// tampered one. (The crawl's own requests are checked in internal/cli.)
func TestWebBotAuthNPMVerifiesSigner(t *testing.T) {
	botauthtest.Node(t)
	a := newAgent(t, nil)
	var reqs []botauthtest.Request
	for _, host := range []string{"site.example", "site.example:8080"} {
		m := signed(t, a.priv, a.origin(), time.Now())
		m.Authority = host
		s, _ := httpsig.NewSigner(a.priv, a.origin(), 0)
		s.Sign(m.Header, "https", host, time.Now())
		h := map[string]string{}
		for k, v := range m.Header {
			h[strings.ToLower(k)] = v[0]
		}
		reqs = append(reqs, botauthtest.Request{URL: "https://" + host + "/page", Header: h})
	}
	tampered := reqs[0]
	tampered.URL = "https://evil.example/page"
	reqs = append(reqs, tampered)
	vs := botauthtest.Verify(t, a.caFile(t), reqs)
	for i, v := range vs[:2] {
		if !v.OK || v.KeyID != httpsig.Thumbprint(a.pub) || v.ContentType != httpsig.MediaType {
			t.Errorf("request %d: web-bot-auth says %+v", i, v)
		}
	}
	if vs[2].OK {
		t.Error("web-bot-auth verified a tampered request")
	}
}
