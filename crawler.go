package gentlecrawl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/fetch"
	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
	"github.com/gentlecrawl/gentlecrawl/internal/hook"
	"github.com/gentlecrawl/gentlecrawl/internal/hostload"
	"github.com/gentlecrawl/gentlecrawl/internal/metrics"
	"github.com/gentlecrawl/gentlecrawl/internal/reqlog"
	"github.com/gentlecrawl/gentlecrawl/urlnorm"
	"github.com/gentlecrawl/gentlecrawl/warc"
)

// ErrJobInUse is returned by Run when another crawl holds the job directory.
var ErrJobInUse = errors.New("gentlecrawl: job directory is in use by another crawl")

// Crawler runs one crawl job. Create it with New and call Run once;
// Progress and MetricsHandler may be called from any goroutine, before Run
// or while it runs.
type Crawler struct {
	cfg     Config
	seeds   []*url.URL
	inScope scopeOf

	// Set up by Run.
	store  frontier.Frontier
	client *fetch.Client
	warc   *warc.Writer
	// warcSync says the WARC files are fsynced before the frontier hears
	// their pages are done (not in tmpfs, which a power loss empties).
	warcSync bool
	reqlog   *reqlog.Writer // the job's request log for this run
	// metrics counts requests for MetricsHandler, from its first call;
	// nil before.
	metrics   atomic.Pointer[metrics.Metrics]
	metricsMu sync.Mutex // creating metrics
	sched     *hostload.Scheduler
	stats     *stats
	robots    robotsCache
	// validators learns which validators each origin honours.
	validators validatorBook
	// rate spaces every request of the crawl (Config.MaxRate); nil: no budget.
	rate *rateGate
	// demand plans the revisits of a continuous crawl.
	demand *demand
	// shared is set in a crawl shared with other crawlers (Config.Frontier).
	shared *shared
	// stopAcquiring makes the workers take no new host (set by Run).
	stopAcquiring context.CancelFunc
	// helpers hands a function to an idle helper goroutine (runHelper);
	// closing helpersDone, when Run's workers are done, ends them.
	helpers     chan func()
	helpersDone chan struct{}

	extPolicy *fetch.ExtensionPolicy // nil: every extension is fetched
	space     *space
	// offered are links this crawl has queued (or found seen) already.
	offered offeredLinks

	resumed      bool         // the job had run before
	pagesStarted atomic.Int64 // for MaxPages
	hostsInTurn  atomic.Int32 // inTurn
	stopReason   atomic.Value // string
	running      atomic.Bool
	// onPageErr is the error of Config.OnPage that stopped the crawl.
	onPageErr atomic.Pointer[onPageError]
}

// New checks cfg and returns a crawler. It touches nothing on disk: a bad
// configuration fails here, before any file is written.
func New(cfg Config) (*Crawler, error) {
	cfg, seeds, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &Crawler{cfg: cfg, seeds: seeds, stats: newStats(), sched: hostload.NewScheduler(hostload.LoadConfig{MaxPerAddr: cfg.MaxPerAddr})}
	c.robots.hosts = make(map[string]*hostRobots)
	c.space = newSpace()
	c.rate = newRateGate(cfg.MaxRate)
	c.demand = newDemand(cfg)
	if !cfg.AllTypes {
		c.extPolicy = fetch.DefaultExtensionPolicy()
	}
	return c, nil
}

// Run crawls until there is nothing left to do, the page budget is spent or
// ctx is done, and returns what it did. The job directory is locked for the
// duration. An interrupted crawl is resumed by running the same job again.
func (c *Crawler) Run(ctx context.Context) (*Summary, error) {
	if !c.running.CompareAndSwap(false, true) {
		return nil, errors.New("gentlecrawl: Run called twice")
	}
	unlock, err := c.openJob(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	defer c.client.Close()

	if err := c.rememberSeeds(ctx); err != nil {
		c.closeOutputs()
		return nil, err
	}
	if err := c.admitSeeds(ctx); err != nil {
		c.closeOutputs()
		return nil, err
	}
	if err := c.validators.load(ctx, c.store); err != nil {
		c.closeOutputs()
		return nil, err
	}
	var hosts []frontier.HostInfo
	if c.shared == nil {
		// A shared crawl's hosts come from the feeder, claim by claim.
		hosts, err = c.store.Hosts(ctx)
	}
	if err == nil && c.cfg.Continuous {
		if err = c.planRevisits(ctx, hosts); err == nil {
			hosts, err = c.store.Hosts(ctx)
		}
	}
	if err != nil {
		c.closeOutputs()
		return nil, err
	}
	if len(hosts) == 0 && len(c.seeds) == 0 && c.shared == nil {
		c.closeOutputs()
		return nil, errors.New("nothing to do: no URLs are queued in this job (give seed URLs, or --recrawl to fetch its URLs again)")
	}
	for _, h := range hosts {
		// Not before the gap since a request that may have been in flight
		// when the last run stopped, the next allowed time the last run
		// recorded, or the host's first URL's due time.
		at := c.resumeAfter(ctx, h.Host)
		for _, t := range []time.Time{h.Next, h.Due} {
			if t.After(at) {
				at = t
			}
		}
		c.sched.AddAt(h.Host, h.Pending, at)
	}
	c.cfg.Logger.Info("crawl starting", "job", c.cfg.JobDir, "hosts", len(hosts), "recrawl", c.cfg.Recrawl, "continuous", c.cfg.Continuous)

	// Stopping early (the page budget is spent, the store failed, the time
	// given is up) cancels acquireCtx only: workers take no new host, and
	// the requests already sent are finished and recorded rather than
	// thrown away.
	acquireCtx, stopAcquiring := context.WithCancel(ctx)
	defer stopAcquiring()
	c.stopAcquiring = stopAcquiring
	if c.cfg.For > 0 {
		timer := time.AfterFunc(c.cfg.For, func() {
			c.setStop("time limit")
			stopAcquiring()
		})
		defer timer.Stop()
	}
	var wg sync.WaitGroup
	feeding := make(chan struct{})
	if c.shared != nil {
		c.sched.SetOpen(true)
		go func() {
			defer close(feeding)
			c.feed(acquireCtx)
		}()
	} else {
		close(feeding)
	}
	c.helpers, c.helpersDone = make(chan func()), make(chan struct{})
	for range c.cfg.Workers {
		wg.Go(func() { c.work(ctx, acquireCtx, stopAcquiring) })
	}
	wg.Wait()
	close(c.helpersDone) // every helper is idle: the workers waited for them
	stopAcquiring()
	<-feeding
	c.giveBack()

	sum := c.finish(ctx)
	sum.Run = c.reqlog.Run
	c.logQueues(ctx)
	if err := c.validators.save(context.WithoutCancel(ctx), c.store); err != nil && sum.Stopped == "finished" {
		sum.Stopped = "error: " + err.Error()
	}
	if err := c.closeOutputs(); err != nil {
		return &sum, err
	}
	sum.WARCFiles = c.warc.Files()
	if err := c.appendRunLog(&sum); err != nil {
		return &sum, err
	}
	if pe := c.onPageErr.Load(); pe != nil {
		return &sum, pe
	}
	return &sum, nil
}

// openJob creates and locks the job directory and opens the store, the WARC
// writer and the HTTP client.
func (c *Crawler) openJob(ctx context.Context) (unlock func(), err error) {
	dir := c.cfg.JobDir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create job directory: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cannot use job directory %s: %w", dir, err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s", ErrJobInUse, dir)
		}
		return nil, fmt.Errorf("cannot lock job directory %s: %w", dir, err)
	}
	fail := func(err error) (func(), error) {
		if c.store != nil {
			c.closeStore()
		}
		lock.Close()
		return nil, err
	}
	lock.Truncate(0)
	fmt.Fprintf(lock, "%d\n", os.Getpid())

	if f := c.cfg.Frontier; f != nil {
		if err := f.acquire(); err != nil {
			return fail(err)
		}
		pg := f.pg
		c.store = pg
		c.shared = &shared{frontier: f, pg: pg, claimed: make(map[string]*frontier.Lease), addrs: make(map[string]string), restarts: pg.Restarts()}
		c.offered.restarts = pg.Restarts
	} else {
		store, err := frontier.Open(filepath.Join(dir, "store"), frontier.Options{Logger: c.cfg.Logger})
		if err != nil {
			return fail(err)
		}
		c.store = store
	}
	warcDir := filepath.Join(dir, "warc")
	if err := os.MkdirAll(warcDir, 0o755); err != nil {
		return fail(fmt.Errorf("cannot create %s: %w", warcDir, err))
	}
	recovered, err := warc.Recover(warcDir)
	if err != nil {
		return fail(err)
	}
	for _, r := range recovered {
		c.cfg.Logger.Info("WARC file left by an earlier run closed or indexed", "file", r)
	}
	c.warc, err = warc.Create(warc.Options{
		Dir:         warcDir,
		MaxFileSize: c.cfg.WARCMaxSize,
		Software:    "gentlecrawl/" + Version,
		Info: map[string]string{
			"robots":                 "obey",
			"http-header-user-agent": c.cfg.UserAgent,
			"http-header-from":       c.cfg.From,
		},
	})
	if err != nil {
		return fail(err)
	}
	c.warcSync = !frontier.Volatile(warcDir)
	c.reqlog, err = reqlog.Create(dir, time.Now())
	if err != nil {
		c.warc.Close()
		return fail(fmt.Errorf("cannot start the request log: %w", err))
	}
	fc, err := c.cfg.fetchConfig()
	if err == nil {
		fc.Logger = c.cfg.Logger
		c.client, err = fetch.New(fc)
	}
	if err != nil {
		c.warc.Close()
		c.reqlog.Close()
		return fail(err)
	}
	return func() {
		lock.Truncate(0)
		lock.Close()
	}, nil
}

// closeOutputs closes the WARC writer, the request log and the store; the
// first error wins.
func (c *Crawler) closeOutputs() error {
	err := c.warc.Close()
	if rerr := c.reqlog.Close(); err == nil {
		err = rerr
	}
	if serr := c.closeStore(); err == nil {
		err = serr
	}
	return err
}

// closeStore closes the embedded store, or ends this Run's use of a shared
// frontier, which its opener closes.
func (c *Crawler) closeStore() error {
	if c.shared != nil {
		return c.shared.frontier.release()
	}
	return c.store.Close()
}

// rememberSeeds merges the seeds of earlier runs of the job with this run's
// and sets the scope from all of them, so that resuming a job without naming
// its seeds again keeps the crawl where it was.
func (c *Crawler) rememberSeeds(ctx context.Context) error {
	if c.shared != nil {
		// Other processes may store their seeds at the same moment: the
		// database merges the lists in one statement.
		mine, _ := seedList(nil, c.seeds)
		all, err := c.shared.pg.MergeList(ctx, "seeds", mine)
		if err != nil {
			return err
		}
		_, scopeSeeds := seedList(all, nil)
		c.resumed = len(all) > len(mine)
		c.shared.scopeSeeds = len(all)
		return c.setScope(ctx, scopeSeeds)
	}
	stored, err := c.store.Meta(ctx, "seeds")
	if err != nil {
		return err
	}
	var prev []string
	c.resumed = stored != ""
	if stored != "" {
		if err := json.Unmarshal([]byte(stored), &prev); err != nil {
			return fmt.Errorf("job directory: corrupt list of seeds: %w", err)
		}
	}
	all, scopeSeeds := seedList(prev, c.seeds)
	if err := c.setScope(ctx, scopeSeeds); err != nil {
		return err
	}
	b, _ := json.Marshal(all)
	return c.store.SetMeta(ctx, "seeds", string(b))
}

// setScope builds the crawl's scope from its seeds and its --include and
// --exclude: those given now replace those of earlier runs; a run that
// gives none keeps them.
func (c *Crawler) setScope(ctx context.Context, scopeSeeds []*url.URL) error {
	type narrowing struct{ Include, Exclude []string }
	inc, exc := c.cfg.Include, c.cfg.Exclude
	if len(inc) == 0 && len(exc) == 0 {
		if v, err := c.store.Meta(ctx, "narrowing"); err != nil {
			return err
		} else if v != "" {
			var n narrowing
			if err := json.Unmarshal([]byte(v), &n); err != nil {
				return fmt.Errorf("job directory: corrupt scope settings: %w", err)
			}
			compile := func(res []string) ([]*regexp.Regexp, error) {
				var out []*regexp.Regexp
				for _, s := range res {
					re, err := regexp.Compile(s)
					if err != nil {
						return nil, fmt.Errorf("job directory: bad stored expression %q: %w", s, err)
					}
					out = append(out, re)
				}
				return out, nil
			}
			var err error
			if inc, err = compile(n.Include); err != nil {
				return err
			}
			if exc, err = compile(n.Exclude); err != nil {
				return err
			}
		}
	}
	text := func(res []*regexp.Regexp) []string {
		var out []string
		for _, re := range res {
			out = append(out, re.String())
		}
		return out
	}
	nb, _ := json.Marshal(narrowing{text(inc), text(exc)})
	if err := c.store.SetMeta(ctx, "narrowing", string(nb)); err != nil {
		return err
	}
	c.inScope.set(narrow(c.cfg.Scope.matcher(scopeSeeds), inc, exc))
	return nil
}

// resumeAfter is the earliest time a host may be asked in this run. In a
// resumed job any host may have had a request in flight when the last run
// stopped (or was killed) a moment ago, so each waits its gap first — the
// configured delay, or the Crawl-delay its cached robots.txt asks for.
func (c *Crawler) resumeAfter(ctx context.Context, host string) time.Time {
	if !c.resumed {
		return time.Time{}
	}
	gap := c.cfg.Delay
	for _, origin := range []string{"http://" + host, "https://" + host} {
		if r, err := c.robotsFor(ctx, origin); err == nil && r != nil && r.gap > gap {
			gap = r.gap
		}
	}
	gap, _ = floorFor(c.cfg.HostRules, host, time.Now(), gap, "")
	return hostload.After(time.Now(), gap)
}

// admitSeeds offers the seeds to the frontier and, with Recrawl, queues every
// URL of the job's history again.
func (c *Crawler) admitSeeds(ctx context.Context) error {
	if err := c.offerSeeds(ctx); err != nil {
		return err
	}
	if !c.cfg.Recrawl {
		return nil
	}
	return c.requeueHistories(ctx, func(*frontier.History, *frontier.Candidate) bool { return true })
}

// offerSeeds offers the seeds and the sitemaps given to the frontier.
func (c *Crawler) offerSeeds(ctx context.Context) error {
	var add []frontier.Candidate
	for _, u := range c.seeds {
		add = append(add, c.candidate(u, 0))
	}
	for _, s := range c.cfg.Sitemaps {
		u, _ := urlnorm.Parse(s)
		add = append(add, c.sitemapCandidate(u))
	}
	if len(add) == 0 {
		return nil
	}
	added, err := c.store.Add(ctx, frontier.Batch{Add: add})
	if err != nil {
		return err
	}
	c.countDiscovered(added)
	return nil
}

// requeueHistories puts URLs with a history back in their queues, as
// Recrawl entries (a redirect chain cut at the limit stays cut), a
// thousand at a time: those for which plan, which may set the entry's due
// time, says yes. Frontier.Add skips URLs already pending.
func (c *Crawler) requeueHistories(ctx context.Context, plan func(*frontier.History, *frontier.Candidate) bool) error {
	var batch []frontier.Candidate
	flush := func() error {
		_, err := c.store.Add(ctx, frontier.Batch{Requeue: batch})
		batch = batch[:0]
		return err
	}
	err := c.store.EachHistory(ctx, func(h *frontier.History) error {
		u, err := url.Parse(h.URL)
		if err != nil {
			return nil
		}
		cand := c.candidate(u, 0)
		cand.Recrawl = true
		cand.Hops = h.Hops
		if !plan(h, &cand) {
			return nil
		}
		batch = append(batch, cand)
		if len(batch) >= 1000 {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// politenessKey names the unit that gets one request at a time and the gap
// between requests: the host name, whatever the scheme or port, so that
// http://example.org and https://example.org — one server — share a queue.
// robots.txt rules are kept per origin (urlnorm.HostKey), as RFC 9309 says.
func politenessKey(u *url.URL) string {
	return strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
}

func (c *Crawler) countDiscovered(added frontier.Added) {
	if n := added.Total(); n > 0 {
		c.stats.update(func(s *Summary) { s.Discovered += n })
	}
}

// noteAdded tells the scheduler of URLs the frontier queued, and counts them.
func (c *Crawler) noteAdded(added frontier.Added) {
	for host, n := range added.Queued {
		c.sched.Add(host, n)
		c.demand.addFresh(host, n)
	}
	c.countDiscovered(added)
}

// work is one worker: it takes whichever host is due, makes at most one
// request to it, and gives it back with its next allowed time.
func (c *Crawler) work(ctx, acquireCtx context.Context, stop context.CancelFunc) {
	for {
		host, err := c.sched.Acquire(acquireCtx)
		if err != nil {
			if errors.Is(err, hostload.ErrDone) {
				c.setStop("finished")
			}
			return
		}
		if acquireCtx.Err() != nil {
			c.sched.Release(host, 0, time.Now(), hostload.ReasonDelay)
			return
		}
		if err := c.visit(ctx, host); err != nil {
			var pe *onPageError
			if errors.As(err, &pe) {
				c.onPageErr.CompareAndSwap(nil, pe)
			}
			if errors.Is(err, errBudgetSpent) {
				c.setStop("max-pages")
			} else if ctx.Err() == nil {
				c.cfg.Logger.Error("crawl stopped", "err", err)
				c.setStop("error: " + err.Error())
			}
			stop()
			return
		}
	}
}

func (c *Crawler) setStop(reason string) { c.stopReason.CompareAndSwap(nil, reason) }

// finish completes the summary.
func (c *Crawler) finish(ctx context.Context) Summary {
	if ctx.Err() != nil {
		c.setStop("interrupted")
	}
	reason, _ := c.stopReason.Load().(string)
	snap := c.sched.Snapshot()
	deferred := c.robots.deferredHosts()
	if reason == "finished" && len(deferred) > 0 {
		reason = "deferred"
	}
	limits := make(map[string]int64)
	for k, v := range c.client.Stats() {
		if v != 0 && k != "dns_cache_hit" && k != "dns_cache_miss" {
			limits[k] = v
		}
	}
	c.stats.update(func(s *Summary) {
		if len(limits) > 0 {
			s.FetchLimits = limits
		}
		if r := c.space.report(); len(r) > 0 {
			s.URLSpace = r
		}
		if r := c.validators.report(); len(r) > 0 {
			s.Validators = r
		}
		if c.cfg.Continuous {
			if r := c.demand.report(); len(r) > 0 {
				s.Demand = r
			}
		}
		s.Finished = time.Now()
		s.Elapsed = s.Finished.Sub(s.Started)
		s.Stopped = reason
		s.Queued = snap.Pending
		s.Deferred = deferred
	})
	return c.stats.snapshot()
}

// inTurn returns how many hosts the crawl is fetching from now: a host's
// turn starts with its first request and ends when its pages are settled.
// It may be called from any goroutine while Run runs. The command line
// sets GOMAXPROCS from it (hook.HostsInTurn).
func (c *Crawler) inTurn() int { return int(c.hostsInTurn.Load()) }

func init() {
	hook.HostsInTurn = func(c any) int { return c.(*Crawler).inTurn() }
}

// Progress returns a live view of the crawl.
func (c *Crawler) Progress() Progress {
	s := c.stats.snapshot()
	snap := c.sched.Snapshot()
	errs := 0
	for _, n := range s.Errors {
		errs += n
	}
	waiting := make(map[WaitReason]int, len(snap.Waiting))
	for r, n := range snap.Waiting {
		waiting[WaitReason(r)] += n
	}
	return Progress{
		Elapsed:     time.Since(s.Started),
		Requests:    s.Requests,
		Pages:       s.Pages,
		Errors:      errs,
		NotModified: s.NotModified,
		WireBytes:   s.WireBytes,
		Queued:      snap.Pending,
		Active:      snap.Held,
		Waiting:     waiting,
	}
}

// appendRunLog adds the summary of this run to the job's runs.jsonl.
func (c *Crawler) appendRunLog(s *Summary) error {
	f, err := os.OpenFile(filepath.Join(c.cfg.JobDir, "runs.jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(s)
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
