package gentlecrawl

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
	"github.com/gentlecrawl/gentlecrawl/internal/hostload"
	"github.com/gentlecrawl/gentlecrawl/robots"
)

// TestSlowedBounded: the summary names the first maxSlowedHosts hosts that
// pushed back, keeps their figures current, and says when more did.
func TestSlowedBounded(t *testing.T) {
	c := &Crawler{stats: newStats()}
	pushed := func(events int) *hostload.Load {
		l := hostload.NewLoad(hostload.LoadConfig{}, 0, "", 1)
		now := time.Now()
		for range events {
			l.Observe(hostload.Outcome{Start: now, End: now, Status: 200})
			now = now.Add(time.Minute)
			l.Observe(hostload.Outcome{Start: now, End: now, Status: 503})
			now = now.Add(time.Minute)
		}
		return l
	}
	once := pushed(1)
	for i := range maxSlowedHosts + 50 {
		c.noteLoad(fmt.Sprintf("h%d.test", i), once)
	}
	c.noteLoad("h0.test", pushed(2))
	s := c.stats.snapshot()
	if len(s.Slowed) != maxSlowedHosts || !s.SlowedMore {
		t.Errorf("%d hosts named, more: %v; want %d and true", len(s.Slowed), s.SlowedMore, maxSlowedHosts)
	}
	if s.Slowed["h0.test"].Events != 2 {
		t.Errorf("a named host's figures not kept current: %+v", s.Slowed["h0.test"])
	}
}

// TestRobotsEvictionKeepsRules: an origin whose parsed robots.txt was
// evicted from the bounded cache gets its rules back from the store while
// they are fresh: a disallow still holds, robots.txt is not asked for
// again before its time, and an unavailable robots.txt is not asked for
// before its retry. Only expired rules send the crawl to fetch it.
func TestRobotsEvictionKeepsRules(t *testing.T) {
	dir := t.TempDir()
	c, err := New(Config{JobDir: dir, Seeds: []string{"http://h0.test/"}})
	if err != nil {
		t.Fatal(err)
	}
	store, err := frontier.Open(filepath.Join(dir, "store"), frontier.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	c.store = store
	c.robots.max = 4
	ctx := t.Context()
	now := time.Now()
	put := func(origin string, rec *frontier.RobotsRecord) {
		if err := store.PutRobots(ctx, origin, rec); err != nil {
			t.Fatal(err)
		}
	}
	const origins = 40
	for i := range origins {
		put(fmt.Sprintf("http://h%d.test", i), &frontier.RobotsRecord{
			Checked: now, Expires: now.Add(time.Hour), Status: 200,
			Source: robots.SourceResponse.String(), Outcome: robots.OutcomeParsed.String(),
			Body: []byte("User-agent: *\nDisallow: /private/\n"), Fetched: now,
		})
	}
	put("http://stale.test", &frontier.RobotsRecord{
		Checked: now.Add(-2 * time.Hour), Expires: now.Add(-time.Hour), Status: 200,
		Source: robots.SourceResponse.String(), Outcome: robots.OutcomeParsed.String(),
		Body: []byte("User-agent: *\nDisallow: /\n"), Fetched: now.Add(-2 * time.Hour),
	})
	retry := now.Add(10 * time.Minute)
	put("http://down.test", &frontier.RobotsRecord{
		Checked: now, Expires: retry, Status: 500, Source: robots.SourceDisallowAll.String(), Failures: 1,
	})

	down, err := c.robotsFor(ctx, "http://down.test")
	if err != nil || down == nil || !down.unavailable || !down.retryAt.Equal(retry) {
		t.Fatalf("unavailable robots.txt read back as %+v, %v", down, err)
	}
	// Every origin twice round: the second time each was evicted since.
	for round := range 2 {
		for i := range origins {
			origin := fmt.Sprintf("http://h%d.test", i)
			r, err := c.robotsFor(ctx, origin)
			if err != nil {
				t.Fatal(err)
			}
			if r == nil {
				t.Fatalf("round %d: %s: robots.txt to be fetched again, an hour before it expires", round, origin)
			}
			if r.group.Allowed("/private/x") || !r.group.Allowed("/public") {
				t.Fatalf("round %d: %s: rules read back wrong", round, origin)
			}
			if n := len(c.robots.hosts); n > 4+1 { // the bound, and the unavailable one kept
				t.Fatalf("%d origins cached, bound 4", n)
			}
		}
	}
	if r := c.robots.get("http://down.test"); r == nil || !r.unavailable || !r.retryAt.Equal(retry) {
		t.Errorf("unavailable origin evicted or changed: %+v", r)
	}
	if r, err := c.robotsFor(ctx, "http://down.test"); err != nil || r == nil || !r.unavailable {
		t.Errorf("unavailable robots.txt asked again before its retry: %+v, %v", r, err)
	}
	if r, err := c.robotsFor(ctx, "http://stale.test"); err != nil || r != nil {
		t.Errorf("expired rules used: %+v, %v", r, err)
	}
}

// TestSharedAddrsBounded: a shared crawl's memo of the addresses it wrote
// to the database holds at most maxSharedAddrs hosts; a host forgotten is
// written again.
func TestSharedAddrsBounded(t *testing.T) {
	s := &shared{addrs: make(map[string]string)}
	if s.noteAddr("h0.test", "192.0.2.1") || !s.noteAddr("h0.test", "192.0.2.1") {
		t.Fatal("a host's address not remembered")
	}
	if s.noteAddr("h0.test", "192.0.2.2") {
		t.Error("a new address for a host taken for known")
	}
	for i := range maxSharedAddrs + 10 {
		s.noteAddr(fmt.Sprintf("h%d.test", i), "192.0.2.1")
		if len(s.addrs) > maxSharedAddrs {
			t.Fatalf("%d addresses kept, bound %d", len(s.addrs), maxSharedAddrs)
		}
	}
	if s.noteAddr("h0.test", "192.0.2.1") {
		t.Error("a host forgotten at the bound taken for known")
	}
}
