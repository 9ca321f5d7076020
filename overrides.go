package gentlecrawl

import (
	"cmp"
	"fmt"
	"strings"
	"time"
)

// HostRule slows the crawl of one host below what robots.txt asks: the
// limits site owners set in search consoles (a maximum rate until a date) and
// in Bing's crawl control (slower during the site's busy hours). A rule can
// only widen the gap, never narrow it.
type HostRule struct {
	// Host is the host name the rule applies to ("example.org"); a leading
	// "*." also matches every subdomain.
	Host string
	// Delay is the minimum gap between requests to the host.
	Delay time.Duration
	// Until ends the rule; zero means no end.
	Until time.Time
	// Windows widen the gap during hours of the day, in the site's zone.
	Windows []HourWindow
}

// HourWindow is a daily period, [From, To) in minutes after midnight in
// Location (To < From wraps past midnight), with its minimum gap: {From:
// 9 * 60, To: 18 * 60, Location: warsaw, Delay: 5 * time.Second} is a
// request every 5s at most from 09:00 to 18:00 in Warsaw.
type HourWindow struct {
	From, To int            // 0 to 1439
	Location *time.Location // nil: UTC
	Delay    time.Duration
}

// contains reports whether t falls in the window.
func (w HourWindow) contains(t time.Time) bool {
	if w.Location != nil {
		t = t.In(w.Location)
	} else {
		t = t.UTC()
	}
	m := t.Hour()*60 + t.Minute()
	if w.From <= w.To {
		return m >= w.From && m < w.To
	}
	return m >= w.From || m < w.To
}

func (r HostRule) matches(host string) bool {
	if base, ok := strings.CutPrefix(r.Host, "*."); ok {
		return host == base || strings.HasSuffix(host, "."+base)
	}
	return host == r.Host
}

// checkHostRules reports the first rule that makes no sense.
func checkHostRules(rules []HostRule) error {
	for i, r := range rules {
		if r.Host == "" || r.Host == "*." {
			return fmt.Errorf("host rule %d: no host name", i+1)
		}
		if r.Delay < 0 {
			return fmt.Errorf("host rule %d (%s): negative delay %v", i+1, r.Host, r.Delay)
		}
		for _, w := range r.Windows {
			if w.From < 0 || w.From >= 24*60 || w.To < 0 || w.To >= 24*60 || w.Delay <= 0 {
				return fmt.Errorf("host rule %d (%s): hour window %+v: want From and To from 0 to 1439 minutes and a positive Delay", i+1, r.Host, w)
			}
		}
	}
	return nil
}

// floor returns the smallest gap for host at time now: the gap robots.txt
// and the configuration ask for (base, why), widened by any rule in force.
func floorFor(rules []HostRule, host string, now time.Time, base time.Duration, why string) (time.Duration, string) {
	floor := base
	for _, r := range rules {
		if !r.matches(host) || (!r.Until.IsZero() && !now.Before(r.Until)) {
			continue
		}
		if r.Delay > floor {
			floor = r.Delay
			why = fmt.Sprintf("host rule: at most one request per %v", r.Delay)
			if !r.Until.IsZero() {
				why += " until " + r.Until.Format("2006-01-02")
			}
		}
		for _, w := range r.Windows {
			if w.contains(now) && w.Delay > floor {
				floor = w.Delay
				why = fmt.Sprintf("host rule: %v between %02d:%02d and %02d:%02d %s", w.Delay, w.From/60, w.From%60, w.To/60, w.To%60, cmp.Or(w.Location, time.UTC))
			}
		}
	}
	return floor, why
}
