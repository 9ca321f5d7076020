package gentlecrawl

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/fetch"
	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
	"github.com/gentlecrawl/gentlecrawl/internal/hostload"
	"github.com/gentlecrawl/gentlecrawl/internal/reqlog"
	"github.com/gentlecrawl/gentlecrawl/robots"
)

// robotsCache holds the robots.txt rules of the origins (scheme://host:port)
// in this crawl. An origin's entry is only read or written by the worker
// holding its host.
type robotsCache struct {
	mu sync.Mutex
	// max bounds hosts (0: maxRobotsCached); tests make it small.
	max   int
	hosts map[string]*hostRobots
	// hops are the robots.txt redirect hops waiting for a turn of the
	// host they lead to: host → origins whose chain goes there next.
	hops map[string][]string
}

// queueHop queues origin's next robots.txt hop as work of host; it reports
// false when it is queued already.
func (rc *robotsCache) queueHop(host, origin string) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if slices.Contains(rc.hops[host], origin) {
		return false
	}
	if rc.hops == nil {
		rc.hops = make(map[string][]string)
	}
	rc.hops[host] = append(rc.hops[host], origin)
	return true
}

// takeHop takes the first hop queued on host.
func (rc *robotsCache) takeHop(host string) (origin string, ok bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	q := rc.hops[host]
	if len(q) == 0 {
		return "", false
	}
	if len(q) == 1 {
		delete(rc.hops, host)
	} else {
		rc.hops[host] = q[1:]
	}
	return q[0], true
}

type hostRobots struct {
	group       *robots.Group
	gap         time.Duration // the gap this host's rules ask for
	gapWhy      string        // and why: "delay 1s", "Crawl-delay 10s"
	cleanParams []robots.CleanParam
	expires     time.Time
	retryAt     time.Time // unavailable: ask again then
	unavailable bool      // no usable rules: fetch nothing but robots.txt
	failures    int

	// A redirect chain in progress.
	hop  *url.URL
	hops int
}

func (rc *robotsCache) get(host string) *hostRobots {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.hosts[host]
}

// maxRobotsCached bounds the parsed robots.txt rules kept in memory; the
// store keeps them all, and an evicted origin's rules are read back from it
// on its next visit, while they are fresh: eviction neither lifts a
// disallow nor asks for robots.txt again before its time (robotsFor).
const maxRobotsCached = 50_000

func (rc *robotsCache) set(host string, h *hostRobots) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	limit := rc.max
	if limit <= 0 {
		limit = maxRobotsCached
	}
	if _, ok := rc.hosts[host]; !ok && len(rc.hosts) >= limit {
		rc.evictLocked(max(limit/10, 1))
	}
	rc.hosts[host] = h
}

// evictLocked forgets up to n origins, chosen at random (map order), keeping
// those whose robots.txt is unavailable (the summary lists them) or whose
// redirect chain is being followed.
func (rc *robotsCache) evictLocked(n int) {
	for k, r := range rc.hosts {
		if n == 0 {
			return
		}
		if r.unavailable || r.hop != nil {
			continue
		}
		delete(rc.hosts, k)
		n--
	}
}

// deferredHosts lists the hosts whose robots.txt is unavailable.
func (rc *robotsCache) deferredHosts() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []string
	for h, r := range rc.hosts {
		if r.unavailable {
			out = append(out, h)
		}
	}
	sort.Strings(out)
	return out
}

// robotsFor returns the rules for host, loading them from the store when this
// crawl has not yet used them. It returns nil when robots.txt must be fetched
// (or fetched again) before anything else of the host.
func (c *Crawler) robotsFor(ctx context.Context, origin string) (*hostRobots, error) {
	now := time.Now()
	if r := c.robots.get(origin); r != nil {
		if r.hop == nil && !r.unavailable && now.Before(r.expires) {
			return r, nil
		}
		if r.unavailable && now.Before(r.retryAt) {
			return r, nil
		}
		if r.hop != nil {
			return nil, nil // the next hop of a redirect chain
		}
		// Expired here; in a shared crawl another process may have
		// fetched it since: the store says.
	}
	rec, err := c.store.Robots(ctx, origin)
	if err != nil || rec == nil || !now.Before(rec.Expires) {
		return nil, err
	}
	r := c.rulesFromRecord(rec)
	c.robots.set(origin, r)
	c.logCrawlDelay(origin, r)
	if r.unavailable && !now.Before(r.retryAt) {
		return nil, nil
	}
	return r, nil
}

func (c *Crawler) rulesFromRecord(rec *frontier.RobotsRecord) *hostRobots {
	r := &hostRobots{expires: rec.Expires, failures: rec.Failures}
	rules := recordOf(rec).Rules()
	switch {
	case rec.Source == robots.SourceDisallowAll.String() || rules == nil:
		// RFC 9309 §2.3.1.4: unreachable means complete disallow.
		r.unavailable = true
		r.retryAt = rec.Expires
		rules = robots.DisallowAll()
	case rec.Source == robots.SourceAssumedAllow.String():
		rules = robots.AllowAll()
	}
	r.group = rules.Group(c.cfg.Agent)
	r.cleanParams = rules.CleanParams()
	cd, ok := r.group.CrawlDelay()
	r.gap = c.cfg.CrawlDelay.apply(c.cfg.Delay, cd, ok)
	r.gapWhy = fmt.Sprintf("delay %v", c.cfg.Delay)
	if r.gap > c.cfg.Delay {
		r.gapWhy = fmt.Sprintf("Crawl-delay %v", r.gap)
	}
	return r
}

// recordOf turns a stored robots.txt record into what robots.Policy keeps.
func recordOf(rec *frontier.RobotsRecord) robots.Record {
	if rec == nil {
		return robots.Record{}
	}
	r := robots.Record{Body: rec.Body, Fetched: rec.Fetched, FailingSince: rec.FailingSince, Failures: rec.Failures}
	switch rec.Outcome {
	case robots.OutcomeParsed.String():
		r.Outcome = robots.OutcomeParsed
	case robots.OutcomeUnrestricted.String():
		r.Outcome = robots.OutcomeUnrestricted
	}
	return r
}

// hopWait is how long an origin whose robots.txt redirect leads to a busy
// host waits at most for that host's turn to make the hop (hopTurn); the
// turn wakes it as soon as the hop is made.
const hopWait = 30 * time.Second

// hopTurn spends a turn of host, which the caller holds, on origin's
// robots.txt redirect hop that leads to host, queued there by fetchRobots
// because host was busy: a busy host gets to such a request in its turn
// instead of starving it.
func (c *Crawler) hopTurn(ctx context.Context, host, origin string) error {
	waiter := politenessKey(robotsURL(origin))
	defer c.sched.Wake(waiter)
	if prev := c.robots.get(origin); prev == nil || prev.hop == nil || politenessKey(prev.hop) != host {
		// The hop was made meanwhile, on the origin's own turn.
		c.sched.Release(host, 1, time.Now(), hostload.ReasonDelay)
		return nil
	}
	_, _, err := c.fetchRobots(ctx, origin, true)
	return err
}

// fetchRobots makes one request of an origin's robots.txt chain: the file
// itself or the next redirect hop. It returns the time the host may be asked
// again, and why: ReasonRobots when the hop was queued on a busy host, which
// wakes this one when it is made. holding says the caller holds the host of
// the next hop (hopTurn), which fetchRobots then releases.
func (c *Crawler) fetchRobots(ctx context.Context, origin string, holding bool) (time.Time, hostload.Reason, error) {
	prev := c.robots.get(origin)
	// The stored record: a chain another process (or an earlier run)
	// began, and the last good copy the answer is decided against. Only
	// the holder of the origin's host writes it, so it is read once.
	old, err := c.store.Robots(ctx, origin)
	if err != nil {
		return time.Time{}, "", err
	}
	target := robotsURL(origin)
	hops := 0
	if prev != nil && prev.hop != nil {
		target, hops = prev.hop, prev.hops
	} else if hop, n := c.storedHop(old); hop != nil {
		target, hops = hop, n
	}
	// A hop to another host is a request to that host: it must be free and
	// due, and it keeps its gap afterwards. If it is not, the hop is queued
	// as that host's work and this host waits until it is made.
	other := politenessKey(target)
	borrowed := other != politenessKey(robotsURL(origin))
	done := 0
	switch {
	case holding:
		done = 1 // the work queueHop gave the host
	case borrowed:
		ok, retry := c.sched.TryAcquire(other)
		if !ok {
			if c.robots.queueHop(other, origin) {
				c.sched.Add(other, 1)
			}
			if wait := time.Now().Add(hopWait); wait.After(retry) {
				retry = wait
			}
			return retry, hostload.ReasonRobots, nil
		}
	}
	if err := c.rate.wait(ctx); err != nil {
		return time.Now(), hostload.ReasonDelay, err
	}
	start := time.Now()
	res, ferr := c.client.Do(ctx, fetch.Request{URL: target, AllTypes: true})
	end := time.Now()
	if res != nil {
		end = res.End
	}
	if borrowed {
		c.sched.Release(other, done, hostload.After(end, c.cfg.Delay), hostload.ReasonDelay)
	} else if res != nil {
		if ip, _, err := net.SplitHostPort(res.RemoteAddr); err == nil {
			c.noteAddr(ctx, other, ip)
		}
	}
	if ctx.Err() != nil {
		return time.Time{}, "", ctx.Err()
	}
	c.stats.update(func(s *Summary) { s.Requests++ })
	c.logRequest(reqlog.KindRobots, "", target, start, res, ferr, false, "", 0)
	if res != nil {
		if err := c.record(res, nil); err != nil {
			return time.Time{}, "", err
		}
		c.stats.update(func(s *Summary) { s.WireBytes += res.WireBytes; s.BodyBytes += int64(len(res.Body)) })
	}

	// A redirect: follow it on the host's next turn, so that each hop keeps
	// the gap like any other request.
	if ferr == nil && res.Status >= 300 && res.Status < 400 {
		if loc, err := fetch.ResolveLocation(target, res.Header.Get("Location")); err == nil && c.robotsPolicy().FollowRedirect(hops) {
			next := &hostRobots{hop: loc, hops: hops + 1}
			if prev != nil {
				next.group, next.gap = prev.group, prev.gap
			}
			if err := c.storeHop(ctx, origin, old, loc, hops+1); err != nil {
				return time.Time{}, "", err
			}
			c.robots.set(origin, next)
			return hostload.After(end, c.cfg.Delay), hostload.ReasonDelay, nil
		}
	}

	resp := robots.Response{Err: ferr, Hops: hops}
	if ferr == nil {
		resp.Status, resp.Body = res.Status, res.Body
		resp.CacheControl = strings.Join(res.Header.Values("Cache-Control"), ",")
		resp.Truncated = res.Truncated == "time" || res.Truncated == "disconnect" || res.DecodeErr != nil
		if d, ok := hostload.ParseRetryAfter(res.Header.Get("Retry-After"), end); ok {
			resp.RetryAfter = d
		}
	}
	now := time.Now()
	d := c.robotsPolicy().Decide(resp, recordOf(old), now)
	c.stats.update(func(s *Summary) { s.Robots[d.Outcome.String()]++ })
	rec := &frontier.RobotsRecord{
		Checked:      now,
		Expires:      d.Expires,
		Status:       resp.Status,
		Source:       d.Source.String(),
		Outcome:      d.Record.Outcome.String(),
		Body:         d.Record.Body,
		Fetched:      d.Record.Fetched,
		FailingSince: d.Record.FailingSince,
		Failures:     d.Record.Failures,
		Reason:       d.Reason,
	}
	if d.Record.Outcome == 0 {
		rec.Outcome = ""
	}
	if ferr != nil {
		rec.Error = ferr.Error()
	}
	if d.Outcome == robots.OutcomeUnavailable {
		c.cfg.Logger.Warn("robots.txt unavailable", "origin", origin, "reason", d.Reason)
	}
	if err := c.store.PutRobots(ctx, origin, rec); err != nil {
		return time.Time{}, "", err
	}
	r := c.rulesFromRecord(rec)
	c.robots.set(origin, r)
	c.logCrawlDelay(origin, r)
	if d.Source == robots.SourceResponse {
		if err := c.robotsSitemaps(ctx, origin, d.Robots.Sitemaps()); err != nil {
			return time.Time{}, "", err
		}
	}
	floor, _ := floorFor(c.cfg.HostRules, politenessKey(target), now, r.gap, r.gapWhy)
	return hostload.After(end, floor), hostload.ReasonDelay, nil
}

// robotsPolicy is what a robots.txt response means (robots.Policy: RFC 9309
// and Google's documented handling), with the crawl's cache time and retry.
func (c *Crawler) robotsPolicy() robots.Policy {
	return robots.Policy{TTL: c.cfg.RobotsTTL, Retry: c.cfg.RobotsRetry, MinTTL: min(time.Minute, c.cfg.RobotsTTL)}
}

func robotsURL(host string) *url.URL {
	u, _ := url.Parse(host + "/robots.txt")
	return u
}

// hopFresh is how long a redirect chain stored in the robots.txt cache may
// be taken up where it was left; an older one starts again at robots.txt.
const hopFresh = 10 * time.Minute

// storeHop records in the robots.txt cache that origin's chain goes on at
// hop, keeping the record's last good copy and its expiry (past, or the
// chain would not be followed): whichever worker takes the host's next
// turn makes the hop, rather than begin the chain again.
func (c *Crawler) storeHop(ctx context.Context, origin string, old *frontier.RobotsRecord, hop *url.URL, hops int) error {
	rec := &frontier.RobotsRecord{}
	if old != nil {
		*rec = *old
	}
	rec.Checked, rec.Hop, rec.Hops = time.Now(), hop.String(), hops
	return c.store.PutRobots(ctx, origin, rec)
}

// storedHop returns the hop of a chain in progress that rec (an origin's
// stored record, or nil) holds, if it is recent.
func (c *Crawler) storedHop(rec *frontier.RobotsRecord) (*url.URL, int) {
	if rec == nil || rec.Hop == "" || time.Since(rec.Checked) > hopFresh {
		return nil, 0
	}
	u, err := url.Parse(rec.Hop)
	if err != nil || !c.robotsPolicy().FollowRedirect(rec.Hops-1) {
		return nil, 0
	}
	return u, rec.Hops
}
