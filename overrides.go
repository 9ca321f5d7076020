package gentlecrawl

import (
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
// Location (To < From wraps past midnight), with its minimum gap.
type HourWindow struct {
	From, To int
	Location *time.Location
	Delay    time.Duration
}

// ParseHourWindow reads "09:00-18:00 Europe/Warsaw 5s" (the zone is optional
// and defaults to UTC).
func ParseHourWindow(s string) (HourWindow, error) {
	f := strings.Fields(s)
	if len(f) != 2 && len(f) != 3 {
		return HourWindow{}, fmt.Errorf("hours %q: want HH:MM-HH:MM [ZONE] DELAY", s)
	}
	w := HourWindow{Location: time.UTC}
	from, to, ok := strings.Cut(f[0], "-")
	var err error
	if !ok {
		return HourWindow{}, fmt.Errorf("hours %q: want HH:MM-HH:MM", s)
	}
	if w.From, err = parseClock(from); err != nil {
		return HourWindow{}, fmt.Errorf("hours %q: %w", s, err)
	}
	if w.To, err = parseClock(to); err != nil {
		return HourWindow{}, fmt.Errorf("hours %q: %w", s, err)
	}
	if len(f) == 3 {
		if w.Location, err = time.LoadLocation(f[1]); err != nil {
			return HourWindow{}, fmt.Errorf("hours %q: unknown time zone %q", s, f[1])
		}
	}
	if w.Delay, err = time.ParseDuration(f[len(f)-1]); err != nil || w.Delay <= 0 {
		return HourWindow{}, fmt.Errorf("hours %q: bad delay %q", s, f[len(f)-1])
	}
	return w, nil
}

func parseClock(s string) (int, error) {
	t, err := time.Parse("15:04", s)
	if err != nil {
		return 0, fmt.Errorf("bad time of day %q (want HH:MM)", s)
	}
	return t.Hour()*60 + t.Minute(), nil
}

// contains reports whether t falls in the window.
func (w HourWindow) contains(t time.Time) bool {
	t = t.In(w.Location)
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
				why = fmt.Sprintf("host rule: %v between %02d:%02d and %02d:%02d %s", w.Delay, w.From/60, w.From%60, w.To/60, w.To%60, w.Location)
			}
		}
	}
	return floor, why
}
