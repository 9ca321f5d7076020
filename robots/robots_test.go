package robots

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type check struct {
	path    string
	allowed bool
}

func TestRules(t *testing.T) {
	tests := []struct {
		name   string
		robots string
		agent  string
		checks []check
	}{
		{
			name:   "empty file allows all",
			robots: "",
			agent:  "gentlecrawl",
			checks: []check{{"/", true}, {"/x", true}},
		},
		{
			name:   "specific group",
			robots: "User-agent: gentlecrawl\nDisallow: /private/\n",
			agent:  "gentlecrawl",
			checks: []check{{"/", true}, {"/private/", false}, {"/private/x", false}, {"/private", true}},
		},
		{
			name:   "agent case-insensitive",
			robots: "User-agent: GentleCrawl\nDisallow: /\n",
			agent:  "gentleCRAWL",
			checks: []check{{"/", false}},
		},
		{
			name:   "prefix token does not bind",
			robots: "User-agent: gentle\nDisallow: /\n",
			agent:  "gentlecrawl",
			checks: []check{{"/", true}},
		},
		{
			name:   "longer token does not bind",
			robots: "User-agent: gentlecrawler\nDisallow: /\n",
			agent:  "gentlecrawl",
			checks: []check{{"/", true}},
		},
		{
			name:   "user-agent value cut at first non-token character",
			robots: "User-agent: gentlecrawl/1.0 (+https://example.com)\nDisallow: /\n",
			agent:  "gentlecrawl",
			checks: []check{{"/", false}},
		},
		{
			name:   "star group only when no specific group",
			robots: "User-agent: *\nDisallow: /\n\nUser-agent: gentlecrawl\nDisallow: /x\n",
			agent:  "gentlecrawl",
			checks: []check{{"/", true}, {"/x", false}},
		},
		{
			name:   "star group applies to others",
			robots: "User-agent: *\nDisallow: /\n\nUser-agent: gentlecrawl\nDisallow: /x\n",
			agent:  "otherbot",
			checks: []check{{"/", false}},
		},
		{
			name:   "specific empty group does not fall back to star",
			robots: "User-agent: *\nDisallow: /\n\nUser-agent: gentlecrawl\n",
			agent:  "gentlecrawl",
			checks: []check{{"/", true}},
		},
		{
			name:   "star with suffix is not the global group",
			robots: "User-agent: *bot\nDisallow: /\n",
			agent:  "gentlecrawl",
			checks: []check{{"/", true}},
		},
		{
			name:   "merged groups",
			robots: "User-agent: gentlecrawl\nDisallow: /a\n\nUser-agent: other\nDisallow: /b\n\nUser-agent: gentlecrawl\nDisallow: /c\n",
			agent:  "gentlecrawl",
			checks: []check{{"/a", false}, {"/b", true}, {"/c", false}},
		},
		{
			name:   "consecutive user-agent lines form one group",
			robots: "User-agent: a\nUser-agent: gentlecrawl\nUser-agent: b\nDisallow: /x\n",
			agent:  "gentlecrawl",
			checks: []check{{"/x", false}},
		},
		{
			name:   "blank lines do not end a group",
			robots: "User-agent: gentlecrawl\n\nDisallow: /x\n\n\nDisallow: /y\n",
			agent:  "gentlecrawl",
			checks: []check{{"/x", false}, {"/y", false}},
		},
		{
			name:   "rules before the first user-agent ignored",
			robots: "Disallow: /\nUser-agent: gentlecrawl\nDisallow: /x\n",
			agent:  "gentlecrawl",
			checks: []check{{"/", true}, {"/x", false}},
		},
		{
			name:   "sitemap does not end a group",
			robots: "User-agent: gentlecrawl\nSitemap: https://example.com/s.xml\nUser-agent: other\nDisallow: /\n",
			agent:  "gentlecrawl",
			checks: []check{{"/", false}},
		},
		{
			name:   "unknown record does not end a group",
			robots: "User-agent: gentlecrawl\nClean-param: sid\nUser-agent: other\nDisallow: /\n",
			agent:  "gentlecrawl",
			checks: []check{{"/", false}},
		},
		{
			name:   "crawl-delay ends the user-agent lines",
			robots: "User-agent: other\nCrawl-delay: 5\nUser-agent: gentlecrawl\nDisallow: /\n",
			agent:  "other",
			checks: []check{{"/", true}},
		},
		{
			name:   "longest match wins",
			robots: "User-agent: *\nDisallow: /a/\nAllow: /a/b/\nDisallow: /a/b/c\n",
			agent:  "x",
			checks: []check{{"/a/x", false}, {"/a/b/x", true}, {"/a/b/c", false}, {"/a/b/cd", false}},
		},
		{
			name:   "allow wins a tie",
			robots: "User-agent: *\nDisallow: /page\nAllow: /page\n",
			agent:  "x",
			checks: []check{{"/page", true}},
		},
		{
			name:   "allow wins a tie, wildcard lengths",
			robots: "User-agent: *\nDisallow: /*.php\nAllow: /a.php\n",
			agent:  "x",
			checks: []check{{"/a.php", true}, {"/b.php", false}},
		},
		{
			name:   "empty disallow matches nothing",
			robots: "User-agent: *\nDisallow:\n",
			agent:  "x",
			checks: []check{{"/", true}, {"/x", true}},
		},
		{
			name:   "wildcards",
			robots: "User-agent: *\nDisallow: /*/private/*.html\nDisallow: /**a**b\n",
			agent:  "x",
			checks: []check{
				{"/x/private/y.html", false}, {"/x/y/private/z/w.html?q", false},
				{"/private/y.html", true}, {"/x/private/y.htm", true},
				{"/zzazzb", false}, {"/ba", true},
			},
		},
		{
			name:   "end anchor",
			robots: "User-agent: *\nDisallow: /*.gif$\nDisallow: /exact$\nDisallow: /a$b\n",
			agent:  "x",
			checks: []check{
				{"/a.gif", false}, {"/a.gif?x", true}, {"/a.gifx", true}, {"/b/.gif", false},
				{"/exact", false}, {"/exact/", true},
				{"/a$b", false}, {"/a$bc", false}, {"/a", true},
			},
		},
		{
			name:   "lone dollar matches no path",
			robots: "User-agent: *\nDisallow: $\n",
			agent:  "x",
			checks: []check{{"/", true}},
		},
		{
			name:   "star and dollar",
			robots: "User-agent: *\nDisallow: /\nAllow: /$\nDisallow: /a*$\n",
			agent:  "x",
			checks: []check{{"/", true}, {"/a", false}, {"/b", false}, {"/ab?c", false}},
		},
		{
			name:   "query is part of the path",
			robots: "User-agent: *\nDisallow: /*?\nDisallow: /s?q=\n",
			agent:  "x",
			checks: []check{{"/a?b", false}, {"/a", true}, {"/s?q=1", false}},
		},
		{
			name:   "percent-encoding normalized on both sides",
			robots: "User-agent: *\nDisallow: /%7euser/\nDisallow: /a%2fb\nDisallow: /caf%C3%A9\nDisallow: /dé\nDisallow: /sp ace\n",
			agent:  "x",
			checks: []check{
				{"/~user/x", false}, {"/%7Euser/x", false}, {"/%7euser/x", false},
				{"/a%2Fb", false}, {"/a/b", true},
				{"/caf%c3%a9", false}, {"/café", false},
				{"/d%C3%A9", false}, {"/dé", false},
				{"/sp%20ace", false},
			},
		},
		{
			name:   "escaped reserved characters keep their meaning",
			robots: "User-agent: *\nDisallow: /a%3Fb\nDisallow: /%2A\n",
			agent:  "x",
			checks: []check{{"/a?b", true}, {"/a%3fb", false}, {"/x", true}, {"/*", true}, {"/%2a", false}},
		},
		{
			name:   "robots.txt always allowed",
			robots: "User-agent: *\nDisallow: /\n",
			agent:  "x",
			checks: []check{{"/robots.txt", true}, {"/robots.txt?x=1", true}, {"/robots.txtx", false}, {"/", false}},
		},
		{
			name:   "empty path means /",
			robots: "User-agent: *\nDisallow: /$\n",
			agent:  "x",
			checks: []check{{"", false}, {"?a", true}},
		},
		{
			name:   "missing colon",
			robots: "User-agent gentlecrawl\nDisallow /x\nDisallow /a /b\n",
			agent:  "gentlecrawl",
			checks: []check{{"/x", false}, {"/a", true}, {"/b", true}},
		},
		{
			name:   "typos",
			robots: "useragent: a\nuser agent: b\nuser-agent: gentlecrawl\ndissallow: /1\ndissalow: /2\ndisalow: /3\ndiasllow: /4\ndisallaw: /5\n",
			agent:  "gentlecrawl",
			checks: []check{{"/1", false}, {"/2", false}, {"/3", false}, {"/4", false}, {"/5", false}, {"/6", true}},
		},
		{
			name:   "comments",
			robots: "# hello\nUser-agent: gentlecrawl # me\nDisallow: /x # not /y\n#Disallow: /z\n",
			agent:  "gentlecrawl",
			checks: []check{{"/x", false}, {"/y", true}, {"/z", true}, {"/x%20", false}},
		},
		{
			name:   "BOM",
			robots: "\ufeffUser-agent: gentlecrawl\nDisallow: /\n",
			agent:  "gentlecrawl",
			checks: []check{{"/", false}},
		},
		{
			name:   "CR endings and no final newline",
			robots: "User-agent: gentlecrawl\rDisallow: /a\r\nDisallow: /b\nDisallow: /c",
			agent:  "gentlecrawl",
			checks: []check{{"/a", false}, {"/b", false}, {"/c", false}, {"/d", true}},
		},
		{
			name:   "HTML page",
			robots: "<!DOCTYPE html>\n<html><head><title>Not found</title></head>\n<body>\nUser-agent: *\n<p>Disallow: /x</p>\nDisallow: /y\n</body></html>\n",
			agent:  "x",
			checks: []check{{"/x", true}, {"/y", false}, {"/", true}},
		},
		{
			name:   "index.html is its directory (Google)",
			robots: "User-agent: *\nAllow: /d/index.html\nDisallow: /\n",
			agent:  "x",
			checks: []check{{"/d/", true}, {"/d/index.html", true}, {"/d/x", false}, {"/d", false}},
		},
		{
			name:   "empty user-agent names nobody but joins the group",
			robots: "User-agent:\nUser-agent: gentlecrawl\nDisallow: /x\nUser-agent:\nDisallow: /y\n",
			agent:  "gentlecrawl",
			checks: []check{{"/x", false}, {"/y", true}},
		},
		{
			name:   "invalid agent only gets the star group",
			robots: "User-agent: foo\nDisallow: /\nUser-agent: *\nDisallow: /x\n",
			agent:  "foo/1.0",
			checks: []check{{"/", true}, {"/x", false}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := Parse([]byte(tt.robots)).Group(tt.agent)
			for _, c := range tt.checks {
				if got := g.Allowed(c.path); got != c.allowed {
					t.Errorf("Allowed(%q) = %v, want %v (%+v)", c.path, got, c.allowed, g.Match(c.path))
				}
			}
		})
	}
}

func TestMatch(t *testing.T) {
	body := "User-agent: *\nDisallow: /\n\nUser-agent: gentlecrawl\r\nAllow: /public/\r\n\r\nDisallow: /public/private/ # no\nAllow: /d/index.html\n"
	g := Parse([]byte(body)).Group("gentlecrawl")
	tests := []struct {
		path string
		want Match
	}{
		{"/", Match{Allowed: true}},
		{"/public/x", Match{Allowed: true, Rule: "Allow: /public/", Line: 5}},
		{"/public/private/x", Match{Allowed: false, Rule: "Disallow: /public/private/", Line: 7}},
		{"/d/", Match{Allowed: true, Rule: "Allow: /d/index.html", Line: 8}},
		{"/robots.txt", Match{Allowed: true}},
	}
	for _, tt := range tests {
		if got := g.Match(tt.path); got != tt.want {
			t.Errorf("Match(%q) = %+v, want %+v", tt.path, got, tt.want)
		}
	}
	if got, want := Parse([]byte(body)).Group("other").Match("/x"), (Match{Rule: "Disallow: /", Line: 2}); got != want {
		t.Errorf("other: Match = %+v, want %+v", got, want)
	}
}

func TestLineNumbers(t *testing.T) {
	// Line endings as in Google's ID_LinesNumbersAreCountedCorrectly: the
	// Disallow is on line 6 each time.
	for _, body := range []string{
		"User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nDisallow: /\n",
		"User-Agent: foo\r\nAllow: /some/path\r\nUser-Agent: bar\r\n\r\n\r\nDisallow: /\r\n",
		"User-Agent: foo\rAllow: /some/path\rUser-Agent: bar\r\r\rDisallow: /\r",
		"User-Agent: foo\nAllow: /some/path\r\nUser-Agent: bar\n\r\n\nDisallow: /",
	} {
		if got := Parse([]byte(body)).Group("bar").Match("/x").Line; got != 6 {
			t.Errorf("%q: Line = %d, want 6", body, got)
		}
	}
}

func TestCrawlDelay(t *testing.T) {
	tests := []struct {
		value string
		want  time.Duration
		ok    bool
	}{
		{"10", 10 * time.Second, true},
		{"1.5", 1500 * time.Millisecond, true},
		{"0.25", 250 * time.Millisecond, true},
		{".5", 500 * time.Millisecond, true},
		{"5.", 5 * time.Second, true},
		{"0", 0, true},
		{" 3 ", 3 * time.Second, true},
		{"-1", 0, false},
		{"NaN", 0, false},
		{"Inf", 0, false},
		{"1e3", 0, false},
		{"0x10", 0, false},
		{"1.2.3", 0, false},
		{"ten", 0, false},
		{"", 0, false},
		{".", 0, false},
		{"99999999999999999999", time.Duration(1<<63 - 1), true},
	}
	for _, tt := range tests {
		g := Parse([]byte("User-agent: *\nCrawl-delay: " + tt.value + "\n")).Group("x")
		d, ok := g.CrawlDelay()
		if d != tt.want || ok != tt.ok {
			t.Errorf("Crawl-delay: %q = %v, %v; want %v, %v", tt.value, d, ok, tt.want, tt.ok)
		}
	}
}

func TestCrawlDelayGroups(t *testing.T) {
	r := Parse([]byte("User-agent: *\nCrawl-delay: 1\n\nUser-agent: a\nCrawl-delay: bad\nCrawl-delay: 2\nCrawl-delay: 3\n\nUser-agent: b\nDisallow: /\n\nUser-agent: a\nCrawl-delay: 4\n"))
	for _, tt := range []struct {
		agent string
		want  time.Duration
		ok    bool
	}{{"a", 2 * time.Second, true}, {"b", 0, false}, {"c", time.Second, true}} {
		d, ok := r.Group(tt.agent).CrawlDelay()
		if d != tt.want || ok != tt.ok {
			t.Errorf("%s: CrawlDelay = %v, %v; want %v, %v", tt.agent, d, ok, tt.want, tt.ok)
		}
	}
	if _, ok := AllowAll().Group("a").CrawlDelay(); ok {
		t.Error("AllowAll: CrawlDelay set")
	}
}

func TestSitemaps(t *testing.T) {
	r := Parse([]byte("Sitemap: https://example.com/a.xml\nUser-agent: *\nsite-map: https://example.com/b.xml # b\nSitemap:\nSitemap: https://example.com/a.xml\nSITEMAP: https://example.com/c.xml#frag"))
	want := []string{"https://example.com/a.xml", "https://example.com/b.xml", "https://example.com/c.xml"}
	if diff := cmp.Diff(want, r.Sitemaps()); diff != "" {
		t.Errorf("Sitemaps mismatch (-want +got):\n%s", diff)
	}
}

func TestValidAgent(t *testing.T) {
	for token, want := range map[string]bool{
		"gentlecrawl": true, "Gentle-Crawl_2": false, "a": true, "-": true, "_": true,
		"": false, "*": false, "foo bar": false, "foo/1.0": false, "föö": false,
	} {
		if got := ValidAgent(token); got != want {
			t.Errorf("ValidAgent(%q) = %v, want %v", token, got, want)
		}
	}
}

func TestAllowAllDisallowAll(t *testing.T) {
	if !AllowAll().Group("x").Allowed("/a") {
		t.Error("AllowAll disallows /a")
	}
	d := DisallowAll().Group("x")
	if d.Allowed("/") || d.Allowed("/a") {
		t.Error("DisallowAll allows")
	}
	if !d.Allowed("/robots.txt") {
		t.Error("DisallowAll disallows /robots.txt")
	}
	var nilRobots *Robots
	if g := nilRobots.Group("x"); g == nil || !g.Allowed("/") {
		t.Error("nil Robots: Group is nil or disallows")
	}
	if (&Robots{}).Group("x") == nil || Parse(nil).Group("") == nil {
		t.Error("Group returned nil")
	}
	if nilRobots.Sitemaps() != nil {
		t.Error("nil Robots has sitemaps")
	}
	var nilGroup *Group
	if !nilGroup.Allowed("/") {
		t.Error("nil Group disallows")
	}
}

func TestMaxSize(t *testing.T) {
	var b strings.Builder
	b.WriteString("User-agent: *\nDisallow: /first\n")
	for b.Len() < MaxSize-100 {
		b.WriteString("# padding padding padding padding padding padding padding\n")
	}
	for b.Len() < MaxSize-20 {
		b.WriteString("#\n")
	}
	b.WriteString("Disallow: /cut-here-and-longer\n") // crosses MaxSize
	b.WriteString("Disallow: /after\n")
	g := Parse([]byte(b.String())).Group("x")
	for _, c := range []check{{"/first", false}, {"/after", true}, {"/cut-here-and-longer", true}, {"/cut", true}} {
		if got := g.Allowed(c.path); got != c.allowed {
			t.Errorf("Allowed(%q) = %v, want %v", c.path, got, c.allowed)
		}
	}
}

func TestLongLine(t *testing.T) {
	// A pattern cut at the line limit must not end in half a UTF-8
	// sequence or half an escape.
	for _, tail := range []string{"é", "%41", "ab"} {
		for pad := 0; pad < 4; pad++ {
			prefix := "Disallow: /" + strings.Repeat("a", maxLineLen-len("Disallow: /")-pad)
			body := "User-agent: *\n" + prefix + strings.Repeat(tail, 4) + "\n"
			g := Parse([]byte(body)).Group("x")
			g.Allowed("/")
			if len(g.idx.rules) != 1 {
				t.Fatalf("rules: %d", len(g.idx.rules))
			}
			p := g.idx.rules[0].pattern(g.idx)
			if len(p) > maxLineLen {
				t.Errorf("pattern of %d bytes", len(p))
			}
			if i := strings.LastIndexByte(p, '%'); i >= 0 && i+3 > len(p) {
				t.Errorf("tail %q pad %d: pattern ends in a cut escape: %q", tail, pad, p[len(p)-8:])
			}
			if !g.Allowed("/b") || g.Allowed(prefix[len("Disallow: "):]+strings.Repeat(tail, 4)) {
				t.Errorf("tail %q pad %d: wrong decisions", tail, pad)
			}
		}
	}
}

func TestFromResponse(t *testing.T) {
	body := []byte("User-agent: *\nDisallow: /x\n")
	tests := []struct {
		status  int
		err     error
		outcome Outcome
		root, x bool // Allowed("/"), Allowed("/x")
	}{
		{200, nil, OutcomeParsed, true, false},
		{206, nil, OutcomeParsed, true, false},
		{200, errors.New("unexpected EOF"), OutcomeUnavailable, false, false},
		{0, errors.New("dial tcp: timeout"), OutcomeUnavailable, false, false},
		{301, nil, OutcomeUnavailable, false, false},
		{400, nil, OutcomeUnrestricted, true, true},
		{401, nil, OutcomeUnrestricted, true, true},
		{403, nil, OutcomeUnrestricted, true, true},
		{404, nil, OutcomeUnrestricted, true, true},
		{410, nil, OutcomeUnrestricted, true, true},
		{429, nil, OutcomeUnavailable, false, false},
		{500, nil, OutcomeUnavailable, false, false},
		{503, nil, OutcomeUnavailable, false, false},
		{599, nil, OutcomeUnavailable, false, false},
		{100, nil, OutcomeUnavailable, false, false},
	}
	for _, tt := range tests {
		r, o := FromResponse(tt.status, body, tt.err)
		g := r.Group("gentlecrawl")
		if o != tt.outcome || g.Allowed("/") != tt.root || g.Allowed("/x") != tt.x {
			t.Errorf("FromResponse(%d, %v) = %v, / %v, /x %v; want %v, %v, %v",
				tt.status, tt.err, o, g.Allowed("/"), g.Allowed("/x"), tt.outcome, tt.root, tt.x)
		}
		if !g.Allowed("/robots.txt") {
			t.Errorf("FromResponse(%d): /robots.txt disallowed", tt.status)
		}
	}
	for o, want := range map[Outcome]string{OutcomeParsed: "parsed", OutcomeUnrestricted: "unrestricted", OutcomeUnavailable: "unavailable", 0: "Outcome(0)"} {
		if got := o.String(); got != want {
			t.Errorf("String = %q, want %q", got, want)
		}
	}
}

func TestPathQuery(t *testing.T) {
	for in, want := range map[string]string{
		"https://example.com/a/b?c=d#e": "/a/b?c=d",
		"http://example.com":            "/",
		"http://example.com?q":          "/?q",
		"http://example.com#f":          "/",
		"http://example.com/a#f?x":      "/a",
	} {
		if got := PathQuery(in); got != want {
			t.Errorf("PathQuery(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMatchDoesNotAllocate(t *testing.T) {
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for i := range 200 {
		fmt.Fprintf(&b, "Disallow: /dir%d/*.php$\nAllow: /dir%d/pub*/x\n", i, i)
	}
	g := Parse([]byte(b.String())).Group("gentlecrawl")
	for _, path := range []string{
		"/dir150/a/b/c.php",
		"/dir7/public/x/y?q=1",
		"/caf%c3%a9/%7euser/ü", // needs normalizing
		"",
		"/robots.txt",
		"/" + strings.Repeat("a", pathBufSize-10) + "%7e",
	} {
		if n := testing.AllocsPerRun(100, func() { g.Match(path) }); n != 0 {
			t.Errorf("Match(%.40q) allocates %v times", path, n)
		}
	}
}

// TestMatchWorstCase checks that a pattern built to make a backtracking
// matcher explode still gets the right answer.
func TestMatchWorstCase(t *testing.T) {
	pat := "/" + strings.Repeat("*a", 200) + "*b$"
	g := Parse([]byte("User-agent: *\nDisallow: " + pat + "\n")).Group("x")
	path := "/" + strings.Repeat("a", 5000)
	if !g.Allowed(path) {
		t.Error("matched a path without b")
	}
	if g.Allowed(path + "b") {
		t.Error("did not match a path ending in b")
	}
}

func FuzzParseAllowed(f *testing.F) {
	f.Add([]byte("User-agent: *\nDisallow: /*.php$\nAllow: /a%7e\n"), "gentlecrawl", "/a/b.php?x")
	f.Add([]byte("\ufeffuser-agent gentlecrawl\rdisallow /\r\nCrawl-delay: 1.5\nSitemap: x"), "gentlecrawl", "")
	f.Add([]byte("User-agent: a\nUser-agent: b\nAllow: /$\nDisallow: *\n"), "b", "?q")
	f.Fuzz(func(t *testing.T, body []byte, agent, path string) {
		r := Parse(body)
		g := r.Group(agent)
		m := g.Match(path)
		if m.Allowed != g.Allowed(path) {
			t.Fatal("Match and Allowed disagree")
		}
		if (m.Rule == "") != (m.Line == 0) && m.Rule == "" {
			t.Fatalf("line %d without a rule", m.Line)
		}
		g.CrawlDelay()
		g.CrawlDelayInfo()
		g.Lines()
		r.Sitemaps()
		for _, is := range r.Issues() {
			if is.Reason == "" || is.Line > r.Lines() {
				t.Fatalf("issue %+v of a file of %d lines", is, r.Lines())
			}
		}
		for _, c := range r.CleanParams() {
			c.Applies(path)
		}
		AllowedURL(body, agent, path)
		if len(path) < pathBufSize/3 {
			if n := testing.AllocsPerRun(2, func() { g.Match(path) }); n != 0 {
				t.Fatalf("Match(%q) allocates %v times", path, n)
			}
		}
	})
}

func BenchmarkParse(b *testing.B) {
	body := benchRobots(100 << 10)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		Parse(body)
	}
}

func BenchmarkMatch(b *testing.B) {
	g := Parse(benchRobots(100 << 10)).Group("gentlecrawl")
	g.Allowed("/") // compile
	paths := []string{
		"/", "/products/shoes/red?size=42&color=red", "/dir120/x/y.php",
		"/search?q=robots", "/caf%c3%a9/%7euser", "/static/js/app.min.js",
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		g.Allowed(paths[i%len(paths)])
	}
}

// benchRobots returns a robots.txt of about size bytes, shaped like a
// large real one: a few groups, many rules with wildcards, comments.
func benchRobots(size int) []byte {
	var b strings.Builder
	b.WriteString("# robots.txt for a large site\nSitemap: https://example.com/sitemap.xml\n\n")
	i := 0
	for b.Len() < size {
		switch i % 500 {
		case 0:
			fmt.Fprintf(&b, "\nUser-agent: bot%d\nUser-agent: gentlecrawl\nCrawl-delay: 2\n", i)
		case 250:
			b.WriteString("\nUser-agent: *\n")
		}
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "Disallow: /dir%d/*.php$\n", i)
		case 1:
			fmt.Fprintf(&b, "Allow: /dir%d/public/\n", i)
		case 2:
			fmt.Fprintf(&b, "Disallow: /*?sessionid=%d* # sessions\n", i)
		case 3:
			fmt.Fprintf(&b, "Disallow: /category/%d/item-%%7e%d/\n", i, i)
		}
		i++
	}
	return []byte(b.String())
}
