package servers_test

import (
	"net/url"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/crawltest"
	"github.com/gentlecrawl/gentlecrawl/internal/nginxtest"
	"github.com/gentlecrawl/gentlecrawl/internal/pgtest"
)

// TestSharedRealServer runs a shared crawl against a server we did not
// write: nginx from Debian serving Debian's rust-doc HTML (/std/collections/)
// as three sites on one IP address, crawled by three processes on one
// PostgreSQL — one with the first site's seed, one with the other two, one
// with none — each with its own User-Agent token, so that nginx's log says
// who sent what. From nginx's log: every page the walk of the files finds
// is answered 200 exactly once, robots.txt once per site and first; on each
// site no request overlaps another and none starts sooner than the delay
// after the one before, whichever processes sent them; and the three sites
// together never have more requests in flight than the per-address budget
// of one process (2), since they share an address.
func TestSharedRealServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three crawler processes, nginx and PostgreSQL")
	}
	requireRustDoc(t)
	dsn := pgtest.DB(t)
	const (
		sub   = "/std/collections/"
		delay = 20 * time.Millisecond
		// nginx logs the end of a request and its duration in
		// milliseconds: a start worked out from them is off by up to 2 ms.
		slack = 2 * time.Millisecond
	)
	names := []string{"a.rust-doc.test", "b.rust-doc.test", "c.rust-doc.test"}
	var sites []nginxtest.Site
	for _, n := range names {
		// limit_rate makes an answer last (tens of ms for a page: 125 KB
		// at 2 MB/s, written 4 KB at a time), so that requests in flight
		// at once show in the log.
		sites = append(sites, nginxtest.Site{Name: n, Addr: "127.0.0.2:0", Root: rustDoc, Directives: []string{"sendfile off", "output_buffers 2 4k", "limit_rate 2m"}})
	}
	srv := nginxtest.Start(t, sites...)
	reach, err := walkSite(rustDoc, names[0], sub+"index.html", sub)
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	args := func(agent string, seeds ...string) []string {
		a := []string{"crawl", "-q", "--frontier", dsn, "--job", filepath.Join(dir, agent),
			"--user-agent", agent, "--delay", delay.String(), "--workers", "4", "--allow-private-networks"}
		for _, n := range names {
			a = append(a, "--connect-to", n+":80:"+srv.Addr(n), "--include", "^"+regexp.QuoteMeta("http://"+n+sub))
		}
		for _, s := range seeds {
			a = append(a, "http://"+s+sub+"index.html")
		}
		return a
	}
	ps := []*crawltest.Child{
		crawltest.StartChild(t, "gcone", args("gcone", names[0])),
		crawltest.StartChild(t, "gctwo", args("gctwo", names[1], names[2])),
		crawltest.StartChild(t, "gcthree", args("gcthree")),
	}
	for _, p := range ps {
		p.Wait(t, 6*time.Minute)
	}
	es, err := srv.Entries()
	if err != nil {
		t.Fatal(err)
	}

	bySite := map[string][]nginxtest.Entry{}
	agents := map[string]int{}
	for _, e := range es {
		bySite[e.Site] = append(bySite[e.Site], e)
		for _, p := range ps {
			if strings.Contains(e.UserAgent, p.Name) {
				agents[p.Name]++
			}
		}
	}
	for _, n := range names {
		entries := bySite[n]
		sort.Slice(entries, func(i, j int) bool { return entries[i].Start().Before(entries[j].Start()) })
		got := map[string][]int{}
		for _, e := range entries {
			u, err := url.Parse(e.URI)
			if err != nil {
				t.Errorf("%s: access log: %q: %v", n, e.URI, err)
				continue
			}
			got[siteKey(u)] = append(got[siteKey(u)], e.Status)
		}
		for k := range reach.pages {
			if st := got[k]; len(st) != 1 || st[0] != 200 {
				t.Errorf("%s%s: statuses %v, want one 200", n, k, st)
			}
		}
		if len(entries) == 0 || entries[0].URI != "/robots.txt" || len(got["/robots.txt"]) != 1 {
			t.Errorf("%s: robots.txt asked %d times; want once, first", n, len(got["/robots.txt"]))
		}
		who := map[string]bool{}
		for i, e := range entries {
			for _, p := range ps {
				if strings.Contains(e.UserAgent, p.Name) {
					who[p.Name] = true
				}
			}
			if i == 0 {
				continue
			}
			prev := entries[i-1]
			switch gap := e.Start().Sub(prev.Time); {
			case gap < -slack:
				t.Errorf("%s: %s (%s) started %v before %s (%s) ended: two at a time", n, e.URI, e.UserAgent, -gap, prev.URI, prev.UserAgent)
			case gap < delay-slack:
				t.Errorf("%s: %s (%s) started %v after %s (%s) ended, want at least %v", n, e.URI, e.UserAgent, gap, prev.URI, prev.UserAgent, delay)
			}
		}
		t.Logf("%s: %d requests, by %d processes", n, len(entries), len(who))
	}
	// The sites share 127.0.0.2: at most two requests in flight to it,
	// counted on intervals narrowed by the log's resolution.
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	spans := 0
	for _, e := range es {
		if e.Time.Sub(e.Start()) > 2*slack {
			spans++
			edges = append(edges, edge{e.Start().Add(slack), 1}, edge{e.Time.Add(-slack), -1})
		}
	}
	sort.Slice(edges, func(i, j int) bool {
		if !edges[i].at.Equal(edges[j].at) {
			return edges[i].at.Before(edges[j].at)
		}
		return edges[i].delta < edges[j].delta
	})
	in, most := 0, 0
	for _, e := range edges {
		in += e.delta
		most = max(most, in)
	}
	if most > 2 {
		t.Errorf("%d requests in flight at once to the sites' one address, over the budget of 2", most)
	}
	t.Logf("%d requests, by process %v; %d pages a site; at most %d in flight (%d requests long enough to count)", len(es), agents, len(reach.pages), most, spans)
	for _, p := range ps[:2] {
		if agents[p.Name] == 0 {
			t.Errorf("%s, which had seeds, sent nothing", p.Name)
		}
	}
	if spans == 0 {
		t.Error("no request lasted long enough to tell what was in flight")
	}
}
