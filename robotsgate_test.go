package gentlecrawl

import (
	"fmt"
	"testing"
)

func TestRobotsCacheIsBounded(t *testing.T) {
	rc := robotsCache{hosts: make(map[string]*hostRobots)}
	for i := range maxRobotsCached + 10 {
		rc.set(fmt.Sprintf("http://h%d.test", i), &hostRobots{unavailable: i == 0})
	}
	if n := len(rc.hosts); n > maxRobotsCached {
		t.Errorf("%d origins cached, want at most %d", n, maxRobotsCached)
	}
	if rc.get("http://h0.test") == nil {
		t.Error("an origin whose robots.txt is unavailable was evicted; the summary needs it")
	}
}
