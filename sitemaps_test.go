package gentlecrawl_test

import (
	"testing"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/crawltest"
	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
)

// TestSitemaps: the sitemaps a host lists in robots.txt (an index, a plain
// and a gzipped part) are read, and the pages they list are fetched once.
func TestSitemaps(t *testing.T) {
	web, err := simweb.New(simweb.Config{Hosts: 1, Profiles: []simweb.Profile{simweb.ProfileAllow},
		HostOptions: func(int, string) simweb.HostOptions {
			return simweb.HostOptions{Pages: 40, NoFiles: true, Traps: simweb.Traps{Sitemaps: true}}
		}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := web.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	h := web.Hosts()[0]
	c, err := gentlecrawl.New(gentlecrawl.Config{
		JobDir: t.TempDir(), Seeds: []string{h.URL("/")}, Delay: time.Millisecond,
		ConnectTo: crawltest.ConnectTo(srv.CatchAll()), AllowPrivateNetworks: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := c.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	web.Drain(t.Context())
	counts := map[string]int{}
	for _, e := range web.Requests() {
		counts[e.Path]++
	}
	for _, p := range []string{"/sitemap.xml", "/sitemap-1.xml", "/sitemap-2.xml.gz"} {
		if counts[p] != 1 {
			t.Errorf("%s requested %d times, want once", p, counts[p])
		}
	}
	for p, n := range counts {
		if n > 1 {
			t.Errorf("%s requested %d times", p, n)
		}
	}
	if sum.Sitemaps != 3 || sum.SitemapURLs != len(h.DistinctPages()) {
		t.Errorf("summary: %d sitemaps listing %d URLs; want 3 and %d", sum.Sitemaps, sum.SitemapURLs, len(h.DistinctPages()))
	}
}
