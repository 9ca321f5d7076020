package fetch

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchPage returns an HTML page of about n bytes that compresses the way
// real pages do (around 4-6x), not like a run of one byte.
func benchPage(n int) []byte {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html><html><head><title>bench</title></head><body>\n")
	for i := 0; b.Len() < n-20; i++ {
		fmt.Fprintf(&b, "<p class=\"item-%d\"><a href=\"/section/%d/page-%d.html\">Item %d of the list</a> written %d times, id %x</p>\n", i%7, i%13, i, i, i*31%97, i*2654435761)
	}
	b.WriteString("</body></html>\n")
	return []byte(b.String())[:n]
}

// BenchmarkFetch compares Client.Do with plain net/http doing the same
// requests on loopback: one connection, kept alive, 5 KB and 50 KB pages,
// with and without gzip. net/http decodes gzip itself (its transparent
// decompression); Do does all of its work (limits, sniffing, raw copy for
// WARC, timers, trace). Run:
//
//	go test -tags pebblegozstd ./internal/fetch/ -run XXX -bench Fetch -benchmem
func BenchmarkFetch(b *testing.B) {
	pages := map[string][]byte{}
	for _, size := range []int{5_000, 50_000} {
		p := benchPage(size)
		pages[fmt.Sprintf("/%d", size)] = p
		pages[fmt.Sprintf("/%d.gz", size)] = encode(b, "gzip", p)
	}
	srv := newBenchServer(b, pages)

	for _, size := range []int{5_000, 50_000} {
		for _, gz := range []bool{false, true} {
			path := fmt.Sprintf("/%d", size)
			name := fmt.Sprintf("%dKB", size/1000)
			if gz {
				path += ".gz"
				name += "-gzip"
			}
			pageURL := srv + path
			b.Run(name+"/gentlecrawl", func(b *testing.B) {
				c, err := New(Config{UserAgent: testUA, AllowPrivateNetworks: true})
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				u, err := url.Parse(pageURL)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				cpu := cpuTime()
				for b.Loop() {
					res, err := c.Do(context.Background(), Request{URL: u})
					if err != nil || len(res.Body) != size {
						b.Fatalf("%v, %d bytes", err, len(bodyOf(res)))
					}
				}
				reportRates(b, cpu)
			})
			b.Run(name+"/nethttp", func(b *testing.B) {
				tr := &http.Transport{MaxIdleConnsPerHost: 16}
				defer tr.CloseIdleConnections()
				client := &http.Client{Transport: tr}
				b.ReportAllocs()
				cpu := cpuTime()
				for b.Loop() {
					req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, pageURL, nil)
					req.Header.Set("User-Agent", testUA)
					resp, err := client.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					body, err := io.ReadAll(io.LimitReader(resp.Body, DefaultMaxBodySize))
					resp.Body.Close()
					if err != nil || len(body) != size {
						b.Fatalf("%v, %d bytes", err, len(body))
					}
				}
				reportRates(b, cpu)
			})
		}
	}
}

// newBenchServer serves pages; a path ending in .gz is sent with
// Content-Encoding: gzip.
func newBenchServer(b *testing.B, pages map[string][]byte) string {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if strings.HasSuffix(r.URL.Path, ".gz") {
			w.Header().Set("Content-Encoding", "gzip")
		}
		w.Write(p)
	})
	ts := httptest.NewServer(h)
	b.Cleanup(ts.Close)
	return ts.URL
}

// cpuTime returns the CPU time (user and system) the process has used. On a
// shared machine it is a steadier measure than the wall clock: the test
// server runs in the same process and costs the same for both clients.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportRates(b *testing.B, cpuStart time.Duration) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	if used := cpuTime() - cpuStart; used > 0 {
		b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
		b.ReportMetric(float64(b.N)/used.Seconds(), "req/cpu-s")
	}
}
