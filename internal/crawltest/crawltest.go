// Package crawltest is what the module's end-to-end tests share: the root
// package's and those of e2e/..., which run in packages of their own so
// that go test runs them side by side.
//
// [Main] is their TestMain: every crawl the test binary runs checks the
// work it skips (hook.VerifyShortcuts), and the binary doubles as the
// gentlecrawl command line for the crawler processes the tests start and
// kill ([Command], [StartChild]). [MustCrawl] runs a crawl and reads its
// WARC files back when the test ends (internal/warccheck);
// [ExpectedFetches] walks a simweb's link graph as a polite crawler must,
// to hold a crawl's requests to.
//
// It is for tests only (deps_test.go).
package crawltest

import (
	"context"
	"errors"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/fetch"
	"github.com/gentlecrawl/gentlecrawl/internal/simweb"
	"github.com/gentlecrawl/gentlecrawl/internal/warccheck"
	"github.com/gentlecrawl/gentlecrawl/warc"
)

// MustCrawl runs a crawl of cfg until it ends or ctx is done, and returns
// its summary; a crawl that cannot start or fails ends the test. When the
// test ends, the job's WARC files are read back (internal/warccheck).
func MustCrawl(t *testing.T, ctx context.Context, cfg gentlecrawl.Config) *gentlecrawl.Summary {
	t.Helper()
	warccheck.AtCleanup(t, cfg.JobDir)
	c, err := gentlecrawl.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// ConnectTo reads --connect-to rules as the command line does
// (HOST1:PORT1:HOST2:PORT2; "::ADDR" sends every host there), for
// Config.ConnectTo.
func ConnectTo(specs ...string) []gentlecrawl.ConnectTo {
	var out []gentlecrawl.ConnectTo
	for _, s := range specs {
		ct, err := fetch.ParseConnectTo(s)
		if err != nil {
			panic(err)
		}
		out = append(out, gentlecrawl.ConnectTo(ct))
	}
	return out
}

// ServeWeb starts the simweb of cfg on loopback for the test, and returns
// it with its server's catch-all address (for Config.ConnectTo).
func ServeWeb(t *testing.T, cfg simweb.Config) (*simweb.Web, string) {
	t.Helper()
	web, err := simweb.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := web.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return web, srv.CatchAll()
}

// ExpectedFetches walks the web's own link graph from the seeds the way a
// polite crawler must: it follows links only from pages it may fetch, and
// fetches every page robots.txt allows, once. The result maps "host path"
// to the resource.
func ExpectedFetches(t *testing.T, web *simweb.Web, agent string) map[string]simweb.Resource {
	t.Helper()
	want := make(map[string]simweb.Resource)
	var queue []string
	seen := make(map[string]bool)
	push := func(raw string) {
		if !seen[raw] {
			seen[raw] = true
			queue = append(queue, raw)
		}
	}
	for _, h := range web.Hosts() {
		push(h.URL("/"))
	}
	for len(queue) > 0 {
		raw := queue[0]
		queue = queue[1:]
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("bad link in the web's graph: %q", raw)
		}
		h := web.Host(u.Host)
		if h == nil {
			continue // outside the web, so outside the scope of the seeds
		}
		path := u.RequestURI()
		if !web.Allowed(h.Name, path, agent) {
			continue
		}
		if skip, _ := fetch.DefaultExtensionPolicy().Skip(u); skip {
			continue // an archive or executable: not downloaded by default
		}
		res, ok := h.Resource(path)
		if !ok {
			t.Fatalf("link to a missing resource %s", raw)
		}
		want[h.Name+" "+path] = res
		for _, l := range res.Links {
			push(l)
		}
	}
	return want
}

// GenStrict reports whether GENTLECRAWL_GEN_STRICT holds the crawls of
// generated webs and CMSs (e2e/urlspace, e2e/cms) to the goal — every
// real page, 1.2 requests per real page — rather than to what the crawler
// does today.
func GenStrict() bool { return os.Getenv("GENTLECRAWL_GEN_STRICT") != "" }

// IsRobotsPath reports whether p is a simweb host's robots.txt, where it
// is or where it was moved.
func IsRobotsPath(p string) bool { return p == "/robots.txt" || p == "/robots-moved.txt" }

// ReadWARC reads every WARC file in dir with the warc package's reader and
// counts records by type; a file that does not read to the end fails.
func ReadWARC(t *testing.T, dir string) map[string]int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no WARC files in %s (%v)", dir, err)
	}
	counts := make(map[string]int)
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		r, err := warc.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			counts[rec.Type]++
		}
		f.Close()
	}
	if open, _ := filepath.Glob(filepath.Join(dir, "*.open")); len(open) > 0 {
		t.Errorf("WARC files left open after the crawl: %v", open)
	}
	return counts
}
