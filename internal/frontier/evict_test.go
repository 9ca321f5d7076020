package frontier_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
)

// TestIdleHostsEvicted drives two stores with the same crawl over many
// hosts, one keeping every host in memory and one keeping at most a few
// idle ones: every admission, claim (which host, which URLs, and when the
// next is due when none is) and release gives the same answer in both —
// budgets, pauses and the crawler's own pacing hold for hosts evicted and
// read again — and the second never keeps more idle hosts than allowed,
// but for those whose pacing (in memory only) has not passed yet: a number
// bounded by the hosts released within one gap, not by all hosts seen.
// Reopened, both stores hold the same queues.
func TestIdleHostsEvicted(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 35))
			var limits frontier.Limits
			switch seed % 3 {
			case 1:
				limits.HostBudget = 3 + rng.IntN(8)
			case 2:
				limits.CrawlBudget = 100 + rng.IntN(200)
			}
			idleMax := 1 + rng.IntN(4)
			fs := vfs.NewMem()
			all, err := frontier.Open("/all", frontier.Options{FS: fs, Limits: limits})
			if err != nil {
				t.Fatal(err)
			}
			few, err := frontier.Open("/few", frontier.Options{FS: fs, Limits: limits, IdleHosts: idleMax})
			if err != nil {
				t.Fatal(err)
			}
			stores := []*frontier.Store{all, few}
			same := func(what string, f func(s *frontier.Store) any) {
				t.Helper()
				a, b := f(all), f(few)
				if !reflect.DeepEqual(a, b) {
					t.Fatalf("%s: every host in memory: %v; %d idle at most: %v", what, a, idleMax, b)
				}
				if _, idle, pacing := few.HostsInMemoryForTest(); idle > idleMax+pacing {
					t.Fatalf("%s: %d idle hosts in memory, %d of them for their pacing; allowed %d more", what, idle, pacing, idleMax)
				}
			}
			hosts := 20 + rng.IntN(40)
			now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
			next := 0
			leases := map[*frontier.Store][]*frontier.Lease{}
			evicted := 0
			for op := range 600 {
				now = now.Add(time.Duration(rng.IntN(1500)) * time.Millisecond)
				switch r := rng.IntN(10); {
				case r < 3:
					var b []frontier.Candidate
					for range 1 + rng.IntN(6) {
						h := "h" + strconv.Itoa(rng.IntN(hosts)) + ".test"
						u := "https://" + h + "/p" + strconv.Itoa(next)
						next++
						// Due times and gaps to the nanosecond: no two
						// hosts are ready at once, so the order of claims
						// is the stores' to decide, not a tie's.
						due := now.Add(time.Duration(rng.Int64N(int64(time.Second))))
						b = append(b, frontier.Candidate{Host: h, Canonical: u, Due: due, Entry: frontier.Entry{URL: u}})
					}
					same(fmt.Sprintf("op %d: add", op), func(s *frontier.Store) any {
						added, err := s.Add(ctx, frontier.Batch{Add: slices.Clone(b)})
						if err != nil {
							t.Fatal(err)
						}
						return added
					})
				default:
					// Claim, then release with the URLs settled, a pause
					// sometimes, pacing always.
					max := 1 + rng.IntN(3)
					pause := rng.IntN(4) == 0
					gap := time.Duration(rng.Int64N(int64(5 * time.Second)))
					retry := rng.IntN(4) == 0
					same(fmt.Sprintf("op %d: claim", op), func(s *frontier.Store) any {
						l, at, err := s.Claim(ctx, frontier.ClaimRequest{Now: now, Max: max})
						if err != nil {
							t.Fatal(err)
						}
						if l == nil {
							return at.UnixNano()
						}
						leases[s] = append(leases[s], l)
						var urls []string
						for _, it := range l.Items {
							urls = append(urls, it.URL)
						}
						return fmt.Sprint(l.Host, urls)
					})
					same(fmt.Sprintf("op %d: release", op), func(s *frontier.Store) any {
						if len(leases[s]) == 0 {
							return nil
						}
						l := leases[s][0]
						leases[s] = leases[s][1:]
						req := frontier.ReleaseRequest{Lease: l, Next: now.Add(gap)}
						if pause {
							req.Next, req.Pause = now.Add(30*time.Second+gap), true
						}
						for i, it := range l.Items {
							res := frontier.Result{Item: it, Outcome: frontier.Gone}
							if retry && i == 0 {
								res = frontier.Result{Item: it, Outcome: frontier.Retry, RetryAt: now.Add(gap)}
							}
							req.Results = append(req.Results, res)
						}
						added, err := s.Release(ctx, req)
						if err != nil {
							t.Fatal(err)
						}
						return added
					})
				}
				n, _, _ := few.HostsInMemoryForTest()
				if m, _, _ := all.HostsInMemoryForTest(); n < m {
					evicted++
				}
			}
			if evicted == 0 {
				t.Fatal("no host was ever evicted: the test proves nothing")
			}
			for _, s := range stores {
				for _, l := range leases[s] {
					req := frontier.ReleaseRequest{Lease: l, Next: now}
					for _, it := range l.Items {
						req.Results = append(req.Results, frontier.Result{Item: it, Outcome: frontier.Retry, RetryAt: now})
					}
					if _, err := s.Release(ctx, req); err != nil {
						t.Fatal(err)
					}
				}
			}
			var queues [2][]string
			for i, s := range stores {
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				dir := []string{"/all", "/few"}[i]
				s, err := frontier.Open(dir, frontier.Options{FS: fs, Limits: limits, IdleHosts: idleMax})
				if err != nil {
					t.Fatal(err)
				}
				if queues[i], err = s.QueueForTest(); err != nil {
					t.Fatal(err)
				}
				if _, idle, pacing := s.HostsInMemoryForTest(); idle > idleMax+pacing {
					t.Errorf("reopened %s: %d idle hosts in memory, allowed %d", dir, idle, idleMax)
				}
				s.Close()
			}
			if !slices.Equal(queues[0], queues[1]) {
				t.Errorf("queues differ after reopening:\n%q\n%q", queues[0], queues[1])
			}
			t.Logf("%d hosts, %d idle kept; %d of 600 steps with hosts evicted", hosts, idleMax, evicted)
		})
	}
}
