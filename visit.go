package gentlecrawl

import (
	"context"
	"errors"
	"math"
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
	"github.com/gentlecrawl/gentlecrawl/internal/hostload"
	"github.com/gentlecrawl/gentlecrawl/urlnorm"
	"github.com/gentlecrawl/gentlecrawl/warc"
)

// errBudgetSpent stops the crawl when MaxPages fetches have been made.
var errBudgetSpent = errors.New("gentlecrawl: page budget spent")

// Outcomes recorded in a URL's history.
const (
	outcomeFetched    = "fetched"    // a response was received
	outcomeUnchanged  = "unchanged"  // 304, or the same payload as last time
	outcomeFailed     = "failed"     // no response (network error, refused, timeout)
	outcomeDisallowed = "disallowed" // robots.txt forbids it; not requested
	outcomeInvalid    = "invalid"    // the queued URL could not be parsed
	outcomeSkipped    = "skipped"    // its Content-Type is one the crawl does not want; body not downloaded
	outcomeDuplicate  = "duplicate"  // the same page as a URL already known, once irrelevant parameters are dropped
)

// visit takes one turn on a held host: at most one request, and the host is
// released (or deferred) before it returns. The request is the robots.txt of
// the next URL's origin when that is not known yet, else the URL itself.
// URLs that robots.txt disallows are settled on the way, without a request.
func (c *Crawler) visit(ctx context.Context, host string) error {
	done := 0 // queue entries settled without a request
	fail := func(err error) error {
		c.sched.Release(host, done, time.Now(), hostload.ReasonDelay)
		return err
	}
	for {
		item, err := c.store.Peek(host)
		if err != nil {
			return fail(err)
		}
		if item == nil {
			// The queue is empty: forget the host.
			c.sched.Release(host, math.MaxInt32, time.Now(), hostload.ReasonDelay)
			return nil
		}
		u, perr := url.Parse(item.URL)
		if perr != nil {
			if err := c.settle(item, nil, outcomeInvalid); err != nil {
				return fail(err)
			}
			done++
			continue
		}
		if done == 0 && c.sched.AddrOf(host) == "" {
			// The host's first request: learn its address first, so that
			// it counts against the address's budget from the start.
			if ips, err := c.client.LookupIP(ctx, u); err == nil && len(ips) > 0 {
				if !c.sched.ClaimAddr(host, ips[0].Unmap().String()) {
					c.sched.Release(host, 0, time.Now(), hostload.ReasonAddr)
					return nil
				}
			}
		}
		origin := urlnorm.HostKey(u)
		r, err := c.robotsFor(origin)
		if err != nil {
			return fail(err)
		}
		if r == nil {
			next, err := c.fetchRobots(ctx, origin)
			if err != nil {
				return fail(err)
			}
			c.releaseAfterRobots(host, origin, done, next)
			return nil
		}
		if r.unavailable {
			c.sched.Defer(host, done, r.retryAt, hostload.ReasonRobots)
			return nil
		}
		if cand := c.candidate(u, item.Depth); cand.URL != item.URL && !item.AsIs {
			// Since the URL was queued, some of its parameters were found
			// not to change the content: fetch it without them — unless
			// that URL is known already.
			seen, err := c.store.Seen(cand.Canonical)
			if err != nil {
				return fail(err)
			}
			if seen {
				if err := c.settle(item, u, outcomeDuplicate); err != nil {
					return fail(err)
				}
				done++
				continue
			}
			if err := c.store.MarkSeen(cand.Canonical); err != nil {
				return fail(err)
			}
			if nu, err := url.Parse(cand.URL); err == nil {
				u = nu
			}
		}
		if !r.group.Allowed(pathQuery(u)) {
			if err := c.settle(item, u, outcomeDisallowed); err != nil {
				return fail(err)
			}
			done++
			continue
		}
		if c.cfg.MaxPages > 0 && c.pagesStarted.Add(1) > int64(c.cfg.MaxPages) {
			return fail(errBudgetSpent)
		}
		floor, why := floorFor(c.cfg.HostRules, host, time.Now(), r.gap, r.gapWhy)
		load := c.sched.Load(host, floor, why)
		if n := load.Concurrency(c.cfg.MaxPerHost); n > 1 {
			return c.visitMany(ctx, host, load, fetchJob{item, u}, n, done)
		}
		o, settled, err := c.fetchPage(ctx, item, u)
		if err != nil {
			return fail(err)
		}
		if settled {
			done++
		}
		if o.Addr != "" {
			c.sched.SetAddr(host, o.Addr)
		}
		d := load.Observe(o)
		c.noteDecision(host, d)
		c.sched.Release(host, done, d.Next, d.Reason)
		return nil
	}
}

type fetchJob struct {
	item *frontier.Item
	u    *url.URL
}

// visitMany is a turn with more than one request in flight to the host: a
// host with no floor that has stayed fast (hostload.Load.Concurrency). Up to
// n URLs of its queue are fetched at once, each taking a slot at the host's
// address; URLs settled without a request on the way are counted in done.
func (c *Crawler) visitMany(ctx context.Context, host string, load *hostload.Load, first fetchJob, n, done int) error {
	jobs := []fetchJob{first}
	extra := 0
	items, err := c.store.PeekN(host, 4*n)
	if err != nil {
		c.sched.Release(host, done, time.Now(), hostload.ReasonDelay)
		return err
	}
	for _, item := range items {
		if len(jobs) == n {
			break
		}
		if item.URL == first.item.URL {
			continue
		}
		u, err := url.Parse(item.URL)
		if err != nil {
			break
		}
		r, err := c.robotsFor(urlnorm.HostKey(u))
		if err != nil || r == nil || r.unavailable || item.AsIs {
			break // its robots.txt is another turn's request
		}
		if cand := c.candidate(u, item.Depth); cand.URL != item.URL {
			break // re-keying is the single path's job
		}
		if !r.group.Allowed(pathQuery(u)) {
			if err := c.settle(item, u, outcomeDisallowed); err != nil {
				break
			}
			done++
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

	type result struct {
		o       hostload.Outcome
		settled bool
		err     error
	}
	results := make([]result, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Go(func() {
			o, settled, err := c.fetchPage(ctx, j.item, j.u)
			results[i] = result{o, settled, err}
		})
	}
	wg.Wait()
	for range extra {
		c.sched.ReleaseExtra(host)
	}
	sort.Slice(results, func(i, j int) bool { return results[i].o.End.Before(results[j].o.End) })
	var d hostload.Decision
	for _, r := range results {
		if r.err != nil {
			c.sched.Release(host, done, time.Now(), hostload.ReasonDelay)
			return r.err
		}
		if r.settled {
			done++
		}
		if r.o.Addr != "" {
			c.sched.SetAddr(host, r.o.Addr)
		}
		if next := load.Observe(r.o); next.Next.After(d.Next) || d.Next.IsZero() {
			d = next
		}
	}
	c.noteDecision(host, d)
	c.sched.Release(host, done, d.Next, d.Reason)
	return nil
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

// settle takes a URL out of its queue without fetching it.
func (c *Crawler) settle(item *frontier.Item, u *url.URL, outcome string) error {
	canon := item.URL
	if u != nil {
		canon = urlnorm.Canonical(u)
	}
	h, err := c.store.History(canon)
	if err != nil {
		return err
	}
	if h == nil {
		h = &frontier.History{URL: item.URL}
	}
	h.Outcome, h.Pending = outcome, false
	if _, err := c.store.Apply(frontier.Update{Done: item, Canonical: canon, History: h}); err != nil {
		return err
	}
	if outcome == outcomeDisallowed {
		c.stats.update(func(s *Summary) { s.Disallowed++ })
	}
	return nil
}

// fetchPage fetches one URL with the validators from its history, records the
// exchange and admits the links it leads to. It returns what the request
// says of the host's load, and whether the URL is settled: a URL that met
// an overloaded server or a failing network stays queued for another try,
// up to MaxAttempts.
func (c *Crawler) fetchPage(ctx context.Context, item *frontier.Item, u *url.URL) (hostload.Outcome, bool, error) {
	var o hostload.Outcome
	canon := urlnorm.Canonical(u)
	prev, err := c.store.History(canon)
	if err != nil {
		return o, false, err
	}
	req := fetch.Request{URL: u, AllTypes: item.Kind == kindSitemap}
	if prev != nil {
		req.ETag, req.LastModified = prev.ETag, prev.LastModified
	}
	o.Start = time.Now()
	res, ferr := c.client.Do(ctx, req)
	if ctx.Err() != nil {
		return o, false, ctx.Err() // interrupted: the URL stays queued
	}

	h := &frontier.History{URL: item.URL}
	if prev != nil {
		*h = *prev
		h.URL = item.URL
	}
	h.Pending = false
	h.Visits++
	h.Fetched = time.Now()
	o.End = h.Fetched
	var links []frontier.Candidate

	if ferr != nil {
		kind := errorKind(ferr)
		o.Failed = kind != "private-network" && kind != "other"
		h.Outcome, h.Error = outcomeFailed, ferr.Error()
		c.stats.update(func(s *Summary) { s.Requests++; s.Pages++; s.Errors[kind]++ })
		c.cfg.Logger.Info("fetch failed", "url", item.URL, "err", ferr)
	} else {
		o.Start, o.End, o.Latency, o.Status = res.Start, res.End, res.TTFB, res.Status
		o.RetryAfter = res.Header.Get("Retry-After")
		if ip, _, err := net.SplitHostPort(res.RemoteAddr); err == nil {
			o.Addr = ip
		}
		if err := c.record(res, prev); err != nil {
			return o, false, err
		}
		h.Status, h.Error = res.Status, ""
		unchanged := res.NotModified && prev != nil
		var saved int64
		if unchanged {
			h.Outcome = outcomeUnchanged
			// RFC 9110 §15.4.5: a 304 carries the validators the server
			// would have sent with a 200; keep the freshest.
			if v := res.Header.Get("ETag"); v != "" {
				h.ETag = v
			}
			if v := res.Header.Get("Last-Modified"); v != "" {
				h.LastModified = v
			}
			saved = max(0, prev.Size-res.WireBytes)
		} else {
			digest := res.PayloadDigest()
			h.Outcome = outcomeFetched
			switch {
			case res.Skipped:
				h.Outcome = outcomeSkipped
			case prev != nil && res.Status == prev.Status && res.SamePayload(prev.Digest):
				// No validators, or they changed, yet the same bytes.
				h.Outcome = outcomeUnchanged
			}
			h.ETag = res.Header.Get("ETag")
			h.LastModified = res.Header.Get("Last-Modified")
			h.ContentType = res.Header.Get("Content-Type")
			h.Digest = digest
			h.Size = res.WireBytes
			h.Captured = res.Start
			var canonical *url.URL
			if item.Kind == kindSitemap {
				links = c.sitemapEntries(item, res)
			} else {
				links, canonical = c.follow(item, res)
			}
			if res.Status == http.StatusOK && res.Complete() {
				c.observe(res.URL, c.contentKey(res, canonical))
			}
		}
		c.stats.update(func(s *Summary) {
			s.Requests++
			s.Pages++
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
		return o, false, c.store.Retry(item)
	}
	added, err := c.store.Apply(frontier.Update{Done: item, Canonical: canon, History: h, Add: links, Admit: c.admit})
	if err != nil {
		return o, false, err
	}
	for host, n := range added {
		c.sched.Add(host, n)
	}
	c.countDiscovered(added)
	return o, true, nil
}

// noteDecision keeps, for the summary, why a host was last slowed below its
// floor's pace.
func (c *Crawler) noteDecision(host string, d hostload.Decision) {
	if d.Reason != hostload.ReasonBackoff {
		return
	}
	c.stats.update(func(s *Summary) {
		if s.Slowed == nil {
			s.Slowed = make(map[string]string)
		}
		s.Slowed[host] = d.Why
	})
}

// follow returns the in-scope URLs a response leads to: the links of an HTML
// page, or the target of a redirect.
func (c *Crawler) follow(item *frontier.Item, res *fetch.Result) (links []frontier.Candidate, canonical *url.URL) {
	var found []*url.URL
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
		page, err := opts.HTML(res.URL, res.Body)
		if page == nil {
			c.cfg.Logger.Debug("no links extracted", "url", item.URL, "err", err)
			return nil, nil
		}
		canonical = page.Canonical
		// Meta robots and X-Robots-Tag "nofollow": the site asks that the
		// page's links not be followed. (A name: prefix holds to the end of
		// its header line, hence the newlines.)
		_, xNoFollow := extract.XRobotsTag(strings.Join(res.Header.Values("X-Robots-Tag"), "\n"), c.cfg.Agent)
		if page.NoFollow || xNoFollow {
			c.stats.update(func(s *Summary) { s.NoFollowPages++ })
			return nil, canonical
		}
		for _, l := range page.Links {
			if l.Kind == extract.KindPage && !l.NoFollow {
				if u, err := url.Parse(l.URL); err == nil {
					found = append(found, u)
				}
			}
		}
	}
	var out []frontier.Candidate
	var outOfScope, tooDeep, skipped int
	depth := item.Depth + 1
	if redirect {
		depth = item.Depth // a redirect is the same page moved, not a link
	}
	for _, u := range found {
		switch {
		case !c.inScope(u):
			outOfScope++
		case c.cfg.MaxDepth > 0 && depth > c.cfg.MaxDepth:
			tooDeep++
		case c.extPolicy != nil && c.extSkip(u):
			skipped++
		default:
			cand := c.candidate(u, depth)
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
	return out, canonical
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
		Response:  append(append([]byte(nil), res.ResponseHead...), res.RawBody...),
		Truncated: res.Truncated,
	}
	if ip, _, err := net.SplitHostPort(res.RemoteAddr); err == nil {
		ex.IP = ip
	}
	if res.NotModified && prev != nil {
		ex.Revisit = true
		ex.Response = res.ResponseHead
		ex.RefersToTargetURI = prev.URL
		ex.RefersToDate = prev.Captured
	}
	_, err := c.warc.Write(ex)
	return err
}
