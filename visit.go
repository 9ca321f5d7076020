package gentlecrawl

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gentlecrawl/gentlecrawl/extract"
	"github.com/gentlecrawl/gentlecrawl/internal/fetch"
	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
	"github.com/gentlecrawl/gentlecrawl/internal/hook"
	"github.com/gentlecrawl/gentlecrawl/internal/hostload"
	"github.com/gentlecrawl/gentlecrawl/internal/urlspace"
	"github.com/gentlecrawl/gentlecrawl/urlnorm"
	"github.com/gentlecrawl/gentlecrawl/warc"
)

// errBudgetSpent stops the crawl when MaxPages fetches have been made.
var errBudgetSpent = errors.New("gentlecrawl: page budget spent")

const (
	// leaseMax is how many due URLs of a host one lease holds. A turn
	// makes one request (a few with concurrency), but may first settle
	// several URLs that need none: disallowed, invalid, duplicates.
	leaseMax = 16
	// leaseTTL outlasts any turn: in one process the scheduler already
	// gives a host to one worker at a time, and the leases of a process
	// that dies are gone when the job is opened again.
	leaseTTL = time.Hour
)

// turn is one worker's hold on a host: the frontier's lease on its due URLs
// and the results gathered so far. end gives both back.
type turn struct {
	host    string
	lease   *frontier.Lease
	results []frontier.Result
	next    int // index in lease.Items of the next URL to look at
	carried int // URLs settled by earlier leases of the same turn
	// load is the host's Load once the turn makes a request.
	load *hostload.Load
	// addrChecked says the shared crawl's per-address budget was checked.
	addrChecked bool
}

// settled counts the URLs the turn finished (retries stay queued).
func (t *turn) settled() int {
	n := t.carried
	for _, r := range t.results {
		if r.Outcome != frontier.Retry && r.Revisit.IsZero() {
			n++
		}
	}
	return n
}

// release gives the turn's lease back to the frontier with its results.
func (c *Crawler) release(ctx context.Context, t *turn, req frontier.ReleaseRequest) (frontier.Added, error) {
	req.Lease, req.Results = t.lease, t.results
	// The pages' records reach the disk before the frontier records the
	// pages done, which it makes durable within moments: otherwise a power
	// loss could keep a page done whose record was lost, and never fetch
	// it again. One fsync serves the turns released meanwhile.
	if c.warcSync && len(t.results) > 0 {
		if err := c.warc.SyncWritten(); err != nil {
			return frontier.Added{}, err
		}
	}
	epoch := c.offered.now()
	added, err := c.store.Release(ctx, req)
	if err == nil {
		for _, r := range t.results {
			if r.Outcome != frontier.Retry && !r.Item.Recrawl {
				c.demand.addFresh(t.host, -1) // a new URL settled
			}
			for i := range r.Add {
				c.offered.put(epoch, r.Add[i].URL, r.Add[i].Canonical)
			}
		}
	}
	return added, err
}

// robotsShortWait is the longest wait on an unavailable robots.txt that a
// crawl with nothing else to do sits out. A 503 with Retry-After: 2 is a
// server busy for a moment: the crawl asks again then, rather than end
// without the host. A longer wait (the default minute after a 500, which
// doubles; a Retry-After of an hour) defers the host: the crawl does not
// stay alive for it, and its summary lists it.
const robotsShortWait = 30 * time.Second

// robotsWait ends the turn of a host whose robots.txt r is unavailable,
// until r's retry: a wait like a Retry-After when it is short, a deferral
// otherwise.
func (c *Crawler) robotsWait(ctx context.Context, t *turn, r *hostRobots) error {
	if time.Until(r.retryAt) <= robotsShortWait {
		return c.end(ctx, t, r.retryAt, hostload.ReasonBackoff, false)
	}
	return c.end(ctx, t, r.retryAt, hostload.ReasonRobots, true)
}

// end releases the lease with its results and gives the host back to the
// scheduler until next; deferred says the host waits on something other
// than its own pace (an unavailable robots.txt), which the frontier does not
// keep as the host's next allowed time: a resumed crawl asks the robots
// cache again rather than wait for a host it may not need.
func (c *Crawler) end(ctx context.Context, t *turn, next time.Time, reason hostload.Reason, deferred bool) error {
	pace := next
	// In a shared crawl a deferred host's wait is kept in the frontier:
	// the other processes must not ask its robots.txt again before next.
	if (deferred && c.shared == nil) || (!deferred && reason == hostload.ReasonRobots) {
		// Not the host's own pace: a robots.txt wait is kept by the
		// scheduler alone, and may end early (Scheduler.Wake).
		pace = time.Now()
	}
	// A backoff (Retry-After, errors, slow answers) must hold after a
	// restart; the host's own pacing is worked out again by resumeAfter.
	pause := !deferred && reason == hostload.ReasonBackoff
	added, err := c.release(ctx, t, frontier.ReleaseRequest{Next: pace, Admit: c.admit, Pause: pause, Deferred: deferred, HostState: c.hostState(t)})
	if err != nil {
		c.sched.Release(t.host, 0, time.Now(), hostload.ReasonDelay)
		return c.lostLease(t.host, err)
	}
	c.noteAdded(added)
	if deferred {
		c.sched.Defer(t.host, t.settled(), next, reason)
	} else {
		c.sched.Release(t.host, t.settled(), next, reason)
	}
	return nil
}

// visit takes one turn on a held host: it leases the host's due URLs from
// the frontier, makes at most one request (a few when the host takes
// concurrency), and gives host and lease back before it returns. The
// request is the robots.txt of the next URL's origin when that is not known
// yet, else the URL itself. URLs that robots.txt disallows are settled on
// the way, without a request.
func (c *Crawler) visit(ctx context.Context, host string) error {
	if origin, ok := c.robots.takeHop(host); ok {
		return c.hopTurn(ctx, host, origin)
	}
	carried := 0
	for {
		lease, due, err := c.claimHost(ctx, host)
		if err != nil {
			c.sched.Release(host, carried, time.Now(), hostload.ReasonDelay)
			return err
		}
		if lease == nil {
			if due.IsZero() {
				// The queue is empty, or in a shared crawl the host is
				// another's or not due: forget it.
				c.forget(host)
			} else {
				// Its next URL is due later (a retry waiting).
				c.sched.Release(host, carried, due, hostload.ReasonDelay)
			}
			return nil
		}
		t := &turn{host: host, lease: lease, carried: carried}
		requested, err := c.takeTurn(ctx, t)
		if err != nil || requested {
			return err
		}
		// Every URL of the lease was settled without a request: give the
		// lease back and, still holding the host, take the next ones.
		added, err := c.release(ctx, t, frontier.ReleaseRequest{Next: time.Now(), Admit: c.admit})
		if err != nil {
			c.sched.Release(host, carried, time.Now(), hostload.ReasonDelay)
			return c.lostLease(host, err)
		}
		c.noteAdded(added)
		carried = t.settled()
	}
}

// takeTurn works through the lease's URLs until one needs a request, makes
// it, and ends the turn. It reports false, with the turn not ended, when
// every URL was settled without one.
func (c *Crawler) takeTurn(ctx context.Context, t *turn) (requested bool, err error) {
	c.hostsInTurn.Add(1)
	defer c.hostsInTurn.Add(-1)
	fail := func(err error) (bool, error) {
		if rerr := c.end(ctx, t, time.Now(), hostload.ReasonDelay, false); rerr != nil && err == nil {
			err = rerr
		}
		return true, err
	}
	settle := func(item *frontier.Item, u *url.URL, outcome frontier.Outcome) error {
		r, err := c.settledResult(ctx, item, u, outcome)
		if err == nil {
			t.results = append(t.results, r)
		}
		return err
	}
	host := t.host
	for t.next < len(t.lease.Items) {
		item := t.lease.Items[t.next]
		t.next++
		u, perr := url.Parse(item.URL)
		if perr != nil {
			if err := settle(item, nil, frontier.Invalid); err != nil {
				return fail(err)
			}
			continue
		}
		if t.settled() == 0 && c.sched.AddrOf(host) == "" {
			// The host's first request: learn its address first, so that
			// it counts against the address's budget from the start.
			if ips, err := c.client.LookupIP(ctx, u); err == nil && len(ips) > 0 {
				addr := ips[0].Unmap().String()
				if !c.sched.ClaimAddr(host, addr) {
					c.shareAddr(ctx, host, addr)
					return true, c.end(ctx, t, time.Now(), hostload.ReasonAddr, false)
				}
			}
		}
		if !t.addrChecked {
			t.addrChecked = true
			// A shared crawl's budget counts the host once the database
			// knows its address: recorded before the check, whichever
			// turn learned it.
			c.shareAddr(ctx, host, c.sched.AddrOf(host))
			if busy, err := c.addrBusy(ctx, host); err != nil {
				return fail(err)
			} else if busy {
				return true, c.end(ctx, t, time.Now().Add(addrBusyWait), hostload.ReasonAddr, false)
			}
		}
		origin := urlnorm.HostKey(u)
		r, err := c.robotsFor(ctx, origin)
		if err != nil {
			return fail(err)
		}
		if r == nil {
			next, reason, err := c.fetchRobots(ctx, origin, false)
			if err != nil {
				return fail(err)
			}
			if r := c.robots.get(origin); r != nil && r.unavailable {
				return true, c.robotsWait(ctx, t, r)
			}
			return true, c.end(ctx, t, next, reason, false)
		}
		if r.unavailable {
			return true, c.robotsWait(ctx, t, r)
		}
		if cand := c.candidate(u, item.Depth); cand.URL != item.URL && !item.AsIs {
			// Since the URL was queued, some of its parameters were found
			// not to change the content: fetch it without them — unless
			// that URL is known already.
			seen, err := c.store.Seen(ctx, cand.Canonical)
			if err != nil {
				return fail(err)
			}
			if seen {
				if err := settle(item, u, frontier.Duplicate); err != nil {
					return fail(err)
				}
				continue
			}
			if err := c.store.MarkSeen(ctx, cand.Canonical); err != nil {
				return fail(err)
			}
			if nu, err := url.Parse(cand.URL); err == nil {
				u = nu
			}
		}
		if c.fetchedStripped(u) {
			// Fetched already with a session id or a tracking token that
			// was not known for one then.
			if err := settle(item, u, frontier.Duplicate); err != nil {
				return fail(err)
			}
			continue
		}
		if !r.group.Allowed(pathQuery(u)) {
			if err := settle(item, u, frontier.Disallowed); err != nil {
				return fail(err)
			}
			continue
		}
		if c.trapSpent(item, u, true) || c.familySpent(item, u, true) {
			if err := settle(item, u, frontier.Duplicate); err != nil {
				return fail(err)
			}
			if to := c.variantTarget(item, u); to != nil {
				// The page the refused variant stands for, queued in its
				// place (dropped there if known already).
				t.results[len(t.results)-1].Add = append(t.results[len(t.results)-1].Add, *to)
			}
			continue
		}
		if c.cfg.MaxPages > 0 && c.pagesStarted.Add(1) > int64(c.cfg.MaxPages) {
			return fail(errBudgetSpent)
		}
		floor, why := floorFor(c.cfg.HostRules, host, time.Now(), r.gap, r.gapWhy)
		if c.cfg.Continuous {
			c.demand.pace(host, floor)
		}
		load := c.sched.Load(host, floor, why)
		t.load = load
		c.recallHost(t)
		if n := load.Concurrency(c.cfg.MaxPerHost); n > 1 {
			return true, c.visitMany(ctx, t, load, fetchJob{item, u}, n)
		}
		res, o, err := c.fetchPage(ctx, item, u)
		if err != nil {
			return fail(err)
		}
		t.results = append(t.results, res)
		if o.Addr != "" {
			c.noteAddr(ctx, host, o.Addr)
		}
		d := load.Observe(o)
		c.noteLoad(host, load)
		return true, c.end(ctx, t, d.Next, d.Reason, false)
	}
	return false, nil
}

type fetchJob struct {
	item *frontier.Item
	u    *url.URL
}

// visitMany is a turn with more than one request in flight to the host: a
// host with no floor that has stayed fast (hostload.Load.Concurrency). Up to
// n URLs of the lease are fetched at once, each taking a slot at the host's
// address; URLs settled without a request on the way join the results.
func (c *Crawler) visitMany(ctx context.Context, t *turn, load *hostload.Load, first fetchJob, n int) error {
	host := t.host
	jobs := []fetchJob{first}
	extra := 0
	for ; t.next < len(t.lease.Items) && len(jobs) < n; t.next++ {
		item := t.lease.Items[t.next]
		u, err := url.Parse(item.URL)
		if err != nil {
			break
		}
		r, err := c.robotsFor(ctx, urlnorm.HostKey(u))
		if err != nil || r == nil || r.unavailable || item.AsIs {
			break // its robots.txt is another turn's request
		}
		if cand := c.candidate(u, item.Depth); cand.URL != item.URL {
			break // re-keying is the single path's job
		}
		if c.trapSpent(item, u, false) || c.familySpent(item, u, false) || c.fetchedStripped(u) {
			break // so is settling a trap's URL or a duplicate
		}
		if !r.group.Allowed(pathQuery(u)) {
			res, err := c.settledResult(ctx, item, u, frontier.Disallowed)
			if err != nil {
				break
			}
			t.results = append(t.results, res)
			continue
		}
		if c.cfg.MaxPages > 0 && c.pagesStarted.Add(1) > int64(c.cfg.MaxPages) {
			break
		}
		if !c.sched.TryExtra(host) {
			break
		}
		extra++
		jobs = append(jobs, fetchJob{item, u})
	}

	type fetched struct {
		res frontier.Result
		o   hostload.Outcome
		err error
	}
	out := make([]fetched, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs[1:] {
		wg.Add(1)
		c.runHelper(func() {
			defer wg.Done()
			res, o, err := c.fetchPage(ctx, j.item, j.u)
			out[i+1] = fetched{res, o, err}
		})
	}
	// The first on this goroutine, whose stack has grown already: a new
	// one's grows again on every page (a copy of the stack each time),
	// hence the helpers for the others.
	res, o, err := c.fetchPage(ctx, jobs[0].item, jobs[0].u)
	out[0] = fetched{res, o, err}
	wg.Wait()
	for range extra {
		c.sched.ReleaseExtra(host)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].o.End.Before(out[j].o.End) })
	var d hostload.Decision
	var firstErr error
	for _, f := range out {
		if f.err != nil {
			// Interrupted or failed to record: the URL stays queued.
			firstErr = cmp.Or(firstErr, f.err)
			continue
		}
		t.results = append(t.results, f.res)
		if f.o.Addr != "" {
			c.noteAddr(ctx, host, f.o.Addr)
		}
		if next := load.Observe(f.o); next.Next.After(d.Next) || d.Next.IsZero() {
			d = next
		}
	}
	if firstErr != nil {
		if err := c.end(ctx, t, time.Now(), hostload.ReasonDelay, false); err != nil {
			return err
		}
		return firstErr
	}
	c.noteLoad(host, load)
	return c.end(ctx, t, d.Next, d.Reason, false)
}

// runHelper runs f on a helper goroutine: an idle one kept from an
// earlier turn, whose stack has grown to what fetching a page takes, or
// else a new one, which stays for later turns until Run's workers are
// done. A goroutine started for every second request of a turn grew its
// stack anew each time, a cost paid on every page.
func (c *Crawler) runHelper(f func()) {
	select {
	case c.helpers <- f:
	default:
		go c.helper(f)
	}
}

// helper runs f, then what runHelper hands it, until helpersDone closes.
func (c *Crawler) helper(f func()) {
	for {
		f()
		select {
		case f = <-c.helpers:
		case <-c.helpersDone:
			return
		}
	}
}

// pathQuery is the part of a URL that robots.txt rules match.
func pathQuery(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" || u.ForceQuery {
		p += "?" + u.RawQuery
	}
	return p
}

// settledResult is the result of a URL taken out of its queue without a
// request, its history kept.
func (c *Crawler) settledResult(ctx context.Context, item *frontier.Item, u *url.URL, outcome frontier.Outcome) (frontier.Result, error) {
	canon := item.URL
	if u != nil {
		canon = urlnorm.Canonical(u)
	}
	h, err := c.store.History(ctx, canon)
	if err != nil {
		return frontier.Result{}, err
	}
	if h == nil {
		h = &frontier.History{URL: item.URL}
	}
	if outcome == frontier.Disallowed {
		c.stats.update(func(s *Summary) { s.Disallowed++ })
	}
	return frontier.Result{Item: item, Outcome: outcome, Canonical: canon, History: h}, nil
}

// Purposes of a fetch (Summary.ByPurpose).
const (
	purposeDiscovery = "discovery" // a URL never fetched before
	purposeRefresh   = "refresh"   // a URL fetched before: is it still the same?
)

// verifyShortcuts makes the crawl check the work it skips (set by the
// module's tests: the package's own, and through hook.VerifyShortcuts the
// others): that a URL whose history it does not read has none (history),
// and that a link it skips as queued is seen (verifyOffered).
var verifyShortcuts bool

func init() {
	hook.VerifyShortcuts = func() { verifyShortcuts = true }
}

// history returns what is known of item's URL (canonical) from earlier
// visits. A URL queued when it was found and never tried has none: a
// history is written only by the release that settles its URL, in the
// same batch, and a settled URL comes back only as a revisit (Recrawl).
// Its read is skipped: a search of the store's memtable for a key that is
// not there, on every page. Retries, redirect targets, URLs kept as they
// are and sitemaps are read as before, and so is every URL of a shared
// crawl once its database server has restarted.
func (c *Crawler) history(ctx context.Context, item *frontier.Item, canonical string) (*frontier.History, error) {
	if item.Recrawl || item.Attempts > 0 || item.Hops > 0 || item.AsIs || item.Kind != "" {
		return c.store.History(ctx, canonical)
	}
	if c.shared != nil && c.shared.pg.Restarts() > 0 {
		// A crash of the database server may have lost the release that
		// settled a URL another process then fetched again and settled:
		// a URL queued on discovery may have a history after all.
		return c.store.History(ctx, canonical)
	}
	if verifyShortcuts {
		if h, err := c.store.History(ctx, canonical); err != nil || h != nil {
			return nil, fmt.Errorf("gentlecrawl: %s, queued on discovery, has a history: %+v (%v)", item.URL, h, err)
		}
	}
	return nil, nil
}

// fetchPage fetches one URL with the validators from its history, records the
// exchange, and returns its result for the frontier (with the links it leads
// to) and what the request says of the host's load. A URL that met an
// overloaded server or a failing network stays queued for another try, up to
// MaxAttempts. An error (interrupted, or the WARC record not written) leaves
// the URL queued as it was.
func (c *Crawler) fetchPage(ctx context.Context, item *frontier.Item, u *url.URL) (frontier.Result, hostload.Outcome, error) {
	var o hostload.Outcome
	canon := urlnorm.Canonical(u)
	prev, err := c.history(ctx, item, canon)
	if err != nil {
		return frontier.Result{}, o, err
	}
	// Without an OnPage callback (which may keep the body), the page's
	// bodies go back to the fetcher's pool once the page is done with:
	// they were much of what a crawl allocated.
	pooled := c.cfg.OnPage == nil
	req := fetch.Request{URL: u, AllTypes: item.Kind == kindSitemap, Pooled: pooled}
	origin := urlnorm.HostKey(u)
	var sent validatorMode
	recheck := prev != nil && c.cfg.Continuous && c.needsRecheck(origin, prev)
	if prev != nil && !recheck {
		req.ETag, req.LastModified, sent = c.validators.request(origin, prev.ETag, prev.LastModified)
	}
	if err := c.rate.wait(ctx); err != nil {
		return frontier.Result{}, o, err // interrupted: the URL stays queued
	}
	o.Start = time.Now()
	res, ferr := c.client.Do(ctx, req)
	if res != nil && pooled {
		defer res.Release()
	}
	if ctx.Err() != nil {
		return frontier.Result{}, o, ctx.Err() // interrupted: the URL stays queued
	}

	h := &frontier.History{URL: item.URL}
	purpose := purposeDiscovery
	if prev != nil {
		*h = *prev
		h.URL = item.URL
		purpose = purposeRefresh
	}
	h.Visits++
	h.Hops = item.Hops
	h.Fetched = time.Now()
	o.End = h.Fetched
	var links []frontier.Candidate
	var outcome frontier.Outcome
	duplicate := false // the page repeats another: not worth revisiting

	if ferr != nil {
		kind := errorKind(ferr)
		o.Failed = kind != "private-network" && kind != "other"
		outcome, h.Error = frontier.Failed, ferr.Error()
		c.stats.update(func(s *Summary) { s.Requests++; s.Pages++; s.ByPurpose[purpose]++; s.Errors[kind]++ })
		c.logRequest(requestKind(item), purpose, u, o.Start, nil, ferr, req.ETag != "" || req.LastModified != "", "", 0)
		c.cfg.Logger.Info("fetch failed", "url", item.URL, "err", ferr)
	} else {
		o.Start, o.End, o.Latency, o.Status = res.Start, res.End, res.TTFB, res.Status
		o.RetryAfter = res.Header.Get("Retry-After")
		if ip, _, err := net.SplitHostPort(res.RemoteAddr); err == nil {
			o.Addr = ip
		}
		if err := c.record(res, prev); err != nil {
			return frontier.Result{}, o, err
		}
		h.Status, h.Error = res.Status, ""
		unchanged := res.NotModified && prev != nil
		if prev != nil && res.Conditional {
			same := res.Status == http.StatusOK && res.Complete() && res.SamePayload(prev.Digest)
			if c.validators.observe(origin, sent, unchanged, same, prev.ETag, prev.LastModified) {
				c.saveValidators(ctx)
			}
		}
		var saved int64
		if unchanged {
			outcome = frontier.Unchanged
			// RFC 9110 §15.4.5: a 304 carries the validators the server
			// would have sent with a 200; keep the freshest.
			if v := res.Header.Get("ETag"); v != "" {
				h.ETag = v
			}
			if v := res.Header.Get("Last-Modified"); v != "" {
				h.LastModified = v
			}
			saved = max(0, prev.Size-res.WireBytes)
			observeVisit(prev, h, res.Header, false, true, h.Fetched)
		} else {
			digest := res.PayloadDigest()
			outcome = frontier.Fetched
			changesBefore := h.Changes
			switch {
			case res.Skipped:
				outcome = frontier.Skipped
			case res.Status == http.StatusNotFound || res.Status == http.StatusGone:
				outcome = frontier.Gone
			case prev != nil && res.Status == capturedStatus(prev) && res.SamePayload(prev.Digest):
				// No validators, or they changed, yet the same bytes.
				outcome = frontier.Unchanged
			case prev != nil && prev.Digest != "" && res.Complete():
				h.Changes++ // the revisit schedule learns from this
			}
			changed := h.Changes > changesBefore
			if res.Status == http.StatusOK && res.Complete() && (changed || outcome == frontier.Unchanged || prev == nil) {
				observeVisit(prev, h, res.Header, changed, false, h.Fetched)
				if changed && recheck && lastNotModified(prev) && sameValidators(prev, res.Header) {
					// 304s to these validators, and yet the page changed.
					dropLies(h)
					h.DatesUnreliable = true
					if c.validators.lied(origin, item.URL) {
						c.cfg.Logger.Info("validators lie: refreshing without them", "origin", origin)
						c.saveValidators(ctx)
					}
				}
			}
			h.ETag = res.Header.Get("ETag")
			h.LastModified = res.Header.Get("Last-Modified")
			h.ContentType = res.Header.Get("Content-Type")
			h.Digest = digest
			h.Size = res.WireBytes
			h.Captured = res.Start
			var canonical *url.URL
			var found []*url.URL
			var keys []string
			var hinted []*url.URL
			var text *pageText
			if item.Kind == kindSitemap {
				links = c.sitemapEntries(item, res)
			} else {
				links, canonical, found, keys, hinted, text = c.follow(item, res)
				if res.Status >= 300 && res.Status < 400 && len(links) == 1 && prev == nil && item.Depth > 0 {
					if err := c.judgeRedirect(ctx, u, links[0]); err != nil {
						return frontier.Result{}, o, err
					}
				}
			}
			if res.Status == http.StatusOK && res.Complete() {
				// A revisit is judged too (its page may now repeat
				// another, and a resumed crawl's index starts empty),
				// never against itself; but the same URL with new content
				// says nothing of which parameters matter.
				key, follow := c.judgePage(item, res, canonical, found, keys, hinted, links, prev != nil, text)
				text.release()
				if prev == nil {
					c.observe(res.URL, key)
				}
				if !follow {
					links = nil
					duplicate = true
				}
			}
		}
		if c.cfg.OnPage != nil {
			p := &Page{URL: item.URL, Status: res.Status, Header: res.Header.Clone(), Body: res.Body, Purpose: purpose,
				Start: res.Start, End: res.End, TTFB: res.TTFB}
			for _, l := range links {
				p.Links = append(p.Links, l.URL)
			}
			if err := c.cfg.OnPage(ctx, p); err != nil {
				return frontier.Result{}, o, &onPageError{err}
			}
		}
		prevType := ""
		if prev != nil {
			prevType = prev.ContentType
		}
		c.logRequest(requestKind(item), purpose, u, o.Start, res, nil, res.Conditional, prevType, saved)
		c.stats.update(func(s *Summary) {
			s.Requests++
			s.Pages++
			s.ByPurpose[purpose]++
			s.ByStatus[res.Status]++
			s.WireBytes += res.WireBytes
			s.BodyBytes += int64(len(res.Body))
			switch {
			case res.Skipped:
				s.SkippedType++
			case res.Truncated != "":
				s.Truncated++
			}
			if unchanged {
				s.NotModified++
				s.SavedBytes += saved
			}
		})
	}

	if o.IsLoadSignal() && item.Attempts+1 < c.cfg.MaxAttempts {
		c.stats.update(func(s *Summary) { s.Retries++ })
		return frontier.Result{Item: item, Outcome: frontier.Retry}, o, nil
	}
	var revisit time.Time
	if !duplicate && c.cfg.Continuous {
		var hinted float64
		if prev == nil {
			if hint, ok := c.demand.takeHint(canon); ok {
				hinted = hint.rate
				if len(h.Observed) == 0 && !hint.lastMod.IsZero() && hint.lastMod.Before(h.Fetched) {
					// No Last-Modified of its own: the sitemap's date
					// says how long it has been still.
					h.Observe(frontier.Observation{Interval: h.Fetched.Sub(hint.lastMod), Before: true})
				}
			}
		}
		c.demand.count(politenessKey(u), prev, h)
		revisit = c.revisitAt(politenessKey(u), outcome, h, h.Fetched, hinted)
	}
	return frontier.Result{Item: item, Outcome: outcome, Canonical: canon, History: h, Add: links, Revisit: revisit}, o, nil
}

// lastNotModified says the last visit of a page was answered 304.
func lastNotModified(h *frontier.History) bool {
	return len(h.Observed) > 0 && h.Observed[len(h.Observed)-1].NotModified
}

// onPageError is an error of Config.OnPage: it stops the crawl, and Run
// returns it.
type onPageError struct{ err error }

func (e *onPageError) Error() string { return "OnPage: " + e.err.Error() }
func (e *onPageError) Unwrap() error { return e.err }

// capturedStatus is the status of a history's last full capture: a 304
// stands for the 200 it confirmed.
func capturedStatus(h *frontier.History) int {
	if h.Status == http.StatusNotModified {
		return http.StatusOK
	}
	return h.Status
}

// sameValidators says a response carries the validators kept from the
// last full capture: the same ETag, or with no ETag the same
// Last-Modified.
func sameValidators(prev *frontier.History, hdr http.Header) bool {
	if etag := hdr.Get("ETag"); etag != "" || prev.ETag != "" {
		return etag == prev.ETag
	}
	lm := hdr.Get("Last-Modified")
	return lm != "" && lm == prev.LastModified
}

// noteLoad keeps, for the summary, where a host that pushed back settled
// and why (hostload.Load.Summary).
func (c *Crawler) noteLoad(host string, load *hostload.Load) {
	sum, ok := load.Summary()
	if !ok {
		return
	}
	ev := sum.Last
	hl := HostLoad{
		Cause:  LoadRefused,
		Status: ev.Status, RetryAfter: ev.RetryAfter, HasRetryAfter: ev.HasRetryAfter,
		Slow: ev.Slow, Baseline: ev.Baseline,
		EventRate: sum.EventRate, Settled: sum.Settled, Events: sum.Events,
	}
	switch {
	case ev.Slow > 0:
		hl.Cause = LoadSlow
	case ev.Status == 0:
		hl.Cause = LoadNoResponse
	}
	c.stats.update(func(s *Summary) {
		if s.Slowed == nil {
			s.Slowed = make(map[string]HostLoad)
		}
		if _, ok := s.Slowed[host]; !ok && len(s.Slowed) >= maxSlowedHosts {
			s.SlowedMore = true
			return
		}
		s.Slowed[host] = hl
	})
}

// maxSlowedHosts bounds Summary.Slowed: a crawl of many hosts on a busy
// network could otherwise write a line for each of them in every summary.
// The request log keeps every answer of every host.
const maxSlowedHosts = 1000

// follow returns the in-scope URLs a response leads to: the links of an HTML
// page, or the target of a redirect.
//
// It also returns the page's links as found (found), for the URL-space
// learners, and, for a complete HTML page, its visible text, read in the
// same pass as the links (judgePage wants it, and reading every page
// twice cost much of the crawl's CPU).
//
// keys holds beside each of found the key it was queued under, "" for
// those not queued (printPage). A link this crawl had queued before is
// not parsed: found holds nil for it, and keys its key.
func (c *Crawler) follow(item *frontier.Item, res *fetch.Result) (links []frontier.Candidate, canonical *url.URL, found []*url.URL, keys []string, hinted []*url.URL, text *pageText) {
	redirect := res.Status >= 300 && res.Status < 400
	switch {
	case redirect:
		loc := res.Header.Get("Location")
		if loc == "" {
			break
		}
		u, err := fetch.ResolveLocation(res.URL, loc)
		if err == nil {
			u, err = urlnorm.Parse(u.String())
		}
		if err != nil {
			c.cfg.Logger.Info("unusable redirect", "url", item.URL, "location", loc, "err", err)
			c.stats.update(func(s *Summary) { s.BadRedirects++ })
			break
		}
		if item.Hops+1 > fetch.MaxRedirects {
			// A chain this long is a loop or a trap; the seen-set stops
			// loops back to a URL already known.
			c.stats.update(func(s *Summary) { s.BadRedirects++ })
			break
		}
		u.Fragment, u.RawFragment = "", ""
		found = append(found, u)
	case res.Status == http.StatusOK && isHTML(res) && res.Truncated != "time" && res.Truncated != "disconnect":
		opts := extract.Options{Agent: c.cfg.Agent, ContentType: res.Header.Get("Content-Type")}
		var page *extract.Page
		var err error
		if res.Complete() {
			buf := textBufs.Get().(*[]byte)
			opts.TextBuf = *buf
			r := opts.Read(res.URL, res.Body)
			page, err = r.Page, r.Err
			text = &pageText{text: r.Text, err: r.TextErr, buf: buf}
		} else {
			page, err = opts.HTML(res.URL, res.Body)
		}
		if page == nil {
			c.cfg.Logger.Debug("no links extracted", "url", item.URL, "err", err)
			return nil, nil, nil, nil, nil, text
		}
		canonical = page.Canonical
		for _, action := range page.SearchForms {
			// The site's search: its results, linked from elsewhere,
			// are judged as one family (urlspace.Families).
			if u, err := url.Parse(action); err == nil && urlnorm.HostKey(u) == urlnorm.HostKey(res.URL) {
				c.space.families.SearchForm(urlnorm.HostKey(u), urlnorm.Key(u, nil))
			}
		}
		// Meta robots and X-Robots-Tag "nofollow": the site asks that the
		// page's links not be followed. (A name: prefix holds to the end of
		// its header line, hence the newlines.)
		_, xNoFollow := extract.XRobotsTag(strings.Join(res.Header.Values("X-Robots-Tag"), "\n"), c.cfg.Agent)
		if page.NoFollow || xNoFollow {
			c.stats.update(func(s *Summary) { s.NoFollowPages++ })
			// Nothing is followed, but the page is judged by its links
			// too: a list shown wider (a page size) is often marked so.
			for _, l := range page.Links {
				if l.Kind != extract.KindPage || l.NoFollow {
					continue
				}
				if u, err := url.Parse(l.URL); err == nil {
					found = append(found, u)
				}
			}
			return nil, canonical, found, nil, nil, text
		}
		// A link this crawl has queued already (offeredLinks) is not
		// parsed: found holds nil for it, and keys its key. It was in
		// scope when it was queued, and the scope only ever widens.
		found = make([]*url.URL, 0, len(page.Links))
		keys = make([]string, 0, len(page.Links))
		for _, l := range page.Links {
			if l.Kind != extract.KindPage {
				continue
			}
			if l.NoFollow {
				// A hint, not a wall: queued last, under its family's
				// budget (hintedLinks); of the page's prints, only its
				// pager (pagePrint.hintedPager) sees it.
				if u, err := url.Parse(l.URL); err == nil {
					hinted = append(hinted, u)
				}
				continue
			}
			if plainLink(l.URL) {
				if key, ok := c.offered.get(l.URL); ok {
					if verifyShortcuts {
						c.verifyOffered(l.URL, key)
					}
					found, keys = append(found, nil), append(keys, key)
					continue
				}
			}
			if u, err := url.Parse(l.URL); err == nil {
				found, keys = append(found, u), append(keys, "")
			}
		}
	}
	var out []frontier.Candidate
	var outOfScope, tooDeep, skipped int
	depth := item.Depth + 1
	if redirect {
		depth = item.Depth // a redirect is the same page moved, not a link
	}
	// Each link's class (urlspace.LinkClass) against the page's key
	// orders the host's queue; a redirect's target keeps the class of the
	// URL that redirected.
	var pageKey, pageOrigin string
	if !c.cfg.Continuous {
		pageKey, pageOrigin = urlnorm.Key(res.URL, c.dropFunc(res.URL)), urlnorm.HostKey(res.URL)
	}
	nFound, hintedFrom := len(found), len(found)
	if canonical != nil && urlnorm.Canonical(canonical) != urlnorm.Canonical(res.URL) {
		if cu, err := url.Parse(canonical.String()); err == nil {
			cu.Fragment, cu.RawFragment = "", ""
			found = append(found, cu)
			hintedFrom++
		}
	}
	if len(hinted) > 0 {
		c.space.noteNofollow(urlnorm.HostKey(res.URL), len(hinted))
	}
	found = append(found, hinted...)
	// The links of a page are mostly of its own origin, whose parameter
	// rules are looked up once.
	var (
		dropScheme, dropHost string
		drop                 func(string) bool
		dropWhole            bool
	)
	if keys == nil {
		keys = make([]string, len(found))
	}
	for len(keys) < len(found) {
		keys = append(keys, "")
	}
	for i, u := range found {
		switch {
		case u == nil:
			// Queued already.
		case !c.inScope.has(u):
			outOfScope++
		case c.cfg.MaxDepth > 0 && depth > c.cfg.MaxDepth:
			tooDeep++
		case c.extPolicy != nil && c.extSkip(u):
			skipped++
		default:
			if !dropWhole || u.Scheme != dropScheme || u.Host != dropHost {
				drop, dropWhole = c.originDrop(u)
				dropScheme, dropHost = u.Scheme, u.Host
			}
			cand := c.candidateDrop(u, depth, drop)
			if i < nFound {
				keys[i] = cand.Canonical
			}
			if pageKey != "" {
				class := urlspace.ClassOther
				switch {
				case redirect:
					class = classOf(item)
				case i >= hintedFrom:
					class = urlspace.ClassHinted
				case i < nFound && urlnorm.HostKey(u) == pageOrigin:
					class = c.space.families.LinkClass(pageOrigin, pageKey, classOf(item), cand.Canonical)
				}
				if class < urlspace.ClassRefine && c.space.families.Narrowed(pageOrigin, cand.Canonical) {
					// A list narrowed twice is a refinement, wherever it
					// is linked from.
					class = urlspace.ClassRefine
				}
				cand.Due = classDue(class)
				if class == urlspace.ClassOther && i < nFound && urlnorm.HostKey(u) == pageOrigin && c.space.families.Tagged(pageOrigin, cand.Canonical) {
					cand.Due = markedDue
				}
			}
			if redirect {
				cand.Hops = item.Hops + 1
				if cand.URL == res.URL.String() {
					// The server redirects the cleaned URL to itself with a
					// session id (an application that insists on one): the
					// page is only to be had with it, so keep it this once.
					cand.URL, cand.Canonical = u.String(), urlnorm.Canonical(u)
					cand.AsIs = true
				}
			}
			out = append(out, cand)
		}
	}
	if outOfScope > 0 || tooDeep > 0 || skipped > 0 {
		c.stats.update(func(s *Summary) { s.OutOfScope += outOfScope; s.TooDeep += tooDeep; s.SkippedExtension += skipped })
	}
	return out, canonical, found[:nFound], keys[:nFound], hinted, text
}

// pageText is the visible text of a page (extract.Options.Text), and the
// error that cut it short.
type pageText struct {
	text []byte
	err  error
	buf  *[]byte // textBufs' loan the text is in; nil if none
}

// textBufs lends the memory a page's text is read into: the visit is done
// with the text (judgePage) before it ends, and a new slice for every
// page was much of what a crawl allocated.
var textBufs = sync.Pool{New: func() any { return new([]byte) }}

// release gives the text's memory back to textBufs, unless it is a huge
// page's. The text must not be used after.
func (t *pageText) release() {
	if t == nil || t.buf == nil {
		return
	}
	if cap(t.text) <= 1<<20 {
		*t.buf = t.text[:0]
		textBufs.Put(t.buf)
	}
	t.text, t.buf = nil, nil
}

// isHTML reports whether a response is a page to take links from: its media
// type, sniffed when the server sent none or a generic one.
func isHTML(res *fetch.Result) bool {
	return !res.Skipped && (res.MediaType == "text/html" || res.MediaType == "application/xhtml+xml")
}

// extSkip reports whether a discovered URL's extension is one the crawl does
// not download (audio, video, executables, archives, disk images).
func (c *Crawler) extSkip(u *url.URL) bool {
	skip, _ := c.extPolicy.Skip(u)
	return skip
}

// record writes the exchange to the WARC files: request and response, or
// request and revisit for a 304.
func (c *Crawler) record(res *fetch.Result, prev *frontier.History) error {
	ex := &warc.Exchange{
		TargetURI: res.URL.String(),
		Date:      res.Start,
		Request:   res.RequestRaw,
		Response:  res.ResponseHead,
		// The body beside the head, not joined to it: the record's bytes
		// are the same, without a copy of every response.
		ResponseBody: res.RawBody,
		Truncated:    res.Truncated,
	}
	if ip, _, err := net.SplitHostPort(res.RemoteAddr); err == nil {
		ex.IP = ip
	}
	if res.NotModified && prev != nil {
		ex.Revisit = true
		ex.Response, ex.ResponseBody = res.ResponseHead, nil
		ex.RefersToTargetURI = prev.URL
		ex.RefersToDate = prev.Captured
	}
	_, err := c.warc.Write(ex)
	return err
}
