package robots

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/google/go-cmp/cmp"
)

func TestIssues(t *testing.T) {
	body := "Disallow: /before\n" + // 1
		"User-agent: *\n" + // 2
		"Host: example.org\n" + // 3
		"dissallow: /typo\n" + // 4
		"Disallow /nocolon\n" + // 5
		"just words here\n" + // 6
		"Crawl-delay: soon\n" + // 7
		"Crawl-delay: 2\n" + // 8
		"Crawl-delay: 3\n" + // 9
		"Sitemap:\n" + // 10
		"Sitemap: /relative.xml\n" + // 11
		"User-agent: Foo/1.0\n" + // 12
		"User-agent: /x\n" + // 13
		"Clean-param: \n" + // 14
		"Frobnicate: yes\n" + // 15
		"# only a comment\n" + // 16
		"\n" // 17
	want := []struct {
		line    int
		ignored bool
		reason  string // a word of it
	}{
		{1, true, "before the first User-agent"},
		{3, true, "Yandex"},
		{4, false, "misspelled"},
		{5, false, "no colon"},
		{6, true, "not a record"},
		{7, true, "not a number"},
		{9, true, "second Crawl-delay"},
		{10, true, "empty"},
		{11, false, "fully qualified"},
		{12, false, "product token before"},
		{13, true, "not a product token"},
		{14, true, "without parameters"},
		{15, true, "unknown"},
	}
	r := Parse([]byte(body))
	got := r.Issues()
	if len(got) != len(want) {
		t.Fatalf("%d issues, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Line != w.line || g.Ignored != w.ignored || !strings.Contains(g.Reason, w.reason) {
			t.Errorf("issue %d = %+v, want line %d ignored %v reason ~%q", i, g, w.line, w.ignored, w.reason)
		}
		if g.Text == "" || !strings.Contains(body, g.Text) {
			t.Errorf("issue %d: text %q is not the line", i, g.Text)
		}
	}
	if r.Lines() != 17 {
		t.Errorf("Lines = %d, want 17", r.Lines())
	}
	if cd, _ := r.Group("x").CrawlDelayInfo(); cd.Line != 8 || cd.Raw != "2" {
		t.Errorf("CrawlDelayInfo = %+v, want line 8", cd)
	}
	if (*Robots)(nil).Issues() != nil || Parse(nil).Issues() != nil {
		t.Error("issues without a file")
	}
}

func TestCrawlDelayInfo(t *testing.T) {
	for _, tt := range []struct {
		value  string
		delay  time.Duration
		absurd bool
	}{
		{"1.5", 1500 * time.Millisecond, false},
		{"86400", 24 * time.Hour, false},
		{"86401", 86401 * time.Second, true},
		{"99999999999999999999", time.Duration(1<<63 - 1), true},
	} {
		g := Parse([]byte("User-agent: *\n\nCrawl-delay: " + tt.value + " # why\n")).Group("gentlecrawl")
		cd, ok := g.CrawlDelayInfo()
		want := CrawlDelay{Delay: tt.delay, Raw: tt.value, Line: 3, Absurd: tt.absurd}
		if !ok || cd != want {
			t.Errorf("%s: CrawlDelayInfo = %+v, %v; want %+v", tt.value, cd, ok, want)
		}
	}
	if _, ok := emptyGroup.CrawlDelayInfo(); ok {
		t.Error("empty group has a Crawl-delay")
	}
}

func TestCleanParams(t *testing.T) {
	r := Parse([]byte("Clean-param: ref&sid /forum/*.php\nUser-agent: *\nclean-param: utm_source&&utm_medium&\nClean-param: a b c\nClean-param: s=1\nClean-param: x forum\nDisallow: /x\n"))
	want := []CleanParam{
		{Params: []string{"ref", "sid"}, Prefix: "/forum/*.php", Line: 1},
		{Params: []string{"utm_source", "utm_medium"}, Prefix: "/", Line: 3},
	}
	if diff := cmp.Diff(want, r.CleanParams()); diff != "" {
		t.Errorf("CleanParams (-want +got):\n%s", diff)
	}
	if n := len(r.Issues()); n != 3 {
		t.Errorf("%d issues, want 3 (lines 4, 5, 6): %+v", n, r.Issues())
	}
	// Clean-param is not a group member: the group goes on.
	if r.Group("x").Allowed("/x") {
		t.Error("Clean-param ended the group")
	}
	c := want[0]
	for path, ok := range map[string]bool{
		"/forum/a.php?ref=1": true, "/forum/x/y.php": true, "/forum/a.html": false, "/other": false,
	} {
		if got := c.Applies(path); got != ok {
			t.Errorf("Applies(%q) = %v, want %v", path, got, ok)
		}
	}
	if !want[1].Applies("/anything") || !(CleanParam{}).Applies("/") {
		t.Error("a Clean-param without prefix does not apply everywhere")
	}
	if (*Robots)(nil).CleanParams() != nil {
		t.Error("nil Robots has Clean-params")
	}
}

func TestGroupIdentity(t *testing.T) {
	r := Parse([]byte("User-agent: a\nDisallow: /1\n\nUser-agent: *\nDisallow: /2\n\nUser-agent: A\nUser-agent: a\nDisallow: /3\n"))
	g := r.Group("A")
	if g.Agent() != "a" || !cmp.Equal(g.Lines(), []int{1, 7}) {
		t.Errorf("group a: agent %q lines %v", g.Agent(), g.Lines())
	}
	if g != r.Group("a") {
		t.Error("Group returns different groups for one agent")
	}
	if s := r.Group("b"); s.Agent() != "*" || !cmp.Equal(s.Lines(), []int{4}) {
		t.Errorf("star group: agent %q lines %v", s.Agent(), s.Lines())
	}
	if e := Parse(nil).Group("a"); e.Agent() != "" || e.Lines() != nil {
		t.Error("empty group has an agent")
	}
	long := strings.Repeat("A", 100)
	if Parse([]byte("User-agent: " + long + "\nDisallow: /\n")).Group(long).Allowed("/") {
		t.Error("a long token did not find its group")
	}
}

func TestValidateAgent(t *testing.T) {
	if err := ValidateAgent("gentle-crawl_x"); err != nil {
		t.Errorf("valid token: %v", err)
	}
	for token, want := range map[string]string{"": "empty", "my bot": `"my"`, "bot/1.0": `"bot"`, "bøt": "character"} {
		err := ValidateAgent(token)
		if !errors.Is(err, ErrInvalidAgent) || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateAgent(%q) = %v, want ErrInvalidAgent mentioning %s", token, err, want)
		}
	}
}

func TestDisallowAllMatch(t *testing.T) {
	if got, want := DisallowAll().Group("x").Match("/a"), (Match{Rule: "Disallow: /"}); got != want {
		t.Errorf("Match = %+v, want %+v", got, want)
	}
}

// utf16Body encodes s as UTF-16.
func utf16Body(s string, bigEndian, bom bool) []byte {
	var b []byte
	units := utf16.Encode([]rune(s))
	if bom {
		units = append([]uint16{0xFEFF}, units...)
	}
	for _, u := range units {
		if bigEndian {
			b = append(b, byte(u>>8), byte(u))
		} else {
			b = append(b, byte(u), byte(u>>8))
		}
	}
	return b
}

func TestUTF16(t *testing.T) {
	const text = "User-agent: *\r\nDisallow: /private/\r\nAllow: /private/café\r\n"
	for _, tt := range []struct {
		bigEndian, bom bool
		reason         string
	}{
		{false, true, "little-endian, with"},
		{true, true, "big-endian, with"},
		{false, false, "little-endian, no"},
		{true, false, "big-endian, no"},
	} {
		body := utf16Body(text, tt.bigEndian, tt.bom)
		r := Parse(body)
		g := r.Group("x")
		if g.Allowed("/private/x") || !g.Allowed("/private/caf%C3%A9") || !g.Allowed("/public") {
			t.Errorf("%s: rules not read", tt.reason)
		}
		is := r.Issues()
		if len(is) != 1 || is[0].Line != 0 || !strings.Contains(is[0].Reason, tt.reason) {
			t.Errorf("%s: issues %+v", tt.reason, is)
		}
		// An odd number of bytes: the last half unit is dropped.
		if !Parse(append(body, 'x')).Group("x").Allowed("/public") {
			t.Errorf("%s: odd length", tt.reason)
		}
	}
	// A UTF-8 file is not mistaken for UTF-16.
	if is := Parse([]byte(text)).Issues(); len(is) != 0 {
		t.Errorf("UTF-8 file: issues %+v", is)
	}
}

// TestBadInput: hostile or broken files are parsed in bounded memory,
// without a panic, and whatever valid lines they hold are used.
func TestBadInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	garbage := make([]byte, 1<<20)
	for i := range garbage {
		garbage[i] = byte(rng.Uint32())
	}
	var tenMB bytes.Buffer
	tenMB.WriteString("User-agent: *\nDisallow: /first\n")
	for tenMB.Len() < 10<<20 {
		tenMB.WriteString("Disallow: /many/rules/to/make/ten/megabytes\n")
	}
	var oneAgent, manyAgents bytes.Buffer
	for i := range 100_000 {
		oneAgent.WriteString("User-agent: gentlecrawl\n")
		manyAgents.WriteString("User-agent: bot")
		for n := i; n > 0; n /= 26 {
			manyAgents.WriteByte('a' + byte(n%26))
		}
		manyAgents.WriteString("\n")
	}
	oneAgent.WriteString("Disallow: /x\n") // beyond MaxSize: ignored
	tests := []struct {
		name  string
		body  []byte
		check func(*Robots) error
	}{
		{"binary garbage", garbage, nil},
		{"binary garbage with rules", append(append([]byte("User-agent: *\nDisallow: /g\n"), garbage[:1000]...), "\nDisallow: /h\n"...), func(r *Robots) error {
			if r.Group("x").Allowed("/g") {
				return errors.New("rule before the garbage lost")
			}
			return nil
		}},
		{"10 MB", tenMB.Bytes(), func(r *Robots) error {
			if r.Group("x").Allowed("/first") || r.Lines() > MaxSize/10 {
				return fmt.Errorf("lines %d", r.Lines())
			}
			return nil
		}},
		{"NUL bytes", []byte("User-agent: *\n\x00User-agent: y\nDisallow: /a\x00b\n\x00\x00\x00\nDisallow: /c\n"), func(r *Robots) error {
			g := r.Group("x")
			if g.Allowed("/a%00b") || g.Allowed("/c") {
				return errors.New("rules around NUL bytes lost")
			}
			return nil
		}},
		{"100,000 lines of one user-agent", oneAgent.Bytes(), func(r *Robots) error {
			if g := r.Group("gentlecrawl"); len(g.Lines()) != 1 || !g.Allowed("/x") {
				return fmt.Errorf("lines %d", len(g.Lines()))
			}
			return nil
		}},
		{"100,000 user-agents", manyAgents.Bytes(), nil},
		{"one long line", bytes.Repeat([]byte("Disallow: /"), MaxSize), nil},
		{"lone CRs", bytes.Repeat([]byte("User-agent: *\rDisallow: /x\r"), MaxSize/26), func(r *Robots) error {
			if r.Group("x").Allowed("/x") {
				return errors.New("rules lost")
			}
			return nil
		}},
		{"stars", []byte("User-agent: *\nDisallow: /" + strings.Repeat("*a", 8000) + "$\n"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			r := Parse(tt.body)
			g := r.Group("gentlecrawl")
			g.Match("/" + strings.Repeat("a", 3000))
			r.Issues()
			runtime.ReadMemStats(&after)
			// Parsing reads at most MaxSize bytes and keeps a bounded
			// amount per byte read.
			if used := after.TotalAlloc - before.TotalAlloc; used > 32*MaxSize {
				t.Errorf("allocated %d bytes", used)
			}
			if tt.check != nil {
				if err := tt.check(r); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

func TestDecide(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	body := []byte("User-agent: *\nDisallow: /x\n")
	good := Record{Outcome: OutcomeParsed, Body: body, Fetched: now.Add(-2 * day)}
	failing := func(r Record, since time.Duration, n int) Record {
		r.FailingSince, r.Failures = now.Add(-since), n
		return r
	}
	errDNS := errors.New("lookup example.org: no such host")
	tests := []struct {
		name    string
		resp    Response
		last    Record
		outcome Outcome
		source  Source
		root, x bool // Allowed("/"), Allowed("/x")
		expires time.Duration
	}{
		{"200", Response{Status: 200, Body: body}, Record{}, OutcomeParsed, SourceResponse, true, false, day},
		{"200 max-age shorter", Response{Status: 200, Body: body, CacheControl: "public, max-age=3600"}, Record{}, OutcomeParsed, SourceResponse, true, false, time.Hour},
		{"200 max-age longer", Response{Status: 200, Body: body, CacheControl: "max-age=604800"}, Record{}, OutcomeParsed, SourceResponse, true, false, day},
		{"200 max-age 0 has a floor", Response{Status: 200, Body: body, CacheControl: "max-age=0"}, Record{}, OutcomeParsed, SourceResponse, true, false, time.Minute},
		{"200 no-cache", Response{Status: 200, Body: body, CacheControl: "no-cache"}, Record{}, OutcomeParsed, SourceResponse, true, false, time.Minute},
		{"200 bad max-age", Response{Status: 200, Body: body, CacheControl: "max-age=soon"}, Record{}, OutcomeParsed, SourceResponse, true, false, day},
		{"200 after 5 redirects", Response{Status: 200, Body: body, Hops: 5}, Record{}, OutcomeParsed, SourceResponse, true, false, day},
		{"200 truncated", Response{Status: 200, Body: body, Truncated: true}, Record{}, OutcomeUnavailable, SourceDisallowAll, false, false, time.Minute},
		{"200 truncated after MaxSize", Response{Status: 200, Body: append(bytes.Repeat([]byte("#\n"), MaxSize/2), "Disallow: /y\n"...), Truncated: true}, Record{}, OutcomeParsed, SourceResponse, true, true, day},
		{"404", Response{Status: 404}, Record{}, OutcomeUnrestricted, SourceResponse, true, true, day},
		{"403", Response{Status: 403}, good, OutcomeUnrestricted, SourceResponse, true, true, day},
		{"301 beyond the hops", Response{Status: 301, Hops: 5}, Record{}, OutcomeUnavailable, SourceDisallowAll, false, false, time.Minute},
		{"429", Response{Status: 429}, Record{}, OutcomeUnavailable, SourceDisallowAll, false, false, time.Minute},
		{"503", Response{Status: 503}, Record{}, OutcomeUnavailable, SourceDisallowAll, false, false, time.Minute},
		{"DNS error", Response{Err: errDNS}, Record{}, OutcomeUnavailable, SourceDisallowAll, false, false, time.Minute},
		{"503 Retry-After shorter", Response{Status: 503, RetryAfter: 2 * time.Second}, Record{}, OutcomeUnavailable, SourceDisallowAll, false, false, 2 * time.Second},
		{"429 Retry-After longer", Response{Status: 429, RetryAfter: 2 * time.Hour}, Record{}, OutcomeUnavailable, SourceDisallowAll, false, false, 2 * time.Hour},
		{"503 Retry-After third time doubles", Response{Status: 503, RetryAfter: 2 * time.Second}, failing(Record{}, time.Minute, 2), OutcomeUnavailable, SourceDisallowAll, false, false, 8 * time.Second},
		{"503 Retry-After 0 has a floor", Response{Status: 503, RetryAfter: time.Millisecond}, Record{}, OutcomeUnavailable, SourceDisallowAll, false, false, time.Second},
		{"503 Retry-After beyond the TTL", Response{Status: 503, RetryAfter: 3 * day}, Record{}, OutcomeUnavailable, SourceDisallowAll, false, false, day},
		{"503 Retry-After many times", Response{Status: 503, RetryAfter: time.Hour}, failing(Record{}, 2*day, 8), OutcomeUnavailable, SourceDisallowAll, false, false, day},
		{"503, good copy", Response{Status: 503}, good, OutcomeUnavailable, SourceLastGood, true, false, time.Minute},
		{"503, 404 copy", Response{Status: 503}, Record{Outcome: OutcomeUnrestricted, Fetched: now.Add(-day)}, OutcomeUnavailable, SourceLastGood, true, true, time.Minute},
		{"503 fourth time", Response{Status: 503}, failing(good, 3*time.Hour, 3), OutcomeUnavailable, SourceLastGood, true, false, 8 * time.Minute},
		{"503 many times", Response{Status: 503}, failing(Record{}, 20*day, 40), OutcomeUnavailable, SourceDisallowAll, false, false, day},
		{"503, copy 31 days old", Response{Status: 503}, Record{Outcome: OutcomeParsed, Body: body, Fetched: now.Add(-31 * day)}, OutcomeUnavailable, SourceDisallowAll, false, false, time.Minute},
		{"503 for 31 days, old copy", Response{Status: 503}, failing(Record{Outcome: OutcomeParsed, Body: body, Fetched: now.Add(-32 * day)}, 31*day, 60), OutcomeUnavailable, SourceLastGood, true, false, day},
		{"503 for 31 days, no copy", Response{Status: 503}, failing(Record{}, 31*day, 60), OutcomeUnavailable, SourceAssumedAllow, true, true, day},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(tt.resp, tt.last, now)
			g := d.Robots.Group("gentlecrawl")
			if d.Outcome != tt.outcome || d.Source != tt.source || g.Allowed("/") != tt.root || g.Allowed("/x") != tt.x {
				t.Errorf("Decide = %v %v, / %v, /x %v; want %v %v, %v, %v (%s)",
					d.Outcome, d.Source, g.Allowed("/"), g.Allowed("/x"), tt.outcome, tt.source, tt.root, tt.x, d.Reason)
			}
			if got := d.Expires.Sub(now); got != tt.expires {
				t.Errorf("expires in %v, want %v", got, tt.expires)
			}
			if !g.Allowed("/robots.txt") || d.Reason == "" {
				t.Errorf("robots.txt disallowed or no reason: %q", d.Reason)
			}
			rec := d.Record
			if tt.outcome == OutcomeUnavailable {
				if rec.Failures != tt.last.Failures+1 || rec.FailingSince.IsZero() || rec.Outcome != tt.last.Outcome {
					t.Errorf("record after a failure: %+v", rec)
				}
			} else if rec.Outcome != tt.outcome || rec.Failures != 0 || !rec.FailingSince.IsZero() || !rec.Fetched.Equal(now) || len(rec.Body) > MaxSize {
				t.Errorf("record after a success: %+v", rec)
			}
		})
	}
	// The strict policy keeps complete disallow.
	d := Policy{StrictUnavailable: true}.Decide(Response{Status: 500}, failing(Record{}, 40*day, 90), now)
	if d.Source != SourceDisallowAll {
		t.Errorf("strict: %v", d.Source)
	}
	// A run of failures starts once.
	d1 := Decide(Response{Status: 500}, Record{}, now)
	d2 := Decide(Response{Status: 500}, d1.Record, now.Add(time.Hour))
	if !d2.Record.FailingSince.Equal(now) || d2.Record.Failures != 2 {
		t.Errorf("second failure: %+v", d2.Record)
	}
	if !(Policy{}).FollowRedirect(4) || (Policy{}).FollowRedirect(5) {
		t.Error("FollowRedirect: want five hops")
	}
	for s, want := range map[Source]string{SourceResponse: "response", SourceLastGood: "last-good-copy", SourceDisallowAll: "disallow-all", SourceAssumedAllow: "assumed-allow", 0: "Source(0)"} {
		if s.String() != want {
			t.Errorf("%d: %q", s, s.String())
		}
	}
}

// refDecide is a plain reading of RFC 9309 §2.2.2 to check the indexed
// matcher against: every rule of the group is tried with a textbook
// wildcard matcher, and the longest pattern wins, Allow on a tie.
func refDecide(g *Group, path string) Match {
	var buf []byte
	p, changed := normalizePath(buf, path)
	pp := path
	if changed {
		pp = string(p)
	}
	if pp == "/robots.txt" || strings.HasPrefix(pp, "/robots.txt?") {
		return Match{Allowed: true}
	}
	best, bestLen, bestAllow := -1, -1, false
	try := func(i int, pattern string, allow bool) {
		anchored := strings.HasSuffix(pattern, "$")
		body := strings.TrimSuffix(pattern, "$")
		if !globMatch(body, anchored, pp) {
			return
		}
		if n := len(pattern); n > bestLen || n == bestLen && allow && !bestAllow {
			best, bestLen, bestAllow = i, n, allow
		}
	}
	for _, s := range g.spans {
		for i := s.start; i < s.end; i++ {
			r := &g.rules[i]
			value := g.src[r.text+uint32(r.value) : r.text+uint32(r.textLen)]
			pattern := string(normalizeTo(nil, value))
			try(int(i), pattern, r.allow)
			body := strings.TrimSuffix(pattern, "$")
			if j := strings.LastIndexByte(body, '/'); r.allow && j >= 0 && strings.HasPrefix(body[j:], "/index.htm") {
				try(int(i), body[:j+1]+"$", true)
			}
		}
	}
	if best < 0 {
		return Match{Allowed: true}
	}
	r := &g.rules[best]
	return Match{Allowed: bestAllow, Rule: g.src[r.text : r.text+uint32(r.textLen)], Line: int(r.line)}
}

// globMatch matches a pattern with "*" against s by dynamic programming.
func globMatch(pattern string, anchored bool, s string) bool {
	// m[j]: pattern[:i] matches s[:j].
	m := make([]bool, len(s)+1)
	m[0] = true
	for i := 0; i < len(pattern); i++ {
		next := make([]bool, len(s)+1)
		if pattern[i] == '*' {
			seen := false
			for j := 0; j <= len(s); j++ {
				seen = seen || m[j]
				next[j] = seen
			}
		} else {
			for j := 1; j <= len(s); j++ {
				next[j] = m[j-1] && s[j-1] == pattern[i]
			}
		}
		m = next
	}
	if anchored {
		return m[len(s)]
	}
	for _, ok := range m {
		if ok {
			return true
		}
	}
	return false
}

func TestMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"/", "a", "b", "ab", "*", "$", "%61", "%2F", "index.html", "?", "=", "é"}
	gen := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	for range 2000 {
		var body strings.Builder
		body.WriteString("User-agent: *\n")
		for range rng.IntN(12) {
			if rng.IntN(2) == 0 {
				body.WriteString("Allow: /")
			} else {
				body.WriteString("Disallow: /")
			}
			body.WriteString(gen(rng.IntN(5)) + "\n")
		}
		g := Parse([]byte(body.String())).Group("x")
		for range 20 {
			path := "/" + gen(rng.IntN(6))
			if got, want := g.Match(path), refDecide(g, path); got != want {
				t.Fatalf("Match(%q) = %+v, want %+v\nrobots.txt:\n%s", path, got, want, body.String())
			}
		}
	}
}

func FuzzMatchReference(f *testing.F) {
	f.Add("User-agent: *\nDisallow: /a*b$\nAllow: /a\nAllow: /x/index.html\n", "/ab")
	f.Add("User-agent: *\nDisallow: /%61\nAllow: /*\n", "/a?x=%2f")
	f.Fuzz(func(t *testing.T, body, path string) {
		if len(body) > 2000 || len(path) > 200 {
			return // the reference matcher is quadratic
		}
		g := Parse([]byte(body)).Group("gentlecrawl")
		got, want := g.Match(path), refDecide(g, path)
		if got != want {
			t.Fatalf("Match(%q) = %+v, want %+v", path, got, want)
		}
		if n := testing.AllocsPerRun(3, func() { g.Match(path) }); n != 0 {
			t.Fatalf("Match allocates %v times", n)
		}
	})
}

func BenchmarkParse500K(b *testing.B) {
	body := benchRobots(500 << 10)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		Parse(body)
	}
}

// BenchmarkParseCompile500K is Parse, Group and the first Match: what a
// crawler pays before its first decision.
func BenchmarkParseCompile500K(b *testing.B) {
	body := benchRobots(500 << 10)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		Parse(body).Group("gentlecrawl").Allowed("/")
	}
}

// TestConcurrentFirstMatch: the index is built once, whichever goroutine
// matches first (run with -race).
func TestConcurrentFirstMatch(t *testing.T) {
	g := Parse([]byte("User-agent: *\nDisallow: /a\nAllow: /a/b*c\n")).Group("x")
	done := make(chan bool)
	for range 8 {
		go func() { done <- !g.Allowed("/a/x") && g.Allowed("/a/bxc") }()
	}
	for range 8 {
		if !<-done {
			t.Error("wrong decision")
		}
	}
}
