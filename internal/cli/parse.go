package cli

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	gentlecrawl "github.com/gentlecrawl/gentlecrawl"
	"github.com/gentlecrawl/gentlecrawl/internal/fetch"
)

// The command line's syntax of the library's typed settings.

// parseCrawlDelayPolicy reads --crawl-delay: "honor", "ignore" or
// "cap=DUR".
func parseCrawlDelayPolicy(s string) (gentlecrawl.CrawlDelayPolicy, error) {
	switch {
	case s == "honor" || s == "honour" || s == "":
		return gentlecrawl.CrawlDelayPolicy{Mode: gentlecrawl.CrawlDelayHonor}, nil
	case s == "ignore":
		return gentlecrawl.CrawlDelayPolicy{Mode: gentlecrawl.CrawlDelayIgnore}, nil
	case strings.HasPrefix(s, "cap="):
		d, err := time.ParseDuration(strings.TrimPrefix(s, "cap="))
		if err != nil || d < 0 {
			break
		}
		return gentlecrawl.CrawlDelayPolicy{Mode: gentlecrawl.CrawlDelayCap, Cap: d}, nil
	}
	return gentlecrawl.CrawlDelayPolicy{}, fmt.Errorf("--crawl-delay %q: want honor, ignore or cap=DURATION (like cap=10s)", s)
}

// parseScope reads --scope.
func parseScope(s string) (gentlecrawl.Scope, error) {
	switch gentlecrawl.Scope(s) {
	case "", gentlecrawl.ScopeHost:
		return gentlecrawl.ScopeHost, nil
	case gentlecrawl.ScopeDomain, gentlecrawl.ScopePrefix:
		return gentlecrawl.Scope(s), nil
	}
	return "", fmt.Errorf("--scope %q: want host, domain or prefix", s)
}

// parseRegexps compiles the expressions of a repeatable flag (--include,
// --exclude).
func parseRegexps(flag string, res []string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, s := range res {
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", flag, s, err)
		}
		out = append(out, re)
	}
	return out, nil
}

// parseResolve reads --resolve rules, HOST:PORT:ADDR[,ADDR]... as curl
// writes them.
func parseResolve(specs []string) ([]gentlecrawl.Resolve, error) {
	var out []gentlecrawl.Resolve
	for _, s := range specs {
		r, err := fetch.ParseResolve(s)
		if err != nil {
			return nil, err
		}
		out = append(out, gentlecrawl.Resolve(r))
	}
	return out, nil
}

// parseConnectTo reads --connect-to rules, HOST1:PORT1:HOST2:PORT2 as curl
// writes them.
func parseConnectTo(specs []string) ([]gentlecrawl.ConnectTo, error) {
	var out []gentlecrawl.ConnectTo
	for _, s := range specs {
		ct, err := fetch.ParseConnectTo(s)
		if err != nil {
			return nil, err
		}
		out = append(out, gentlecrawl.ConnectTo(ct))
	}
	return out, nil
}

// parseHourWindow reads an hours entry of a [[host]] table of the config
// file: "09:00-18:00 Europe/Warsaw 5s" (the zone is optional and defaults
// to UTC).
func parseHourWindow(s string) (gentlecrawl.HourWindow, error) {
	f := strings.Fields(s)
	if len(f) != 2 && len(f) != 3 {
		return gentlecrawl.HourWindow{}, fmt.Errorf("hours %q: want HH:MM-HH:MM [ZONE] DELAY", s)
	}
	w := gentlecrawl.HourWindow{Location: time.UTC}
	from, to, ok := strings.Cut(f[0], "-")
	var err error
	if !ok {
		return gentlecrawl.HourWindow{}, fmt.Errorf("hours %q: want HH:MM-HH:MM", s)
	}
	if w.From, err = parseClock(from); err != nil {
		return gentlecrawl.HourWindow{}, fmt.Errorf("hours %q: %w", s, err)
	}
	if w.To, err = parseClock(to); err != nil {
		return gentlecrawl.HourWindow{}, fmt.Errorf("hours %q: %w", s, err)
	}
	if len(f) == 3 {
		if w.Location, err = time.LoadLocation(f[1]); err != nil {
			return gentlecrawl.HourWindow{}, fmt.Errorf("hours %q: unknown time zone %q", s, f[1])
		}
	}
	if w.Delay, err = time.ParseDuration(f[len(f)-1]); err != nil || w.Delay <= 0 {
		return gentlecrawl.HourWindow{}, fmt.Errorf("hours %q: bad delay %q", s, f[len(f)-1])
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
