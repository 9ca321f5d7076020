package urlspace

import (
	"fmt"
	"net/url"
	"testing"
)

// TestHostsBounded: every per-host learner keeps at most MaxHosts hosts,
// forgetting the least recently used, however many hosts a crawl meets.
// (Learner and Patterns have tests of their own.)
func TestHostsBounded(t *testing.T) {
	const bound, hosts = 3, 10
	checker := NewChecker(Limits{MaxHosts: bound})
	explosion := NewExplosion(ExplosionConfig{MaxHosts: bound})
	families := NewFamilies(FamilyConfig{MaxHosts: bound})
	defaults := NewDefaults(DefaultsConfig{MaxHosts: bound})
	for i := range hosts {
		origin := fmt.Sprintf("http://h%d.test", i)
		u, err := url.Parse(origin + "/list?start=0")
		if err != nil {
			t.Fatal(err)
		}
		checker.Check(u)
		explosion.Discover(u)
		explosion.Observe(u, "D")
		families.Discovered(origin, origin+"/list?start=0")
		defaults.Observe(origin, origin+"/list", "D")
		defaults.Observe(origin, origin+"/list?start=0", "D") // teaches start=0
	}
	for _, c := range []struct {
		name  string
		kept  int
		first bool // the first host is still known
		last  bool // the last host is known
	}{
		{"Checker", checker.mu.hosts.l.Len(), checker.mu.hosts.peek("http://h0.test") != nil, checker.mu.hosts.peek("http://h9.test") != nil},
		{"Explosion", explosion.mu.hosts.l.Len(), explosion.mu.hosts.peek("http://h0.test") != nil, explosion.mu.hosts.peek("http://h9.test") != nil},
		{"Families", families.mu.hosts.l.Len(), families.mu.hosts.peek("http://h0.test") != nil, families.mu.hosts.peek("http://h9.test") != nil},
		{"Defaults", defaults.mu.hosts.l.Len(), defaults.mu.hosts.peek("http://h0.test") != nil, defaults.mu.hosts.peek("http://h9.test") != nil},
	} {
		if c.kept != bound || c.first || !c.last {
			t.Errorf("%s: %d hosts kept (bound %d), first kept %v, last kept %v", c.name, c.kept, bound, c.first, c.last)
		}
	}
}
