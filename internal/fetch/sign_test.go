package fetch

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/httpsig"
)

const testAgent = "https://crawler.example"

// checkSigned verifies the Web Bot Auth signature of a request as the
// server received it, and returns its nonce.
func checkSigned(t *testing.T, r *http.Request, scheme string, pub ed25519.PublicKey) string {
	t.Helper()
	sigs, err := httpsig.ParseSignatures(r.Header, httpsig.DefaultLimits)
	if err != nil || len(sigs) != 1 {
		t.Fatalf("%s %s: %d signatures, %v", r.Host, r.RequestURI, len(sigs), err)
	}
	s := sigs[0]
	if s.Label != "sig1" || s.Tag != "web-bot-auth" || s.Alg != "ed25519" || s.KeyID != httpsig.Thumbprint(pub) || s.Nonce == "" {
		t.Errorf("parameters %+v", s)
	}
	if s.Expires-s.Created != 60 || time.Since(time.Unix(s.Created, 0)).Abs() > time.Minute {
		t.Errorf("created %d, expires %d", s.Created, s.Expires)
	}
	if !s.Covers("@authority") || !s.Covers("signature-agent") {
		t.Errorf("covered %v", s.Input.Items)
	}
	m := &httpsig.Message{Method: r.Method, Scheme: scheme, Authority: r.Host, Target: r.RequestURI, Header: r.Header}
	base, err := httpsig.Base(m, s.Input)
	if err != nil {
		t.Fatal(err)
	}
	if !httpsig.VerifyEd25519(pub, base, s.Value) {
		t.Errorf("%s %s: the signature does not verify over\n%s", r.Host, r.RequestURI, base)
	}
	if agent, err := s.Agent(m); err != nil || agent != testAgent {
		t.Errorf("Signature-Agent %q, %v", agent, err)
	}
	return s.Nonce
}

// TestSignedRequests: with a key, every request is signed for its own
// authority, a repeat too, on both stacks; the recorded request head has
// the fields as sent; User-Agent and From are as without a key.
func TestSignedRequests(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(nil)
	eachScheme(t, func(t *testing.T, scheme string) {
		handler := func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/broken-cache" && r.Header.Get("Cache-Control") != "no-cache" {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			fmt.Fprint(w, "ok")
		}
		a, b := newServerOn(t, scheme, handler), newServerOn(t, scheme, handler)
		c := newClientOn(t, Config{AllowPrivateNetworks: true, From: "ops@example.org", SignKey: priv, SignatureAgent: testAgent + "/"})
		var results []*Result
		for _, u := range []string{a.URL + "/", a.URL + "/robots.txt", b.URL + "/x?y=1", a.URL + "/broken-cache"} {
			results = append(results, do(t, c, Request{URL: mustURL(t, u)}))
		}
		reqs := append(a.requests(), b.requests()...)
		if len(reqs) != 5 {
			t.Fatalf("%d requests, want 5", len(reqs))
		}
		nonces := map[string]bool{}
		for _, r := range reqs {
			nonces[checkSigned(t, r, scheme, pub)] = true
			if r.UserAgent() != testUA || r.Header.Get("From") != "ops@example.org" {
				t.Errorf("User-Agent %q From %q", r.UserAgent(), r.Header.Get("From"))
			}
			if got := r.Header.Get("Signature-Agent"); got != `"https://crawler.example"` {
				t.Errorf("Signature-Agent: %s", got)
			}
		}
		if len(nonces) != len(reqs) {
			t.Errorf("%d nonces for %d requests", len(nonces), len(reqs))
		}
		// The recorded head carries the fields the server got (the last
		// request of a refetch is the one recorded).
		for i, r := range []*http.Request{a.requests()[0], a.requests()[1], b.requests()[0], a.requests()[3]} {
			raw := string(results[i].RequestRaw)
			for _, f := range []string{"Signature", "Signature-Input", "Signature-Agent"} {
				if line := f + ": " + r.Header.Get(f) + "\r\n"; !strings.Contains(raw, line) {
					t.Errorf("request %d: RequestRaw lacks %q:\n%s", i, line, raw)
				}
			}
		}
	})
}

// TestSignedRequestRawIsWire: on http:// the signed head recorded is the
// bytes sent.
func TestSignedRequestRawIsWire(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(nil)
	l, got := answerOnce(t, "HTTP/1.1 204 No Content\r\n\r\n")
	c := newClient(t, Config{AllowPrivateNetworks: true, SignKey: priv, SignatureAgent: testAgent})
	res := do(t, c, Request{URL: mustURL(t, "http://"+l.Addr().String()+"/")})
	wire := <-got
	if !bytes.Equal(res.RequestRaw, wire) || !bytes.Contains(wire, []byte("\r\nSignature-Input: sig1=(")) {
		t.Errorf("RequestRaw:\n%s\nwire:\n%s", res.RequestRaw, wire)
	}
}

func TestUnsignedByDefault(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {})
	c := newClient(t, Config{AllowPrivateNetworks: true})
	res := do(t, c, Request{URL: mustURL(t, s.URL)})
	for _, f := range []string{"Signature", "Signature-Input", "Signature-Agent"} {
		if v := s.requests()[0].Header.Get(f); v != "" {
			t.Errorf("%s: %s", f, v)
		}
	}
	if bytes.Contains(res.RequestRaw, []byte("Signature")) {
		t.Errorf("RequestRaw:\n%s", res.RequestRaw)
	}
}

func TestSigningConfigRefused(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(nil)
	for name, cfg := range map[string]Config{
		"key alone":   {SignKey: priv},
		"agent alone": {SignatureAgent: testAgent},
		"http agent":  {SignKey: priv, SignatureAgent: "http://crawler.example"},
		"agent path":  {SignKey: priv, SignatureAgent: "https://crawler.example/keys.json"},
		"short":       {SignKey: priv, SignatureAgent: testAgent, SignatureValidity: time.Millisecond},
	} {
		cfg.UserAgent = testUA
		if err := cfg.CheckSigning(); err == nil {
			t.Errorf("%s: CheckSigning accepted it", name)
		}
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
	if err := (Config{}).CheckSigning(); err != nil {
		t.Errorf("no signing: %v", err)
	}
}
