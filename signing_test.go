package gentlecrawl_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/httpsig"
)

// heldKey is a signing key the crawler cannot see inside, as one in a
// hardware module would be: only a crypto.Signer.
type heldKey struct{ k ed25519.PrivateKey }

func (h heldKey) Public() crypto.PublicKey { return h.k.Public() }
func (h heldKey) Sign(r io.Reader, msg []byte, o crypto.SignerOpts) ([]byte, error) {
	return h.k.Sign(r, msg, o)
}

// TestSignedCrawlConfig: Config.SignKey signs every request of a crawl,
// robots.txt included, whatever holds the key; a half or wrong signing
// configuration is refused by New. (internal/cli's TestSignedCrawl checks
// a crawl against npm's web-bot-auth, over http:// and https://.)
func TestSignedCrawlConfig(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(nil)
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for name, cfg := range map[string]gentlecrawl.Config{
		"key alone":     {SignKey: priv},
		"agent alone":   {SignatureAgent: "https://crawler.example"},
		"http agent":    {SignKey: priv, SignatureAgent: "http://crawler.example"},
		"not ed25519":   {SignKey: ec, SignatureAgent: "https://crawler.example"},
		"path in agent": {SignKey: priv, SignatureAgent: "https://crawler.example/bot"},
	} {
		cfg.JobDir, cfg.Seeds = t.TempDir(), []string{"http://example.org/"}
		if _, err := gentlecrawl.New(cfg); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}

	var mu sync.Mutex
	var got []*http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Clone(t.Context()))
		mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		case "/":
			fmt.Fprint(w, `<a href="/a">a</a>`)
		case "/a":
			fmt.Fprint(w, `<p>a</p>`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c, err := gentlecrawl.New(gentlecrawl.Config{
		JobDir:               t.TempDir(),
		Seeds:                []string{srv.URL + "/"},
		Delay:                10 * time.Millisecond,
		AllowPrivateNetworks: true,
		From:                 "ops@example.org",
		SignKey:              heldKey{priv},
		SignatureAgent:       "https://crawler.example",
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d requests, want robots.txt, / and /a", len(got))
	}
	for _, r := range got {
		sigs, err := httpsig.ParseSignatures(r.Header, httpsig.DefaultLimits)
		if err != nil || len(sigs) != 1 {
			t.Fatalf("%s: %d signatures, %v", r.URL, len(sigs), err)
		}
		m := &httpsig.Message{Method: r.Method, Scheme: "http", Authority: r.Host, Target: r.RequestURI, Header: r.Header}
		base, err := httpsig.Base(m, sigs[0].Input)
		if err != nil || !httpsig.VerifyEd25519(pub, base, sigs[0].Value) || sigs[0].KeyID != httpsig.Thumbprint(pub) {
			t.Errorf("%s: does not verify (%v)", r.URL, err)
		}
		if !strings.HasPrefix(r.UserAgent(), "gentlecrawl/") || r.Header.Get("From") != "ops@example.org" {
			t.Errorf("%s: User-Agent %q, From %q", r.URL, r.UserAgent(), r.Header.Get("From"))
		}
	}
}
