package check_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/apachetest"
	"github.com/gentlecrawl/gentlecrawl/internal/check"
	"github.com/gentlecrawl/gentlecrawl/internal/fetch"
	"github.com/gentlecrawl/gentlecrawl/internal/nginxtest"
	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
)

// connectTo sends http://NAME/ to addr, as --connect-to NAME:80:ADDR does.
func connectTo(t *testing.T, name, addr string) func(*check.Config) {
	return func(c *check.Config) {
		ct, err := fetch.ParseConnectTo(name + ":80:" + addr)
		if err != nil {
			t.Fatal(err)
		}
		c.ConnectTo = append(c.ConnectTo, ct)
	}
}

// nginxFault is a site of Debian's nginx with one fault, or none.
type nginxFault struct {
	name  string // the site's name, "clean.test"
	site  nginxtest.Site
	want  []string // the fail and warn findings, exactly
	info  string   // an info finding that must be there
	robot bool     // robots.txt fails: the server sees that request alone
}

// TestNginx checks sites of a real nginx (internal/nginxtest) with simweb
// pages, each with one fault of the configuration, and one without: the
// findings are exactly the fault's, and the politeness is read from
// nginx's own access log. The number of pages and the links change with
// the seed.
func TestNginx(t *testing.T) {
	nginxtest.Require(t)
	faults := []nginxFault{
		{name: "clean", site: nginxtest.Site{Gzip: true}, info: check.IDValidators},
		// Last-Modified still sent, but If-Modified-Since ignored.
		{name: "ims-off", site: nginxtest.Site{Gzip: true, Directives: []string{"etag off", "if_modified_since off"}}, want: []string{check.IDConditionalIgnored}},
		// SSI drops ETag and Last-Modified from the pages it processes.
		{name: "ssi", site: nginxtest.Site{Gzip: true, Directives: []string{"ssi on"}}, want: []string{check.IDNoValidators}},
		{name: "gzip-off", site: nginxtest.Site{}, want: []string{check.IDNoCompression}},
		{name: "robots-503", site: nginxtest.Site{Gzip: true, Locations: []nginxtest.Location{{Match: "= /robots.txt", Directives: []string{"return 503"}}}},
			want: []string{check.IDRobotsUnavailable}, robot: true},
		{name: "robots-html", site: nginxtest.Site{Gzip: true, Locations: []nginxtest.Location{{Match: "= /robots.txt", Directives: []string{"types { }", "default_type text/html", "try_files /index.html =404"}}}},
			want: []string{check.IDRobotsHTML}},
		{name: "soft-404", site: nginxtest.Site{Gzip: true, NotFound: "/index.html"}, want: []string{check.IDSoft404}},
	}
	type run1 struct {
		fault nginxFault
		seed  uint64
		pages int
	}
	var runs []run1
	var sites []nginxtest.Site
	for _, f := range faults {
		for _, seed := range seeds() {
			r := run1{f, seed, 10 + rand.New(rand.NewPCG(seed, 11)).IntN(40)}
			site := f.site
			site.Name = fmt.Sprintf("%s-%d.test", f.name, seed)
			site.Addr = "127.0.0.1:0"
			site.Root = filepath.Join(t.TempDir(), "root")
			if _, err := nginxtest.WriteSite(site.Root, site.Name, r.pages, seed); err != nil {
				t.Fatal(err)
			}
			r.fault.site = site
			runs = append(runs, r)
			sites = append(sites, site)
		}
	}
	srv := nginxtest.Start(t, sites...)
	each(t, runs, func(r run1) string { return fmt.Sprintf("%s/seed%d-pages%d", r.fault.name, r.seed, r.pages) }, func(t *testing.T, r run1) {
		name := r.fault.site.Name
		rep := run(t, "http://"+name+"/", connectTo(t, name, srv.Addr(name)))
		expect(t, rep, r.fault.want...)
		if r.fault.info != "" {
			finding(t, rep, r.fault.info)
		}
		log := nginxLog(t, srv, name, rep.Requests)
		if r.fault.robot && len(log) != 1 {
			t.Errorf("nginx logged %d requests, want robots.txt alone", len(log))
		}
		// nginx logs in milliseconds: a gap can read 2 ms short.
		politeness(t, log, gap, 2*time.Millisecond, nil)
	})
}

// nginxLog returns the site's requests from nginx's access log, once it
// holds the n the check sent.
func nginxLog(t *testing.T, srv *nginxtest.Server, site string, n int) []hit {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var log []hit
	for {
		es, err := srv.Entries()
		if err != nil {
			t.Fatal(err)
		}
		log = log[:0]
		for _, e := range es {
			if e.Site == site {
				log = append(log, hit{Start: e.Start(), End: e.Time, Path: e.URI, UA: e.UserAgent, Status: e.Status})
			}
		}
		if len(log) >= n {
			if len(log) > n {
				t.Errorf("nginx logged %d requests, the report says %d", len(log), n)
			}
			return log
		}
		select {
		case <-ctx.Done():
			t.Fatalf("nginx logged %d requests, the report says %d", len(log), n)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// writeHTMLSite writes pages HTML files for Apache: index.html and
// p/N.html, linked to each other as the seed draws, modified long ago (so
// that Apache's ETags are strong).
func writeHTMLSite(t *testing.T, dir string, pages int, seed uint64) {
	t.Helper()
	old := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	s := &site{Pages: pages, Seed: seed}
	for i := range pages {
		body := s.page(i, nil)
		body = bytes.ReplaceAll(body, []byte(`href="/p/`), []byte(`href="/p/x`))
		body = bytes.ReplaceAll(body, []byte(`">page `), []byte(`.html">page `))
		body = bytes.ReplaceAll(body, []byte(`href="/.html"`), []byte(`href="/"`))
		body = bytes.ReplaceAll(body, []byte(`href="/p/x`), []byte(`href="/p/`))
		name := "index.html"
		if i > 0 {
			name = fmt.Sprintf("p/%d.html", i)
		}
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, body, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, old, old); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "robots.txt"), []byte("User-agent: *\nDisallow: /private/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestApache checks sites of a real Apache (internal/apachetest): as
// Debian ships it, with mod_deflate, whose "-gzip" ETags do not match in
// If-None-Match while If-Modified-Since alone gets 304 — that is no
// problem found, and the info finding etag-gzip-suffix, not
// conditional-ignored; with the fix (DeflateAlterETag Remove), where the
// date decides; and without mod_deflate, where pages go uncompressed.
func TestApache(t *testing.T) {
	apachetest.Require(t)
	type apacheFault struct {
		name string
		site apachetest.Site
		want []string
		info string
	}
	faults := []apacheFault{
		{name: "debian", site: apachetest.Site{Deflate: true}, info: check.IDETagGzipSuffix},
		{name: "fixed", site: apachetest.Site{Deflate: true, Directives: []string{"DeflateAlterETag Remove"}}, info: check.IDValidators},
		{name: "no-deflate", site: apachetest.Site{}, want: []string{check.IDNoCompression}, info: check.IDValidators},
	}
	type run1 struct {
		fault apacheFault
		seed  uint64
		pages int
	}
	var runs []run1
	var sites []apachetest.Site
	for _, f := range faults {
		for _, seed := range seeds() {
			r := run1{f, seed, 5 + rand.New(rand.NewPCG(seed, 13)).IntN(40)}
			site := f.site
			site.Name = fmt.Sprintf("%s-%d.test", f.name, seed)
			site.Addr = "127.0.0.3:0"
			site.Root = t.TempDir()
			writeHTMLSite(t, site.Root, r.pages, seed)
			r.fault.site = site
			runs = append(runs, r)
			sites = append(sites, site)
		}
	}
	srv := apachetest.Start(t, sites...)
	each(t, runs, func(r run1) string { return fmt.Sprintf("%s/seed%d-pages%d", r.fault.name, r.seed, r.pages) }, func(t *testing.T, r run1) {
		name := r.fault.site.Name
		rep := run(t, "http://"+name+"/", connectTo(t, name, srv.Addr(name)))
		expect(t, rep, r.fault.want...)
		finding(t, rep, r.fault.info)
		if rep.Has(check.IDConditionalIgnored) {
			t.Error("conditional-ignored on Apache, which answers 304 to If-Modified-Since")
		}
		var log []hit
		deadline := time.Now().Add(10 * time.Second)
		for len(log) < rep.Requests && time.Now().Before(deadline) {
			es, err := srv.Entries()
			if err != nil {
				t.Fatal(err)
			}
			log = log[:0]
			for _, e := range es {
				if e.Site == name {
					log = append(log, hit{Start: e.Start(), End: e.Time, Path: e.URI, UA: e.UserAgent, Status: e.Status})
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		if len(log) != rep.Requests {
			t.Fatalf("Apache logged %d requests, the report says %d", len(log), rep.Requests)
		}
		// Apache stamps the end of a request after logging it, a little
		// after the client has read the answer.
		politeness(t, log, gap, 5*time.Millisecond, func(p string) bool { return strings.HasPrefix(p, "/private/") })
	})
}

// TestSimweb checks hosts of the synthetic web: a host whose links all
// carry a session id (simweb's Traps.SessionIDs, values that change from
// link to link) gives session-ids and nothing else; a plain host gives
// nothing. The politeness is read from simweb's request log.
func TestSimweb(t *testing.T) {
	type host struct {
		name    string
		session string
		want    []string
	}
	eachSeed(t, []host{
		{"plain", "", nil},
		{"jsessionid", "jsessionid", []string{check.IDSessionIDs}},
		{"sid", "sid", []string{check.IDSessionIDs}},
		{"invented", "trk", []string{check.IDSessionIDs}},
	}, func(h host) string { return h.name }, 8, 60, func(t *testing.T, h host, seed uint64, pages int) {
		web, err := simweb.New(simweb.Config{
			Seed: int64(seed), Hosts: 1, Profiles: []simweb.Profile{simweb.ProfileAllow},
			HostOptions: func(int, string) simweb.HostOptions {
				return simweb.HostOptions{Pages: pages, NoFiles: true, Traps: simweb.Traps{SessionIDs: h.session}}
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		srv, err := web.Start("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		name := web.Hosts()[0].Name
		rep := run(t, "http://"+name+"/", connectTo(t, name, srv.Addr))
		expect(t, rep, h.want...)
		var log []hit
		for _, r := range web.Requests() {
			log = append(log, hit{Start: r.Start, End: r.End, Path: r.Path, UA: r.UserAgent, Status: r.Status})
		}
		politeness(t, log, gap, 0, nil)
	})
}
