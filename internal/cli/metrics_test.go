package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedWriter is a buffer that the crawl writes and a handler reads at once.
type lockedWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestCrawlServesMetrics: with --metrics-addr the command serves the
// crawl's metrics while it runs, at the address it logs ("metrics
// served"), and they count the requests made so far.
func TestCrawlServesMetrics(t *testing.T) {
	var stderr lockedWriter
	var (
		mu      sync.Mutex
		scraped string
		scrapeE error
	)
	// The server scrapes the metrics while it answers /one: mid-crawl.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<html><body><a href="/one">one</a></body></html>`)
		case "/one":
			body, err := scrapeLogged(stderr.String())
			mu.Lock()
			scraped, scrapeE = body, err
			mu.Unlock()
			fmt.Fprint(w, `<html><body>one</body></html>`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var stdout strings.Builder
	code := Run(ctx, []string{"crawl", "-q", "-v", "--log-format", "json", "--delay", "1ms", "--job", filepath.Join(t.TempDir(), "job"),
		"--allow-private-networks", "--metrics-addr", "127.0.0.1:0", "--metrics-hosts", "1", srv.URL + "/"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if scrapeE != nil {
		t.Fatalf("scraping the metrics during the crawl: %v\n%s", scrapeE, stderr.String())
	}
	// robots.txt and / were answered before /one was asked.
	for _, want := range []string{`gentlecrawl_requests_total{code="200",kind="page",purpose="discovery",type="html"} 1`, "gentlecrawl_queued_urls", "gentlecrawl_hosts_waiting", `host="127.0.0.1"`} {
		if !strings.Contains(scraped, want) {
			t.Errorf("the metrics lack %s:\n%s", want, scraped)
		}
	}
}

// scrapeLogged gets the metrics at the URL of the "metrics served" line of
// a JSON log.
func scrapeLogged(log string) (string, error) {
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		var line struct{ Msg, URL string }
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "metrics served" {
			res, err := http.Get(line.URL)
			if err != nil {
				return "", err
			}
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			if res.StatusCode != 200 {
				return "", fmt.Errorf("%s: %s", res.Status, b)
			}
			return string(b), err
		}
	}
	return "", fmt.Errorf("no \"metrics served\" line in the log")
}
