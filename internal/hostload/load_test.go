package hostload

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// drive feeds outcomes one after another, each starting when the previous
// decision allows and lasting lat, and returns the gaps decided.
func drive(l *Load, start time.Time, outs []Outcome) (gaps []time.Duration, whys []string, end time.Time) {
	at := start
	for _, o := range outs {
		lat := o.Latency
		o.Start, o.End = at, at.Add(lat)
		d := l.Observe(o)
		gaps = append(gaps, d.Next.Sub(o.End))
		whys = append(whys, d.Why)
		at = d.Next
	}
	return gaps, whys, at
}

func ok(lat time.Duration, n int) []Outcome {
	out := make([]Outcome, n)
	for i := range out {
		out[i] = Outcome{Status: 200, Latency: lat}
	}
	return out
}

func TestLoadStaysAtFloorWhileHealthy(t *testing.T) {
	l := NewLoad(LoadConfig{}, time.Second, "delay 1s", 1)
	gaps, whys, _ := drive(l, t0, ok(50*time.Millisecond, 50))
	for i, g := range gaps {
		if g != After(t0, time.Second).Sub(t0) {
			t.Fatalf("request %d: gap %v (%s), want the floor", i, g, whys[i])
		}
	}
	if whys[0] != "delay 1s" {
		t.Errorf("why %q, want the floor's reason", whys[0])
	}
}

func TestLoadNeverBelowFloor(t *testing.T) {
	l := NewLoad(LoadConfig{}, 10*time.Second, "Crawl-delay 10s", 1)
	outs := append(ok(20*time.Millisecond, 10), Outcome{Status: 503}, Outcome{Status: 200, Latency: 5 * time.Second})
	outs = append(outs, ok(10*time.Millisecond, 200)...)
	gaps, whys, _ := drive(l, t0, outs)
	for i, g := range gaps {
		if g < 10*time.Second {
			t.Fatalf("request %d: gap %v below the Crawl-delay (%s)", i, g, whys[i])
		}
	}
	if l.Gap() != 10*time.Second {
		t.Errorf("after recovery the gap is %v, want back at the floor", l.Gap())
	}
}

func TestLoadSlowsOnSlowResponsesAndRecovers(t *testing.T) {
	l := NewLoad(LoadConfig{}, 200*time.Millisecond, "delay", 1)
	_, _, at := drive(l, t0, ok(40*time.Millisecond, 20))
	if l.Baseline() != 40*time.Millisecond {
		t.Fatalf("baseline %v", l.Baseline())
	}
	if l.Gap() != 200*time.Millisecond {
		t.Fatalf("healthy host: gap %v, want the floor", l.Gap())
	}
	gaps, whys, at := drive(l, at, ok(400*time.Millisecond, 6))
	last := gaps[len(gaps)-1]
	if last <= After(t0, 200*time.Millisecond).Sub(t0) || !strings.Contains(whys[len(whys)-1], "baseline") {
		t.Fatalf("after slow responses the gap is %v (%s); want it widened and explained", last, whys[len(whys)-1])
	}
	// Healthy again: the pace comes back to the floor's over time, not at
	// once.
	gaps, _, at = drive(l, at, ok(40*time.Millisecond, 1))
	if gaps[0] <= After(t0, 200*time.Millisecond).Sub(t0) {
		t.Errorf("first healthy response went straight back to the floor: recovery must be gradual")
	}
	for end := at.Add(4 * maxCycle); at.Before(end); {
		_, _, at = drive(l, at, ok(40*time.Millisecond, 1))
	}
	if l.Gap() != 200*time.Millisecond {
		t.Errorf("after four cycles of healthy responses the gap is %v, want the floor", l.Gap())
	}
}

func TestLoadErrorsBackOffButNotFor404(t *testing.T) {
	l := NewLoad(LoadConfig{}, time.Second, "delay", 1)
	drive(l, t0, []Outcome{{Status: 404, Latency: 10 * time.Millisecond}, {Status: 403}, {Status: 410}})
	if l.Gap() != time.Second || l.events != 0 {
		t.Fatalf("404/403/410 widened the gap to %v: they are answers, not load", l.Gap())
	}
	for _, status := range []int{429, 500, 502, 503, 504, 0} {
		l := NewLoad(LoadConfig{}, time.Second, "delay", 1)
		_, _, at := drive(l, t0, ok(10*time.Millisecond, 10))
		o := Outcome{Start: at, End: at.Add(10 * time.Millisecond), Status: status, Failed: status == 0}
		d := l.Observe(o)
		if status == 500 {
			// A lone 500 is a broken page; a second one is load.
			if d.Reason == ReasonBackoff || l.events != 0 {
				t.Errorf("a lone 500 slowed the host: %s", d.Why)
			}
			o.Start, o.End = d.Next, d.Next.Add(10*time.Millisecond)
			d = l.Observe(o)
		}
		if d.Reason != ReasonBackoff || d.Next.Sub(o.End) < 450*time.Millisecond || d.Next.Sub(o.End) > 6*time.Second {
			t.Errorf("status %d: next request %v later (%s, %s), want a pause of seconds", status, d.Next.Sub(o.End), d.Reason, d.Why)
		}
		// The rate is cut from the pace the host was really sent at (one
		// request per second and a bit), not from the slow start's; the
		// first cut, which ends slow start, halves it.
		if r := l.Rate(); r > 0.55 || r < 0.45 {
			t.Errorf("status %d: rate %.2f/s after the cut, want about 0.5 × 0.98/s", status, r)
		}
	}
}

func TestLoadRetryAfter(t *testing.T) {
	l := NewLoad(LoadConfig{}, time.Second, "delay", 1)
	o := Outcome{Start: t0, End: t0, Status: 503, RetryAfter: "120"}
	d := l.Observe(o)
	if d.Next != t0.Add(120*time.Second) || !strings.Contains(d.Why, "Retry-After") || d.Reason != ReasonBackoff {
		t.Errorf("next %v (%s, %s), want 120s later", d.Next.Sub(t0), d.Why, d.Reason)
	}
	// An HTTP-date.
	l = NewLoad(LoadConfig{}, time.Second, "delay", 1)
	o.RetryAfter = t0.Add(90 * time.Second).Format(time.RFC1123)
	if d := l.Observe(o); d.Next != t0.Add(90*time.Second) {
		t.Errorf("HTTP-date Retry-After: next %v, want 90s", d.Next.Sub(t0))
	}
	// Clamped, and said so.
	l = NewLoad(LoadConfig{RetryAfterMax: time.Hour}, time.Second, "delay", 1)
	o.RetryAfter = "86400"
	d = l.Observe(o)
	if d.Next != t0.Add(time.Hour) || !strings.Contains(d.Why, "clamped") {
		t.Errorf("Retry-After 1 day: next %v (%s), want 1h and the clamp reported", d.Next.Sub(t0), d.Why)
	}
}

func TestLoadPausesAFailingHost(t *testing.T) {
	l := NewLoad(LoadConfig{PauseAfter: 3, PauseBase: 30 * time.Second, PauseMax: 10 * time.Minute}, time.Second, "delay", 1)
	var pauses []time.Duration
	at := t0
	for i := 0; i < 8; i++ {
		d := l.Observe(Outcome{Start: at, End: at, Failed: true})
		pauses = append(pauses, d.Next.Sub(at))
		at = d.Next
	}
	want := []time.Duration{30 * time.Second, 60 * time.Second, 120 * time.Second, 240 * time.Second, 480 * time.Second, 600 * time.Second}
	for i, w := range want {
		if got := pauses[i+2]; got != w {
			t.Errorf("failure %d: pause %v, want %v (all: %v)", i+3, got, w, pauses)
		}
	}
	// Recovery is automatic: the pausing ends with the first good answer,
	// and the rate climbs back to the floor's.
	next := l.Observe(Outcome{Start: at, End: at, Status: 200, Latency: time.Millisecond}).Next
	if next.Sub(at) > 2*time.Minute+time.Second {
		t.Errorf("after a success the next request waits %v", next.Sub(at))
	}
	for end := next.Add(2 * maxCycle); next.Before(end); {
		_, _, next = drive(l, next, ok(time.Millisecond, 1))
	}
	if l.Gap() != time.Second || l.events != 1 {
		t.Errorf("after two cycles of good answers the gap is %v (%d congestion events), want the floor (one event)", l.Gap(), l.events)
	}
}

func TestParseRetryAfter(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"0", 0, true},
		{" 120 ", 120 * time.Second, true},
		{"-5", 0, false},
		{"soon", 0, false},
		{"", 0, false},
		{t0.Add(-time.Hour).Format(time.RFC1123), 0, true},                                // in the past: now
		{t0.Add(time.Minute).Format("Monday, 02-Jan-06 15:04:05 MST"), time.Minute, true}, // RFC 850
		{t0.Add(time.Minute).Format(time.ANSIC), time.Minute, true},
	} {
		got, ok := ParseRetryAfter(tt.in, t0)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestLoadConcurrencyGrowsOnlyWithoutFloor(t *testing.T) {
	withFloor := NewLoad(LoadConfig{}, time.Second, "delay 1s", 1)
	drive(withFloor, t0, ok(time.Millisecond, 50))
	if n := withFloor.Concurrency(2); n != 1 {
		t.Errorf("a host with a floor got concurrency %d: one request at a time, with a gap", n)
	}
	l := NewLoad(LoadConfig{}, 0, "no delay", 1)
	_, _, at := drive(l, t0, ok(10*time.Millisecond, healthyForMore-1))
	if n := l.Concurrency(2); n != 1 {
		t.Errorf("concurrency %d before the host proved fast", n)
	}
	_, _, at = drive(l, at, ok(10*time.Millisecond, 1))
	if n := l.Concurrency(2); n != 2 {
		t.Errorf("concurrency %d after %d fast answers, want 2", n, healthyForMore)
	}
	drive(l, at, []Outcome{{Status: 503}})
	if n := l.Concurrency(2); n != 1 {
		t.Errorf("concurrency %d after a 503, want back to 1", n)
	}
}

// TestLoadCutsFromTheMeasuredRate: the cut starts from the rate the host
// was really sent at (the floor's pace here), not from the slow start's
// target, and the summary says where it happened and why.
func TestLoadCutsFromTheMeasuredRate(t *testing.T) {
	l := NewLoad(LoadConfig{}, 50*time.Millisecond, "delay 50ms", 1)
	_, _, at := drive(l, t0, ok(0, 60))
	sent := 1 / After(t0, 50*time.Millisecond).Sub(t0).Seconds() // 13.3/s
	if s, ok := l.Summary(); ok {
		t.Fatalf("a host that never pushed back has a summary: %+v", s)
	}
	d := l.Observe(Outcome{Start: at, End: at, Status: 503})
	if r := l.Rate(); r < 0.45*sent || r > 0.55*sent {
		t.Errorf("rate after the first cut %.1f/s, want half the %.1f/s measured", r, sent)
	}
	want := Congestion{Status: 503}
	if s, ok := l.Summary(); !ok || s.Last != want || s.Last.String() != "503, no Retry-After" || fmt.Sprintf("%.1f", s.EventRate) != fmt.Sprintf("%.1f", sent) || s.Settled <= 0 || s.Events != 1 {
		t.Errorf("summary %+v (%v), want %+v at %.1f/s, settled somewhere, 1 congestion event", s, ok, want, sent)
	}
	// More refusals with no success in between are the same event.
	at = d.Next
	for range 2 {
		d = l.Observe(Outcome{Start: at, End: at, Status: 503})
		at = d.Next
	}
	if l.events != 1 {
		t.Errorf("%d congestion events for three refusals in a row, want 1", l.events)
	}
}

// TestLoadRefusalPausesDouble: 429s and 503s in a row come from a server
// that is up: the pause doubles from a second or two, never jumping to the
// long pauses of a failing host, and never past PauseMax.
func TestLoadRefusalPausesDouble(t *testing.T) {
	l := NewLoad(LoadConfig{PauseMax: 10 * time.Minute}, 0, "no delay", 1)
	_, _, at := drive(l, t0, ok(time.Millisecond, 30))
	var pauses []time.Duration
	for range 20 {
		d := l.Observe(Outcome{Start: at, End: at, Status: 429})
		pauses = append(pauses, d.Next.Sub(at))
		at = d.Next
	}
	if pauses[0] > 5*time.Second || pauses[2] >= 30*time.Second {
		t.Errorf("pauses %v: want seconds, not the long pauses of a failing host", pauses[:4])
	}
	for i := 1; i < len(pauses); i++ {
		if pauses[i] < pauses[i-1] && pauses[i] != 10*time.Minute {
			t.Errorf("pause %d is %v after %v: want it to grow", i, pauses[i], pauses[i-1])
		}
		if pauses[i] > 10*time.Minute {
			t.Errorf("pause %d is %v, past PauseMax", i, pauses[i])
		}
	}
	if last := pauses[len(pauses)-1]; last != 10*time.Minute {
		t.Errorf("after 20 refusals the pause is %v, want PauseMax", last)
	}
}

// TestLoadRecall: a Load that takes up another's memo (a shared crawl's
// process taking a host over) goes on at the rate the other settled on
// rather than in slow start; an older memo, or a broken one, changes
// nothing.
func TestLoadRecall(t *testing.T) {
	a := NewLoad(LoadConfig{}, 0, "", 1)
	outs := append(ok(10*time.Millisecond, 40), Outcome{Status: 429, RetryAfter: "1"})
	_, _, end := drive(a, t0, outs)
	m := a.Memo()
	if m == nil {
		t.Fatal("no memo after a 429")
	}
	if NewLoad(LoadConfig{}, 0, "", 2).Memo() != nil {
		t.Error("a fresh Load has a memo")
	}
	at := end.Add(3 * time.Second)
	b := NewLoad(LoadConfig{}, 0, "", 2)
	if !math.IsInf(b.rateAt(at), 1) {
		t.Fatalf("fresh Load's rate %v, want no limit before its first request", b.rateAt(at))
	}
	b.Recall(m, at)
	if got, want := b.rateAt(at), a.rateAt(at); math.Abs(got-want) > 1e-9*want || math.IsInf(got, 0) {
		t.Errorf("after Recall the rate is %v, the other's %v", got, want)
	}
	if d := b.Observe(Outcome{Status: 200, Start: at, End: at.Add(10 * time.Millisecond)}); !strings.Contains(d.Why, "recalled") && d.Reason == ReasonRate {
		t.Errorf("decision after Recall: %+v", d)
	}

	// An older memo does not undo what b learned since.
	old := *m
	old.GrowFrom = m.GrowFrom.Add(-time.Minute)
	old.Ceil, old.Low = 1000, 900
	before := b.rateAt(at)
	b.Recall(&old, at)
	if b.rateAt(at) != before {
		t.Errorf("an older memo changed the rate: %v → %v", before, b.rateAt(at))
	}
	for _, bad := range []*RateMemo{nil, {}, {Low: math.NaN(), Ceil: 1, Cycle: time.Second, GrowFrom: at}, {Low: 1, Ceil: math.Inf(1), Cycle: time.Second, GrowFrom: at}, {Low: 1, Ceil: 2, GrowFrom: at}} {
		c := NewLoad(LoadConfig{}, 0, "", 3)
		c.Recall(bad, at)
		if c.started || c.ceil != 0 {
			t.Errorf("Recall(%+v) took it up", bad)
		}
	}
}
