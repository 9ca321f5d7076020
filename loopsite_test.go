package gentlecrawl_test

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/crawltest"
)

// crawlSite serves handler on loopback as http://site.test/, crawls it
// from its home page with the defaults (two workers, 1 ms between
// requests), and returns how many times each request URI (path and
// query) was asked for, and the requests in order.
func crawlSite(t *testing.T, handler http.HandlerFunc) (count map[string]int, log []string) {
	t.Helper()
	var mu sync.Mutex
	count = map[string]int{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		count[r.URL.RequestURI()]++
		log = append(log, r.URL.RequestURI())
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		handler(w, r)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	crawltest.MustCrawl(t, t.Context(), gentlecrawl.Config{
		JobDir: t.TempDir(), Seeds: []string{"http://site.test/"}, Delay: time.Millisecond, Workers: 2,
		ConnectTo: crawltest.ConnectTo("::" + ln.Addr().String()), AllowPrivateNetworks: true,
	})
	srv.Close()
	mu.Lock()
	defer mu.Unlock()
	return count, log
}

// sscan reports whether s is format with args filled in, whole.
func sscan(s, format string, args ...*int) bool {
	ptrs := make([]any, len(args))
	vals := make([]any, len(args))
	for i, a := range args {
		ptrs[i] = a
	}
	if n, err := fmt.Sscanf(s, format, ptrs...); err != nil || n != len(args) {
		return false
	}
	for i, a := range args {
		vals[i] = *a
	}
	return fmt.Sprintf(format, vals...) == s
}

// catalogPage is the body of a catalogue's page at ?from=N: perPage of
// its products items, linked by itemURL and named by name, then a link to
// each of its other pages; ok is false when from is none of its pages.
func catalogPage(r *http.Request, products, perPage int, itemURL, name func(int) string) (body string, ok bool) {
	from, _ := strconv.Atoi(r.URL.Query().Get("from"))
	if from < 0 || from >= products || from%perPage != 0 {
		return "", false
	}
	var b strings.Builder
	for i := from; i < from+perPage; i++ {
		fmt.Fprintf(&b, `<a href="%s">%s</a> `, itemURL(i), name(i))
	}
	for f := 0; f < products; f += perPage {
		if f != from {
			fmt.Fprintf(&b, `<a href="/catalog?from=%d">%d</a> `, f, f/perPage+1)
		}
	}
	return b.String(), true
}
