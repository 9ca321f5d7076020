package site_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"time"

	"github.com/gentlecrawl/gentlecrawl/site"
)

// A post as a database would return it.
type post struct {
	ID      int
	Version int
	Updated time.Time
	Title   string
}

var thePost = post{ID: 42, Version: 7, Updated: time.Date(2025, 5, 4, 10, 30, 0, 0, time.UTC), Title: "Conditional GET"}

// templateVersion changes when the page layout does: every page changes.
const templateVersion = "layout-3"

func Example() {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := thePost // load the post: cheap, before any rendering
		w.Header().Set("Cache-Control", "no-cache")
		v := site.Validators{
			ETag:         site.ETagOf(p.ID, p.Version, templateVersion),
			LastModified: p.Updated,
		}
		if site.Conditional(w, r, v) {
			return // 304 (or 412) written
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<h1>%s</h1>\n", p.Title)
	})

	// A crawler's first visit…
	w := httptest.NewRecorder()
	handler.ServeHTTP(w, httptest.NewRequest("GET", "/posts/42", nil))
	fmt.Println(w.Code, w.Header().Get("Last-Modified"), len(w.Body.String()), "bytes")

	// …and its revisit with the validators it kept.
	r := httptest.NewRequest("GET", "/posts/42", nil)
	r.Header.Set("If-None-Match", w.Header().Get("ETag"))
	r.Header.Set("If-Modified-Since", w.Header().Get("Last-Modified"))
	w2 := httptest.NewRecorder()
	handler.ServeHTTP(w2, r)
	fmt.Println(w2.Code, w2.Header().Get("Cache-Control"), len(w2.Body.String()), "bytes")
	// Output:
	// 200 Sun, 04 May 2025 10:30:00 GMT 25 bytes
	// 304 no-cache 0 bytes
}

func ExampleConditionalHandler() {
	page := func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "the page\n")
	}
	h := site.ConditionalHandler(func(r *http.Request) (site.Validators, error) {
		return site.Validators{ETag: site.ETagOf(thePost.Version), LastModified: thePost.Updated}, nil
	}, http.HandlerFunc(page))

	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("If-Modified-Since", "Mon, 05 May 2025 00:00:00 GMT")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	fmt.Println(w.Code)
	// Output: 304
}

func ExampleETagOf() {
	a := site.ETagOf("post", 42, 7, templateVersion)
	b := site.ETagOf("post", 42, 8, templateVersion) // the post was edited
	fmt.Println(a == site.ETagOf("post", 42, 7, templateVersion), a == b)
	// Output: true false
}

// staticDNS is a Resolver for the example: one Googlebot address, and one
// address whose owner set its PTR record to a Googlebot name.
type staticDNS struct{}

func (staticDNS) LookupAddr(_ context.Context, addr string) ([]string, error) {
	switch addr {
	case "66.249.66.1":
		return []string{"crawl-66-249-66-1.googlebot.com."}, nil
	case "203.0.113.5":
		return []string{"crawl-66-249-66-9.googlebot.com."}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: addr, IsNotFound: true}
}

func (staticDNS) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	switch host {
	case "crawl-66-249-66-1.googlebot.com.":
		return []net.IPAddr{{IP: net.ParseIP("66.249.66.1")}}, nil
	case "crawl-66-249-66-9.googlebot.com.":
		return []net.IPAddr{{IP: net.ParseIP("66.249.66.9")}}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func ExampleVerifier() {
	v := &site.Verifier{Resolver: staticDNS{}} // in production: nil, the system's DNS
	ua := "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	for _, ip := range []string{"66.249.66.1", "203.0.113.5"} {
		res, err := v.Verify(context.Background(), netip.MustParseAddr(ip), ua)
		if err != nil {
			fmt.Println(ip, "could not be checked:", err)
			continue
		}
		fmt.Printf("%s: claims %s, verified %v by %v %s, spoofed %v\n", ip, res.Crawler, res.Verified, res.By, res.Host, res.Spoofed)
	}
	// Output:
	// 66.249.66.1: claims Googlebot, verified true by dns crawl-66-249-66-1.googlebot.com, spoofed false
	// 203.0.113.5: claims Googlebot, verified false by none , spoofed true
}

func ExampleParseIPRanges() {
	// In production: site.LoadIPRanges("googlebot.json"), the file Google
	// publishes, reloaded daily.
	ranges, err := site.ParseIPRanges(strings.NewReader(`{"creationTime": "2025-06-01T15:46:04.000000",
		"prefixes": [{"ipv4Prefix": "66.249.64.0/27"}, {"ipv6Prefix": "2001:4860:4801:10::/64"}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ranges.Contains(netip.MustParseAddr("66.249.64.9")), ranges.Contains(netip.MustParseAddr("66.249.65.9")))

	v := &site.Verifier{}
	v.SetRanges("Googlebot", ranges)
	res, _ := v.Verify(context.Background(), netip.MustParseAddr("2001:4860:4801:10::7"), "Googlebot/2.1")
	fmt.Println(res.Verified, res.By)
	// Output:
	// true false
	// true ip-range
}

func ExampleLoadShedder() {
	shedder := &site.LoadShedder{
		MaxInFlight: 64,                     // requests in progress
		MaxLatency:  500 * time.Millisecond, // 90th percentile of the last 10 s
		Who:         site.ShedBots,          // known crawlers and other bots
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "home\n")
	})
	srv := &http.Server{Addr: "127.0.0.1:8080", Handler: shedder.Handler(mux)}
	_ = srv // srv.ListenAndServe()

	w := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("User-Agent", "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)")
	srv.Handler.ServeHTTP(w, r) // not overloaded: served
	fmt.Println(w.Code, shedder.Stats().Shed)
	// Output: 200 0
}

// BotAuth as middleware: each handler reads the verdict on who sent the
// request.
func ExampleBotAuth_Handler() {
	auth := &site.BotAuth{
		// A tighter window than the drafts' 24 hours: a captured request
		// can be replayed to this site for no longer.
		MaxValidity: 10 * time.Minute,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		id, _ := site.IdentityFrom(r.Context())
		switch id.Verdict {
		case site.Spoofed:
			http.Error(w, "Forbidden", http.StatusForbidden)
			return
		case site.VerifiedBySignature:
			// id.Agent is the signer's origin, "https://crawler.example.org":
			// known now, trusted only if you choose to.
		case site.VerifiedByDNS:
			// id.Claim.Crawler is "Googlebot", "Bingbot", …
		}
		fmt.Fprintln(w, "hello")
	})
	http.ListenAndServe(":8080", auth.Handler(mux))
}
