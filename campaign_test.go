package gentlecrawl_test

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/crawltest"
)

// TestCampaignParameters: links that carry analytics campaign parameters
// and advertising click ids (utm_source, gclid, fbclid) are fetched
// without them, once for all the campaigns that linked them; a parameter
// the site's content may depend on ("utm" alone, "id") is kept.
func TestCampaignParameters(t *testing.T) {
	var mu sync.Mutex
	var log []string
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		log = append(log, r.URL.RequestURI())
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<html><body>
<a href="/a?utm_source=news&utm_medium=email&utm_campaign=spring">a</a>
<a href="/a?utm_campaign=summer">a again</a>
<a href="/a?gclid=Cj0KCQ123&fbclid=IwAR0x">a from ads</a>
<a href="/b?id=7&utm_content=footer">b</a>
<a href="/c?utm=1">c</a>
</body></html>`)
		default:
			fmt.Fprint(w, `<html><body><p>`+strings.Repeat("words of a page ", 20)+r.URL.Path+`</p></body></html>`)
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	crawltest.MustCrawl(t, t.Context(), gentlecrawl.Config{
		JobDir: t.TempDir(), Seeds: []string{"http://site.test/"}, Delay: time.Millisecond, Workers: 2,
		ConnectTo: crawltest.ConnectTo("::" + ln.Addr().String()), AllowPrivateNetworks: true,
	})
	mu.Lock()
	defer mu.Unlock()
	count := map[string]int{}
	for _, u := range log {
		count[u]++
	}
	for _, want := range []string{"/", "/a", "/b?id=7", "/c?utm=1"} {
		if count[want] != 1 {
			t.Errorf("%s requested %d times, want once; requests %v", want, count[want], log)
		}
	}
	for _, u := range log {
		if strings.Contains(u, "utm_") || strings.Contains(u, "clid") {
			t.Errorf("requested %s with a campaign parameter", u)
		}
	}
}
