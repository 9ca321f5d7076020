package hostload_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// windowHost refuses beyond n requests per window: a fixed window (the
// count resets at every multiple of window, as many API gateways and CDN
// rules count) or a sliding one (the last window, as a log of requests
// would count).
func windowHost(n int, window time.Duration, sliding bool, status int, ra time.Duration, seed uint64) simHost {
	var mu sync.Mutex
	var log []time.Time
	var count int
	var windowStart time.Time
	t0 := time.Now()
	r := rand.New(rand.NewPCG(seed, 3))
	return simHost{name: "window", why: "no floor", serve: func(ctx context.Context) (int, time.Duration, time.Duration) {
		lat := jittered(r, &mu, 3*time.Millisecond)
		time.Sleep(lat)
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if sliding {
			for len(log) > 0 && now.Sub(log[0]) >= window {
				log = log[1:]
			}
			if len(log) >= n {
				return status, ra, lat
			}
			log = append(log, now)
			return 200, 0, lat
		}
		if ws := t0.Add(now.Sub(t0).Truncate(window)); !ws.Equal(windowStart) {
			windowStart, count = ws, 0
		}
		if count >= n {
			return status, ra, lat
		}
		count++
		return 200, 0, lat
	}}
}

// TestSimWindowLimits: limits counted per window rather than by a leaky
// bucket (HAProxy's request rates, CDN and API-gateway rules), shapes the
// control was not built on. A window limiter lets a burst of a whole window
// through and then refuses everything until it reopens, so the crawler
// touches it about once a window, a few times in a row: more than the
// leaky bucket's 1%, but it must neither stay away for long after a
// window closes (before the pauses of 429s doubled from a second or two,
// the third refusal in a row paused the host 30 s, and a 10 s window got
// 40% of its limit) nor keep hammering it.
func TestSimWindowLimits(t *testing.T) {
	for _, tc := range []struct {
		n       int
		window  time.Duration
		sliding bool
	}{
		{50, 10 * time.Second, false},
		{300, time.Minute, false},
		{20, 2 * time.Second, false},
		{50, 10 * time.Second, true},
		{300, time.Minute, true},
		{40, time.Second, true},
	} {
		for _, ra := range []time.Duration{0, 2 * time.Second} {
			t.Run(fmt.Sprintf("%d per %v sliding=%v RA=%v", tc.n, tc.window, tc.sliding, ra), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					h := windowHost(tc.n, tc.window, tc.sliding, 429, ra, uint64(tc.n))
					log := simulate(t, []simHost{h}, 2, 5*time.Minute)
					w := measure(log, time.Minute, 5*time.Minute)
					limit := float64(tc.n) / tc.window.Seconds()
					share := float64(w.ok) / w.seconds / limit
					t.Logf("%.1f%% of the limit answered 200; %d of %d refused", 100*share, w.refused, w.all)
					if share < 0.7 {
						t.Errorf("%.1f%% of the limit answered 200, want ≥ 70%%", 100*share)
					}
					if w.refused*100 > 6*w.all {
						t.Errorf("%d of %d requests refused, want ≤ 6%%", w.refused, w.all)
					}
				})
			})
		}
	}
}
