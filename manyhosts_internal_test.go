package gentlecrawl

import (
	"fmt"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/hostload"
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
