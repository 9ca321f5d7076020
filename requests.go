package gentlecrawl

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/fetch"
	"github.com/gentlecrawl/gentlecrawl/internal/frontier"
	"github.com/gentlecrawl/gentlecrawl/internal/metrics"
	"github.com/gentlecrawl/gentlecrawl/internal/reqlog"
)

// logRequest records one request sent, in the job's request log (what
// `gentlecrawl report` reads) and in the metrics when they are served.
// kind is reqlog.KindPage, KindSitemap or KindRobots; purpose is "" for
// robots.txt; prevType is the Content-Type of the last full answer, the
// type of a 304. Without an answer res is nil and ferr says why.
func (c *Crawler) logRequest(kind, purpose string, u *url.URL, start time.Time, res *fetch.Result, ferr error, conditional bool, prevType string, saved int64) {
	r := reqlog.Record{
		Start: start, Kind: kind, Purpose: purpose, Conditional: conditional,
		Host: politenessKey(u), URL: u.String(),
	}
	if res != nil {
		r.Retried = res.Retried
		r.Start, r.TTFB, r.Duration = res.Start, res.TTFB, res.Duration
		r.Status, r.Wire, r.Body, r.Saved = res.Status, res.WireBytes, int64(len(res.Body)), saved
		ct := res.Header.Get("Content-Type")
		if ct == "" && res.NotModified {
			ct = prevType
		}
		r.Type = reqlog.FileType(ct)
		r.Compressed = res.Header.Get("Content-Encoding") != ""
	} else {
		var fe *fetch.Error
		r.Retried = errors.As(ferr, &fe) && fe.Retried
		r.Duration = time.Since(start)
		r.Error = errorKind(ferr)
	}
	if c.reqlog != nil {
		c.reqlog.Request(&r)
	}
	if m := c.metrics.Load(); m != nil {
		m.Request(&r)
	}
}

// logQueues writes each host's queue at the end of a run into the request
// log: with the Crawl-delays, what a report needs to say how long one pass
// over a host takes.
func (c *Crawler) logQueues(ctx context.Context) {
	if c.reqlog == nil {
		return
	}
	hosts, err := c.store.Hosts(context.WithoutCancel(ctx))
	if err != nil {
		c.cfg.Logger.Warn("request log: cannot list the queues", "err", err)
		return
	}
	for _, h := range hosts {
		if h.Pending > 0 {
			c.reqlog.Queued(h.Host, h.Pending)
		}
	}
}

// requestKind is the request log's kind of a queued URL's fetch.
func requestKind(item *frontier.Item) string {
	if item.Kind == kindSitemap {
		return reqlog.KindSitemap
	}
	return reqlog.KindPage
}

// logCrawlDelay writes the Crawl-delay an origin's robots.txt asks of this
// crawler into the request log, each time its rules are read.
func (c *Crawler) logCrawlDelay(origin string, r *hostRobots) {
	if c.reqlog == nil {
		return
	}
	if d, ok := r.group.CrawlDelay(); ok {
		if u, err := url.Parse(origin); err == nil {
			c.reqlog.CrawlDelay(politenessKey(u), d)
		}
	}
}

// maxMetricsHosts bounds Config.MetricsHosts: a monitoring system stores
// every series, and each host is several.
const maxMetricsHosts = 1000

// MetricsHandler returns a handler that serves the crawl's metrics in the
// Prometheus text format, for the embedder to mount (at /metrics, say):
// the requests by kind, purpose, status code and file type, response-time
// and size histograms, bytes received and spared by 304s, the URLs queued,
// the hosts being fetched and those waiting by reason (Progress), and the
// Go runtime's and the process's own metrics.
//
// The metrics count from the first call: call it before Run for the whole
// crawl. Config.MetricsHosts sets how many hosts get their own series.
// Every call returns a handler of the same metrics; it may be called from
// any goroutine, and the handler serves before, while and after Run runs.
func (c *Crawler) MetricsHandler() http.Handler {
	c.metricsMu.Lock()
	m := c.metrics.Load()
	if m == nil {
		m = metrics.New(c.cfg.MetricsHosts)
		c.metrics.Store(m)
	}
	c.metricsMu.Unlock()
	h := m.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The gauges of the crawl's state, as of this scrape.
		p := c.Progress()
		waiting := make(map[string]int, len(p.Waiting))
		for r, n := range p.Waiting {
			waiting[string(r)] = n
		}
		m.Progress(metrics.Progress{Queued: p.Queued, Active: p.Active, Requests: p.Requests, Waiting: waiting})
		h.ServeHTTP(w, r)
	})
}
