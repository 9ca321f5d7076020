package frontier_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
)

// powerSeedEnv, when set, runs TestPowerLoss with that one seed.
const powerSeedEnv = "GENTLECRAWL_POWER_SEED"

// TestPowerLoss drives the store as a crawl does — seeds admitted, hosts
// leased by several workers at once, their URLs settled or retried, the
// links found admitted with each release, robots.txt records stored — on
// Pebble's crash-testing file system, and cuts the power at random
// moments: the store is opened again on what the disk would hold, the
// writes not yet synced dropped (all of them, or some of their blocks,
// as a disk that wrote some of them out). A change is durable once a
// synced write that followed its return has returned (Add, Release and
// PutRobots ask for the sync and do not wait for it; SetMeta waits, and
// the log is synced in order). After every power cut:
//
//   - every URL whose admission was durable is queued or done, none lost;
//   - every URL whose release was durable is done, not queued again;
//   - nothing is queued twice, nothing is both queued and done, nothing is
//     there that was never offered, and the hosts' counts match the queues;
//   - the robots.txt records stored durably are there.
//
// Then the crawl goes on (offering its seeds again, as a resumed crawl
// does) to the end, and every page is fetched, each at most once more
// than the number of power cuts that found it fetched but its release not
// yet durable: at most one extra fetch per URL in flight. Each seed gives
// the web, the workers, the leases, the budgets and the cuts another
// shape.
func TestPowerLoss(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, uint64(time.Now().UnixNano()%100000) + 100}
	if v := os.Getenv(powerSeedEnv); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", powerSeedEnv, v, err)
		}
		seeds = []uint64{n}
	}
	for _, seed := range seeds {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			t.Logf("%s=%d repeats this run's shape", powerSeedEnv, seed)
			runPowerLoss(t, seed)
		})
	}
}

// powerWeb is the web a power-loss crawl crawls: pages on a few hosts,
// each linking to others, some of them missing (404).
type powerWeb struct {
	hosts     []string
	links     map[string][]string // page URL → the URLs it links to
	seeds     []string
	reachable map[string]bool // from the seeds
	perHost   map[string]int  // reachable URLs per host
}

func powerURL(host string, page int) string { return "https://" + host + "/p" + strconv.Itoa(page) }

func newPowerWeb(rng *rand.Rand) *powerWeb {
	w := &powerWeb{links: map[string][]string{}, reachable: map[string]bool{}, perHost: map[string]int{}}
	nHosts, pages := 2+rng.IntN(6), 10+rng.IntN(80)
	for i := range nHosts {
		w.hosts = append(w.hosts, "h"+strconv.Itoa(i)+".test")
	}
	for _, h := range w.hosts {
		for p := range pages {
			var out []string
			for range 1 + rng.IntN(6) {
				to := h
				if rng.IntN(4) == 0 {
					to = w.hosts[rng.IntN(nHosts)]
				}
				out = append(out, powerURL(to, rng.IntN(pages+pages/8+1))) // past the last page: missing
			}
			w.links[powerURL(h, p)] = out
		}
	}
	for _, h := range w.hosts[:1+rng.IntN(nHosts)] {
		w.seeds = append(w.seeds, powerURL(h, 0))
	}
	todo := slices.Clone(w.seeds)
	for _, s := range w.seeds {
		w.reachable[s] = true
	}
	for len(todo) > 0 {
		u := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, l := range w.links[u] {
			if !w.reachable[l] {
				w.reachable[l] = true
				todo = append(todo, l)
			}
		}
	}
	for u := range w.reachable {
		w.perHost[powerHost(u)]++
	}
	return w
}

func powerHost(u string) string {
	rest := u[len("https://"):]
	for i := range len(rest) {
		if rest[i] == '/' {
			return rest[:i]
		}
	}
	return rest
}

func powerCand(u string) frontier.Candidate {
	return frontier.Candidate{Host: powerHost(u), Canonical: u, Entry: frontier.Entry{URL: u}}
}

// powerOp is a change that returned, which the next synced write makes
// durable.
type powerOp struct {
	offered []string // URLs offered: seen once durable
	settled []string // URLs released done
	robots  string   // origin whose record was stored
}

// powerModel is what the crawl knows, shared by its workers.
type powerModel struct {
	mu      sync.Mutex
	cut     bool // the power is cut: what returns now is not the crawl's
	ops     int
	offered map[string]bool // ever, in any call
	fetches map[string]int  // successful fetches, across power cuts
	// allowance counts, per URL, the power cuts that found it fetched and
	// its release not known durable: each may cost one more fetch.
	allowance map[string]int

	// Since the last cut: the changes returned and not yet known durable,
	// and what is.
	acked       []powerOp
	admitted    map[string]bool // durably seen: queued or done
	done        map[string]bool // durably done
	robots      map[string]bool // origins whose record is durable
	robotsAsked map[string]bool // origins whose record was stored (or asked for)
	sync        int             // the last "sync" meta value known durable
	over        bool            // a claim found nothing queued: the crawl is over
}

// powerShape is the shape of one seed's crawl.
type powerShape struct {
	workers  int
	leaseMax int
	retryP   float64 // a fetch fails for now and is retried
	partialP float64 // a release leaves some of its URLs queued
	syncP    float64 // worker 0 makes a synced write after an op
	flushP   float64 // a worker flushes the memtable after an op
	pauseP   float64 // a release is a pause
	limits   frontier.Limits
	idle     int // idle hosts the store keeps in memory (0: the default)
}

var powerNow = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

const powerDir = "/job/store"

func runPowerLoss(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 29))
	web := newPowerWeb(rng)
	sh := powerShape{
		workers:  1 + rng.IntN(4),
		leaseMax: 1 + rng.IntN(5),
		retryP:   float64(rng.IntN(25)) / 100,
		partialP: float64(rng.IntN(40)) / 100,
		syncP:    float64(2+rng.IntN(10)) / 100,
		flushP:   float64(rng.IntN(3)) / 100,
		pauseP:   float64(rng.IntN(30)) / 100,
	}
	// A budget of exactly the URLs the crawl will offer: one counted
	// twice after a cut would be refused, and the crawl would miss it.
	switch rng.IntN(3) {
	case 1:
		for _, n := range web.perHost {
			sh.limits.HostBudget = max(sh.limits.HostBudget, n)
		}
	case 2:
		sh.limits.CrawlBudget = len(web.reachable)
	}
	if rng.IntN(2) == 0 {
		// Few: hosts are evicted and read again all along.
		sh.idle = 1 + rng.IntN(4)
	}
	cuts := 2 + rng.IntN(4)
	t.Logf("%d hosts, %d URLs reachable from %d seeds; %d workers, leases of %d, %d power cuts; %+v",
		len(web.hosts), len(web.reachable), len(web.seeds), sh.workers, sh.leaseMax, cuts, sh)

	// About the number of changes a crawl makes, spread over the phases
	// between cuts.
	phaseOps := max(1, 2*len(web.reachable)/(sh.leaseMax+1)/(cuts+1))
	m := &powerModel{
		offered: map[string]bool{}, fetches: map[string]int{}, allowance: map[string]int{},
		admitted: map[string]bool{}, done: map[string]bool{}, robots: map[string]bool{}, robotsAsked: map[string]bool{},
	}
	fs := vfs.NewCrashableMem()
	s, err := frontier.Open(powerDir, frontier.Options{FS: fs, Limits: sh.limits, ExpectedURLs: 1000, IdleHosts: sh.idle})
	if err != nil {
		t.Fatal(err)
	}
	var errs chan error
	for cut := 0; cut <= cuts; cut++ {
		last := cut == cuts
		// The crawl starts, or resumes: its seeds are offered again.
		m.offer(web.seeds)
		if _, err := s.Add(ctx, frontier.Batch{Add: candidates(web.seeds)}); err != nil {
			t.Fatal(err)
		}
		m.ack(powerOp{offered: web.seeds})
		// The cut comes after a random number of changes, so that the cuts
		// fall all along the crawl (which does again what a cut lost).
		cutAt := 1 + rng.IntN(2*phaseOps)
		m.ops = 0
		crawled := make(chan struct{})
		cutNow := make(chan powerDurable, 1)
		errs = make(chan error, sh.workers)
		var wg sync.WaitGroup
		for w := range sh.workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				wrng := rand.New(rand.NewPCG(seed, uint64(cut*100+w)))
				err := m.crawl(s, web, sh, w, wrng, func(ops int) {
					// Under m.mu: the worker that made the cutAt-th change
					// cuts the power. The others stop at their next change,
					// and may be in the middle of one when the disk is
					// copied.
					if !last && ops == cutAt {
						cutNow <- m.cutLocked()
					}
				})
				if err != nil {
					errs <- fmt.Errorf("worker %d: %w", w, err)
				}
			}()
		}
		go func() { wg.Wait(); close(crawled) }()
		if last {
			<-crawled
			break
		}
		var durable powerDurable
		select {
		case durable = <-cutNow:
		case <-crawled:
			select {
			case durable = <-cutNow:
			default:
				// Over before the cut: it comes now.
				m.mu.Lock()
				durable = m.cutLocked()
				m.mu.Unlock()
			}
		}
		for range rng.IntN(20) {
			runtime.Gosched()
		}
		pct := []int{0, 0, 10, 50, 90}[rng.IntN(5)]
		crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: pct, RNG: rng})
		<-crawled
		select {
		case err := <-errs:
			t.Fatal(err)
		default:
		}
		s.Close() // the old timeline's store: whatever it says is gone with it
		fs = crashed
		s, err = frontier.Open(powerDir, frontier.Options{FS: fs, Limits: sh.limits, ExpectedURLs: 1000, IdleHosts: sh.idle})
		if err != nil {
			t.Fatalf("cut %d (%d%% of the unsynced blocks kept): reopen: %v", cut+1, pct, err)
		}
		m.recovered(t, s, web, durable, fmt.Sprintf("cut %d (%d%% of the unsynced blocks kept)", cut+1, pct))
		if t.Failed() {
			s.Close()
			return
		}
	}
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	// The crawl is over. Close syncs everything: the disk holds it all,
	// whenever the power goes after.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = frontier.Open(powerDir, frontier.Options{FS: fs.CrashClone(vfs.CrashCloneCfg{}), Limits: sh.limits, ExpectedURLs: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pending, done := contents(t, s)
	if len(pending) > 0 {
		t.Errorf("the crawl is over, and %d URLs are still queued: %v", len(pending), firstFew(pending))
	}
	for u := range web.reachable {
		if !done[u] {
			t.Errorf("%s never done: lost", u)
		}
		switch n := m.fetches[u]; {
		case n == 0:
			t.Errorf("%s never fetched", u)
		case n > 1+m.allowance[u]:
			t.Errorf("%s fetched %d times; %d power cuts found it in flight", u, n, m.allowance[u])
		}
	}
	for u := range done {
		if !web.reachable[u] {
			t.Errorf("%s done, but no page links to it", u)
		}
	}
	extra := 0
	for _, n := range m.fetches {
		extra += n - 1
	}
	t.Logf("%d URLs done, %d fetched again after a power cut", len(done), extra)
}

// cutLocked cuts the power, under m.mu: what returns from now on is lost
// with the store's disk. It returns what was durable, and counts the URLs
// that were fetched without their release being durable: each may be
// fetched once more.
func (m *powerModel) cutLocked() powerDurable {
	m.cut = true
	for u, n := range m.fetches {
		if n > 0 && !m.done[u] {
			m.allowance[u]++
		}
	}
	return powerDurable{admitted: clone(m.admitted), done: clone(m.done), robots: clone(m.robots), sync: m.sync}
}

// powerDurable is what was durable when the power was cut.
type powerDurable struct {
	admitted, done, robots map[string]bool
	sync                   int
}

func clone(m map[string]bool) map[string]bool {
	c := make(map[string]bool, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func candidates(urls []string) []frontier.Candidate {
	out := make([]frontier.Candidate, len(urls))
	for i, u := range urls {
		out[i] = powerCand(u)
	}
	return out
}

func firstFew[T any](s []T) []T { return s[:min(len(s), 5)] }

// offer notes URLs about to be offered.
func (m *powerModel) offer(urls []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, u := range urls {
		m.offered[u] = true
	}
}

// ack notes a change that returned, unless the power was cut meanwhile.
func (m *powerModel) ack(op powerOp) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cut {
		return false
	}
	m.acked = append(m.acked, op)
	return true
}

// crawl is one worker: it claims a host, fetches its URLs, releases it,
// until the crawl is over or the power is cut. afterOp is told the number
// of changes made so far.
func (m *powerModel) crawl(s *frontier.Store, web *powerWeb, sh powerShape, w int, rng *rand.Rand, afterOp func(int)) error {
	op := func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.cut {
			return false
		}
		m.ops++
		afterOp(m.ops)
		return !m.cut
	}
	for {
		m.mu.Lock()
		stop := m.cut || m.over
		m.mu.Unlock()
		if stop {
			return nil
		}
		l, next, err := s.Claim(ctx, frontier.ClaimRequest{Now: powerNow, Max: sh.leaseMax})
		if err != nil {
			return err
		}
		if l == nil {
			if next.IsZero() {
				// Nothing queued, leased or not: no release can add more.
				m.mu.Lock()
				m.over = true
				m.mu.Unlock()
				return nil
			}
			runtime.Gosched() // every host is leased: wait for a release
			continue
		}
		origin := "https://" + l.Host
		m.mu.Lock()
		ask := !m.robotsAsked[origin]
		m.robotsAsked[origin] = true
		m.mu.Unlock()
		if ask {
			if err := s.PutRobots(ctx, origin, &frontier.RobotsRecord{Checked: powerNow, Source: "test"}); err != nil {
				return err
			}
			if !m.ack(powerOp{robots: origin}) || !op() {
				return nil
			}
		}
		req := frontier.ReleaseRequest{Lease: l, Next: powerNow, Pause: rng.Float64() < sh.pauseP}
		partial := rng.Float64() < sh.partialP
		var o powerOp
		for _, it := range l.Items {
			if partial && rng.IntN(2) == 0 {
				continue // stays queued as it is
			}
			if it.Attempts < 2 && rng.Float64() < sh.retryP {
				r := frontier.Result{Item: it, Outcome: frontier.Retry}
				if rng.IntN(2) == 0 {
					r.RetryAt = powerNow.Add(-time.Second) // later than due: queued again
				}
				req.Results = append(req.Results, r)
				continue
			}
			links, exists := web.links[it.URL]
			r := frontier.Result{Item: it, Outcome: frontier.Fetched, Canonical: it.URL,
				History: &frontier.History{URL: it.URL, Status: 200, Fetched: powerNow}}
			if !exists {
				r.Outcome, r.History.Status = frontier.Gone, 404
			}
			r.Add = candidates(links)
			req.Results = append(req.Results, r)
			o.offered = append(o.offered, links...)
			o.settled = append(o.settled, it.URL)
		}
		m.mu.Lock()
		if m.cut {
			m.mu.Unlock()
			return nil
		}
		for _, u := range o.settled {
			m.fetches[u]++
		}
		for _, u := range o.offered {
			m.offered[u] = true
		}
		m.mu.Unlock()
		if _, err := s.Release(ctx, req); err != nil {
			return err
		}
		if !m.ack(o) || !op() {
			return nil
		}
		if sh.flushP > 0 && rng.Float64() < sh.flushP {
			if err := s.FlushForTest(); err != nil {
				return err
			}
		}
		if w == 0 && rng.Float64() < sh.syncP {
			if err := m.syncPoint(s); err != nil {
				return err
			}
		}
	}
}

// syncPoint makes a synced write: every change that returned before it is
// durable once it returns.
func (m *powerModel) syncPoint(s *frontier.Store) error {
	m.mu.Lock()
	n := len(m.acked)
	value := m.sync + 1
	m.mu.Unlock()
	if err := s.SetMeta(ctx, "sync", strconv.Itoa(value)); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cut {
		return nil
	}
	for _, op := range m.acked[:n] {
		for _, u := range op.offered {
			m.admitted[u] = true
		}
		for _, u := range op.settled {
			m.done[u] = true
		}
		if op.robots != "" {
			m.robots[op.robots] = true
		}
	}
	m.acked = append(m.acked[:0], m.acked[n:]...)
	m.sync = value
	return nil
}

// contents returns the URLs queued, in key order, and those done.
func contents(t *testing.T, s *frontier.Store) (pending []string, done map[string]bool) {
	t.Helper()
	pending, err := s.QueueForTest()
	if err != nil {
		t.Fatal(err)
	}
	done = map[string]bool{}
	err = s.EachHistory(ctx, func(h *frontier.History) error {
		if done[h.URL] {
			return fmt.Errorf("two histories for %s", h.URL)
		}
		done[h.URL] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pending, done
}

// recovered checks the store reopened after a power cut against what was
// durable, and makes what it holds the crawl's durable state.
func (m *powerModel) recovered(t *testing.T, s *frontier.Store, web *powerWeb, d powerDurable, when string) {
	t.Helper()
	pending, done := contents(t, s)
	queued := map[string]bool{}
	perHost := map[string]int{}
	for _, u := range pending {
		if queued[u] {
			t.Errorf("%s: %s queued twice", when, u)
		}
		queued[u] = true
		perHost[powerHost(u)]++
		if done[u] {
			t.Errorf("%s: %s both queued and done", when, u)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for u := range queued {
		if !m.offered[u] {
			t.Errorf("%s: %s queued, never offered", when, u)
		}
	}
	for u := range done {
		if !m.offered[u] {
			t.Errorf("%s: %s done, never offered", when, u)
		}
		if m.fetches[u] == 0 {
			t.Errorf("%s: %s done, never fetched", when, u)
		}
	}
	// A URL that two changes offer at once is admitted by the one that
	// decides first, which may reach the disk after the other: when the
	// power takes the first and leaves the second, the URL is neither
	// queued nor done — and the page whose release it was a link of is
	// queued again, to be fetched again and offer it again.
	refetched := map[string]bool{}
	for _, u := range web.seeds {
		refetched[u] = true // offered again when the crawl resumes
	}
	for u := range queued {
		for _, l := range web.links[u] {
			refetched[l] = true
		}
	}
	excused := 0
	for u := range d.admitted {
		if !queued[u] && !done[u] {
			if !refetched[u] {
				t.Errorf("%s: %s was admitted durably, and is neither queued nor done, nor linked from a page queued: lost", when, u)
			}
			excused++
		}
	}
	for u := range d.done {
		if !done[u] {
			t.Errorf("%s: %s was released durably, and is not done", when, u)
		}
	}
	for origin := range d.robots {
		if r, err := s.Robots(ctx, origin); err != nil || r == nil {
			t.Errorf("%s: the robots.txt record of %s, stored durably: %v, %v", when, origin, r, err)
		}
	}
	if v, err := s.Meta(ctx, "sync"); err != nil {
		t.Error(err)
	} else if n, _ := strconv.Atoi(v); n < d.sync {
		t.Errorf("%s: meta sync = %q after %d was written and synced", when, v, d.sync)
	}
	hosts, err := s.Hosts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	counted := map[string]int{}
	for _, h := range hosts {
		counted[h.Host] = h.Pending
		if h.Leased {
			t.Errorf("%s: %s leased in a store just opened", when, h.Host)
		}
	}
	for _, h := range web.hosts {
		if counted[h] != perHost[h] {
			t.Errorf("%s: host %s counts %d URLs queued, its queue holds %d", when, h, counted[h], perHost[h])
		}
	}
	t.Logf("%s: %d queued, %d done; %d admitted and %d done durably before the cut (%d of them admitted by a change lost, whose page is queued again)",
		when, len(pending), len(done), len(d.admitted), len(d.done), excused)

	// What the store holds now is on the disk: the next cut keeps it.
	m.cut, m.over, m.acked = false, false, nil
	m.admitted, m.done = map[string]bool{}, map[string]bool{}
	for u := range queued {
		m.admitted[u] = true
	}
	for u := range done {
		m.admitted[u], m.done[u] = true, true
	}
	m.robots, m.robotsAsked = map[string]bool{}, map[string]bool{}
	for _, h := range web.hosts {
		origin := "https://" + h
		if r, err := s.Robots(ctx, origin); err == nil && r != nil {
			m.robots[origin], m.robotsAsked[origin] = true, true
		}
	}
	if v, err := s.Meta(ctx, "sync"); err == nil {
		m.sync, _ = strconv.Atoi(v)
	}
}
