package simweb

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func newLimiter(t *testing.T, l RateLimit) *Limiter {
	t.Helper()
	lim, err := NewLimiter(l)
	if err != nil {
		t.Fatal(err)
	}
	return lim
}

// limiterT0 is on a whole second, so that the milliseconds nginx counts
// are those of the offsets.
var limiterT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// pattern sends n requests spacing apart from limiterT0 and returns one
// character a request: + accepted, - refused.
func pattern(lim *Limiter, spacing time.Duration, n int) string {
	var b strings.Builder
	for k := range n {
		if lim.Allow(limiterT0.Add(time.Duration(k) * spacing)) {
			b.WriteByte('+')
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// cycle repeats unit up to n characters.
func cycle(unit string, n int) string {
	return strings.Repeat(unit, n/len(unit)+1)[:n]
}

// TestLimiter checks the nginx algorithm at three rates and bursts for
// three ways of sending. What nginx does, worked out by hand from
// excess' = max(0, excess − rate×ms + 1000), in thousandths:
//
//   - back to back, the first request and Burst more pass, the rest are
//     refused;
//   - 1/Rate apart, the bucket drains exactly what each request adds, so
//     all pass — except at Rate 13.5 with Burst 0, where 1/Rate is 74.07
//     ms and a request 74 whole milliseconds after the last accepted one
//     is refused (13.5×74 = 999 < 1000);
//   - 0.9/Rate apart (180 ms at Rate 5, 18 ms at 50), each request adds a
//     net 100 thousandths: with Burst 0 every other request is refused
//     (1.8/Rate later the bucket is empty again); with Burst b the first
//     10b+1 pass, and from then on one in ten is refused — the accepted
//     rate is Rate, not all of the burst is given back. At Rate 13.5
//     (66.67 ms, whole-millisecond gaps of 66 and 67) the same holds in
//     the long run.
//
// With Burst 0 the bucket is empty after every accepted request, so a
// request passes exactly when it comes ⌈1000/Rate⌉ whole milliseconds or
// more after the last accepted one: every Burst 0 pattern is also checked
// against that simpler rule. Every pattern is checked against the bound
// nginx's bucket gives: at most 1 + Burst + Rate × elapsed accepted.
func TestLimiter(t *testing.T) {
	const n = 400
	for _, rate := range []float64{5, 13.5, 50} {
		interval := time.Duration(float64(time.Second) / rate)
		wholeMS := rate == 5 || rate == 50 // 1/Rate and 0.9/Rate are whole milliseconds
		for _, burst := range []int{0, 1, 4} {
			for _, sp := range []struct {
				name    string
				spacing time.Duration
			}{
				{"back to back", 0},
				{"1/rate apart", interval},
				{"0.9/rate apart", interval * 9 / 10},
			} {
				t.Run(fmt.Sprintf("rate %v burst %d %s", rate, burst, sp.name), func(t *testing.T) {
					lim := newLimiter(t, RateLimit{Rate: rate, Burst: burst})
					got := pattern(lim, sp.spacing, n)

					var want string // "" when only the rules below apply
					switch {
					case sp.spacing == 0:
						want = strings.Repeat("+", burst+1) + strings.Repeat("-", n-burst-1)
					case sp.spacing == interval && (wholeMS || burst > 0):
						want = strings.Repeat("+", n)
					case sp.spacing == interval:
						if !strings.Contains(got, "-") {
							t.Errorf("no refusal at 74.07 ms spacing with burst 0")
						}
					case burst == 0:
						want = cycle("+-", n)
					case wholeMS:
						first := 10*burst + 1
						want = strings.Repeat("+", first) + cycle("-+++++++++", n-first)
					default:
						// Past the burst, about one in ten refused.
						tail := got[200:]
						if share := float64(strings.Count(tail, "-")) / float64(len(tail)); math.Abs(share-0.1) > 0.01 {
							t.Errorf("%.3f of the last 200 refused, want about 0.1", share)
						}
					}
					if want != "" && got != want {
						t.Errorf("got  %s\nwant %s", got, want)
					}

					if burst == 0 {
						gap := int64(math.Ceil(1000 / rate))
						last := int64(-1 << 40)
						for k := range n {
							ms := limiterT0.Add(time.Duration(k) * sp.spacing).UnixMilli()
							pass := ms-last >= gap
							if pass {
								last = ms
							}
							if pass != (got[k] == '+') {
								t.Fatalf("request %d at %d ms: accepted %v, want %v (%d ms gap rule)", k, ms-limiterT0.UnixMilli(), got[k] == '+', pass, gap)
							}
						}
					}
					for k := range n {
						elapsed := time.Duration(k) * sp.spacing
						if acc := strings.Count(got[:k+1], "+"); float64(acc) > 1+float64(burst)+rate*elapsed.Seconds()+1e-9 {
							t.Fatalf("%d accepted in %v", acc, elapsed)
						}
					}
					if sp.spacing > 0 && strings.Contains(got, "--") {
						t.Errorf("two refusals in a row: %s", got)
					}
					st := lim.Stats()
					if st.Accepted != int64(strings.Count(got, "+")) || st.Refused != int64(strings.Count(got, "-")) {
						t.Errorf("stats %+v for %s", st, got)
					}
				})
			}
		}
	}
}

// TestLimiterRefusalKeepsState: refused requests change nothing, so a
// limiter that refused many requests answers the next ones as one that
// never saw them.
func TestLimiterRefusalKeepsState(t *testing.T) {
	ms := time.Millisecond
	l := RateLimit{Rate: 5, Burst: 2}
	hammered, quiet := newLimiter(t, l), newLimiter(t, l)
	for range 3 {
		hammered.Allow(limiterT0)
		quiet.Allow(limiterT0)
	}
	// The bucket holds 2 (2000 thousandths): each of these would make it
	// more than 2, so each is refused.
	for _, at := range []time.Duration{0, 50 * ms, 100 * ms, 150 * ms, 199 * ms} {
		if hammered.Allow(limiterT0.Add(at)) {
			t.Errorf("accepted at %v", at)
		}
	}
	// Then both see the same: full again at 200 ms (5 r/s drains one
	// request in 200 ms), empty 1.6 s later.
	for _, tc := range []struct {
		at   time.Duration
		want bool
	}{
		{200 * ms, true}, {201 * ms, false}, {300 * ms, false}, {400 * ms, true}, {400 * ms, false},
		{2 * time.Second, true}, {2 * time.Second, true}, {2 * time.Second, true}, {2 * time.Second, false},
	} {
		a, b := hammered.Allow(limiterT0.Add(tc.at)), quiet.Allow(limiterT0.Add(tc.at))
		if a != tc.want || b != tc.want {
			t.Errorf("at %v: %v after refusals, %v without, want %v", tc.at, a, b, tc.want)
		}
	}
	if st := hammered.Stats(); st != (LimiterStats{Accepted: 3 + 5, Refused: 5 + 4}) {
		t.Errorf("stats %+v", st)
	}
}

// TestLimiterMilliseconds: nginx counts whole milliseconds of its clock,
// not the time between requests. At 1000 requests/s with Burst 0, a
// request in the same millisecond as the last is refused, and one in the
// next millisecond passes, however close.
func TestLimiterMilliseconds(t *testing.T) {
	lim := newLimiter(t, RateLimit{Rate: 1000})
	us := time.Microsecond
	for _, tc := range []struct {
		at   time.Duration
		want bool
	}{
		{998 * us, true},   // millisecond 0
		{999 * us, false},  // millisecond 0: refused
		{1000 * us, true},  // millisecond 1, 2 µs after the first
		{1500 * us, false}, // millisecond 1
		{500 * us, false},  // the clock went back: 0 ms, refused
		{2999 * us, true},  // millisecond 2
	} {
		if got := lim.Allow(limiterT0.Add(tc.at)); got != tc.want {
			t.Errorf("at %v: %v, want %v", tc.at, got, tc.want)
		}
	}
}

// TestLimiterIdle: a bucket left alone for long drains completely, and
// the arithmetic does not overflow at the highest rate and burst.
func TestLimiterIdle(t *testing.T) {
	lim := newLimiter(t, RateLimit{Rate: maxRateLimit, Burst: maxRateBurst})
	lim.Allow(limiterT0)
	lim.mu.Lock()
	lim.mu.excess = lim.burst // full
	lim.mu.Unlock()
	if lim.Allow(limiterT0) {
		t.Fatal("accepted beyond a full bucket")
	}
	later := limiterT0.Add(100 * 365 * 24 * time.Hour)
	if !lim.Allow(later) {
		t.Fatal("refused after a century")
	}
	lim.mu.Lock()
	excess := lim.mu.excess
	lim.mu.Unlock()
	if excess != 0 {
		t.Errorf("excess %d after a century, want 0", excess)
	}
}

func TestRateLimitConfig(t *testing.T) {
	for _, l := range []RateLimit{
		{},
		{Rate: -1},
		{Rate: 0.0009},
		{Rate: 2e9},
		{Rate: math.NaN()},
		{Rate: math.Inf(1)},
		{Rate: 1, Burst: -1},
		{Rate: 1, Burst: maxRateBurst + 1},
		{Rate: 1, Status: 200},
		{Rate: 1, Status: 600},
		{Rate: 1, RetryAfter: -time.Second},
	} {
		if _, err := NewLimiter(l); !errors.Is(err, errConfig) {
			t.Errorf("NewLimiter(%+v): %v", l, err)
		}
		_, err := New(Config{Hosts: 2, HostOptions: func(int, string) HostOptions { return HostOptions{RateLimit: &l} }})
		if !errors.Is(err, errConfig) {
			t.Errorf("New with %+v: %v", l, err)
		}
	}
	// Thousandths rounded down, as nginx's rate*1000/scale: 810r/m is
	// 13.5 r/s, 1r/m is 16 thousandths.
	for _, tc := range []struct {
		rate float64
		want int64
	}{{13.5, 13500}, {810.0 / 60, 13500}, {1.0 / 60, 16}, {0.001, 1}, {0.29, 290}} {
		if got := newLimiter(t, RateLimit{Rate: tc.rate}).rate; got != tc.want {
			t.Errorf("Rate %v: %d thousandths, want %d", tc.rate, got, tc.want)
		}
	}
	l := RateLimit{Rate: 2}
	w := newWeb(t, Config{Hosts: 2, HostOptions: func(i int, _ string) HostOptions {
		if i == 0 {
			return HostOptions{RateLimit: &l}
		}
		return HostOptions{}
	}})
	l.Rate = 7 // New kept a copy
	a := w.Hosts()[0]
	if got := a.Options().RateLimit; got == nil || *got != (RateLimit{Rate: 2, Status: 503}) {
		t.Errorf("Options().RateLimit = %+v", got)
	}
	a.Options().RateLimit.Burst = 9 // a copy too
	if got := a.Limiter().RateLimit(); got != (RateLimit{Rate: 2, Status: 503}) {
		t.Errorf("Limiter().RateLimit() = %+v", got)
	}
	if w.Hosts()[1].Limiter() != nil || w.Hosts()[1].Options().RateLimit != nil {
		t.Error("limiter without RateLimit")
	}
}

// TestRateLimitThroughHandler drives a host with a rate limit of 1/s,
// burst 1, in front of a Capacity of one worker for 1 s and no queue.
// The log reads:
//
//	0 ms     robots.txt  accepted by the limiter, served until 1000 ms
//	1 ms     /           accepted by the limiter, refused by the busy
//	                     worker (503)
//	2 ms     /           limited: 429, Retry-After 2 (1.5 s rounded up)
//	3 ms     robots.txt  limited too
//	1001 ms  /           the bucket has drained one request: accepted,
//	                     served by the worker freed at 1000 ms
//
// The limited requests take no worker: the Model saw two of the five.
func TestRateLimitThroughHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWeb(t, Config{Hosts: 2, HostOptions: func(i int, _ string) HostOptions {
			if i != 0 {
				return HostOptions{}
			}
			return HostOptions{
				RateLimit: &RateLimit{Rate: 1, Burst: 1, Status: 429, RetryAfter: 1500 * time.Millisecond},
				Capacity:  &Capacity{ServiceTime: time.Second},
			}
		}})
		ms := time.Millisecond
		t0 := time.Now()
		paths := []string{"/robots.txt", "/", "/", "/robots.txt", "/"}
		at := []time.Duration{0, 1 * ms, 2 * ms, 3 * ms, 1001 * ms}
		resps := make([]*http.Response, len(paths))
		var wg sync.WaitGroup
		for i, path := range paths {
			time.Sleep(t0.Add(at[i]).Sub(time.Now()))
			wg.Go(func() { resps[i] = do(w, "GET", "http://a.test"+path) })
			if i == 3 {
				synctest.Wait()
				do(w, "GET", "http://b.test/") // not limited
			}
		}
		wg.Wait()

		type answer struct {
			status     int
			retryAfter string
		}
		var answers []answer
		for _, r := range resps {
			answers = append(answers, answer{r.StatusCode, r.Header.Get("Retry-After")})
		}
		if want := []answer{{200, ""}, {503, ""}, {429, "2"}, {429, "2"}, {200, ""}}; !slices.Equal(answers, want) {
			t.Errorf("answers %v, want %v", answers, want)
		}
		type row struct {
			path       string
			status     int
			start, end time.Duration
		}
		var got []row
		for _, e := range w.Requests() {
			got = append(got, row{e.Host + e.Path, e.Status, e.Start.Sub(t0), e.End.Sub(t0)})
		}
		want := []row{
			{"a.test/", 503, 1 * ms, 1 * ms},
			{"a.test/", 429, 2 * ms, 2 * ms},
			{"a.test/robots.txt", 429, 3 * ms, 3 * ms},
			{"b.test/", 200, 3 * ms, 3 * ms},
			{"a.test/robots.txt", 200, 0, 1000 * ms},
			{"a.test/", 200, 1001 * ms, 2001 * ms},
		}
		if !slices.Equal(got, want) {
			t.Errorf("log\n got %v\nwant %v", got, want)
		}
		h := w.Hosts()[0]
		if st := h.Model().Stats(); st.Served != 2 || st.Refused != 1 {
			t.Errorf("model stats %+v, want 2 served and 1 refused", st)
		}
		if st := h.Limiter().Stats(); st != (LimiterStats{Accepted: 3, Refused: 2}) {
			t.Errorf("limiter stats %+v", st)
		}
	})
}

// TestRateLimitRetryAfterDate: with HostOptions.RetryAfterDate a limited
// request announces the date, rounded up to the second, as outages do.
func TestRateLimitRetryAfterDate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		time.Sleep(1500 * time.Millisecond) // not on a whole second
		now := time.Now()
		w := newWeb(t, Config{Hosts: 1, HostOptions: func(int, string) HostOptions {
			return HostOptions{RetryAfterDate: true, RateLimit: &RateLimit{Rate: 1, RetryAfter: 90 * time.Second}}
		}})
		if resp := do(w, "GET", "http://a.test/"); resp.StatusCode != 200 {
			t.Fatalf("first request: %d", resp.StatusCode)
		}
		resp := do(w, "GET", "http://a.test/")
		want := now.Add(90500 * time.Millisecond).UTC().Format(http.TimeFormat) // 1.5s + 90s, rounded up
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != want {
			t.Errorf("%d Retry-After %q, want 503 %q", resp.StatusCode, resp.Header.Get("Retry-After"), want)
		}
	})
}

// TestRateLimitPacing runs two clients through the handler for about
// 1000/Rate seconds of the bubble's clock, each pacing its requests
// evenly: one at 95 % of Rate, one at 110 %. The first is never refused.
// The second, with a burst, gets Rate through and sees the rest refused —
// 10 % of Rate, 1 in 11 of its requests, a little less over this run
// because the burst is given once. Without a burst it sees every other
// request refused, as the Limiter documents.
func TestRateLimitPacing(t *testing.T) {
	for _, rate := range []float64{5, 13.5, 50} {
		for _, burst := range []int{0, 1, 4} {
			t.Run(fmt.Sprintf("rate %v burst %d", rate, burst), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					l := &RateLimit{Rate: rate, Burst: burst, Status: 429}
					w := newWeb(t, Config{Hosts: 2, HostOptions: func(int, string) HostOptions { return HostOptions{RateLimit: l} }})
					pace := func(host string, share float64, n int) (refused int) {
						interval := time.Duration(float64(time.Second) / (rate * share))
						for range n {
							switch resp := do(w, "GET", "http://"+host+"/"); resp.StatusCode {
							case 200:
							case 429:
								refused++
							default:
								t.Errorf("%s: %d", host, resp.StatusCode)
							}
							time.Sleep(interval)
						}
						return refused
					}
					const slowN, fastN = 950, 1100
					var slow, fast int
					var wg sync.WaitGroup
					wg.Go(func() { slow = pace("a.test", 0.95, slowN) })
					wg.Go(func() { fast = pace("b.test", 1.10, fastN) })
					wg.Wait()
					if slow != 0 {
						t.Errorf("95%%: %d of %d refused, want none", slow, slowN)
					}
					if burst == 0 {
						if fast != fastN/2 {
							t.Errorf("110%%, no burst: %d of %d refused, want every other", fast, fastN)
						}
						return
					}
					// The bucket's bound: at most 1 + Burst + Rate × elapsed pass.
					elapsed := float64(fastN-1) / (rate * 1.10)
					least := fastN - (1 + burst + int(rate*elapsed))
					if share := float64(fast) / fastN; fast < least || math.Abs(share-1.0/11) > 0.01 {
						t.Errorf("110%%: %d of %d refused (%.3f), want at least %d, about 1/11", fast, fastN, share, least)
					}
					for i, host := range []string{"a.test", "b.test"} {
						want := LimiterStats{Accepted: slowN, Refused: 0}
						if i == 1 {
							want = LimiterStats{Accepted: int64(fastN - fast), Refused: int64(fast)}
						}
						if st := w.Host(host).Limiter().Stats(); st != want {
							t.Errorf("%s stats %+v, want %+v", host, st, want)
						}
					}
				})
			})
		}
	}
}
