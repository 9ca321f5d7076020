package simweb

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Outage is a scripted window [Start, Start+Duration) on the Web's clock
// (Config.Now), or [first+After, first+After+Duration) from the host's first
// request when Start is zero, during which a host answers every request at once, robots.txt
// included, with Status and Retry-After — for example 503 with
// Retry-After: 120 for five minutes. An outage answers before the host's
// Capacity is consulted, as a load balancer's maintenance page would, so
// it uses no worker.
type Outage struct {
	// Start is the first instant of the window. Inside a testing/synctest
	// bubble write it from the bubble's clock, e.g.
	// time.Now().Add(30*time.Second).
	Start time.Time
	// After is used when Start is zero: the window opens this long after
	// the host's first request arrived (0: with it), however late the
	// crawler started — a script that a slow start on a loaded machine
	// cannot miss.
	After time.Duration
	// Duration is the length of the window; it must be positive.
	Duration time.Duration
	// Status is the answer, 400..599. The default (0) means 503.
	Status int
	// RetryAfter is announced with every answer (in whole seconds, rounded
	// up). The default (0) sends no Retry-After.
	RetryAfter time.Duration
}

// End returns the first instant after the window.
func (o Outage) End() time.Time { return o.Start.Add(o.Duration) }

// Active reports whether now is inside the window: Start ≤ now < End.
func (o Outage) Active(now time.Time) bool {
	return !now.Before(o.Start) && now.Before(o.End())
}

// withDefaults returns o with its defaults filled in, or an error wrapping
// errConfig.
func (o Outage) withDefaults() (Outage, error) {
	if o.Duration <= 0 {
		return o, fmt.Errorf("%w: Outage.Duration %v is not positive", errConfig, o.Duration)
	}
	if o.After < 0 {
		return o, fmt.Errorf("%w: negative Outage.After %v", errConfig, o.After)
	}
	if o.RetryAfter < 0 {
		return o, fmt.Errorf("%w: negative Outage.RetryAfter %v", errConfig, o.RetryAfter)
	}
	var err error
	o.Status, err = errorStatus("Outage.Status", o.Status)
	return o, err
}

// activeOutage returns the first of outs active at now, for a host whose
// first request arrived at first.
func activeOutage(outs []Outage, now, first time.Time) (Outage, bool) {
	for _, o := range outs {
		if o.Start.IsZero() {
			o.Start = first.Add(o.After)
		}
		if o.Active(now) {
			return o, true
		}
	}
	return Outage{}, false
}

// HostOptions are the per-host behaviours of a Web beyond its robots.txt
// profile. The zero value changes nothing.
type HostOptions struct {
	// Latency is added to Config.Latency for this host's requests: a fixed
	// delay before the request reaches the host's workers, like a long
	// network path. The default is 0.
	Latency time.Duration
	// Capacity, if non-nil, is the host's server: its requests, robots.txt
	// included (a real server's robots.txt shares its capacity), queue for
	// its workers and are refused when its queue is full. See Capacity.
	Capacity *Capacity
	// RateLimit, if non-nil, limits the rate of the host's requests as
	// nginx's limit_req does: every request, robots.txt included, passes
	// the limiter first, on the Web's clock (Config.Now); one that comes
	// too fast is answered at once with RateLimit.Status and Retry-After
	// and takes no worker of Capacity. An accepted request goes on to
	// Capacity, if any, so a host may have both a rate limit and a
	// latency that rises with load. See RateLimit.
	RateLimit *RateLimit
	// Outages are windows during which the host answers every request
	// with an error; the first active one applies.
	Outages []Outage
	// RetryAfterDate writes Retry-After as an HTTP-date (the Web's clock
	// plus the delay, rounded up to the second) instead of as seconds
	// (RFC 9110 §10.2.3 allows both).
	RetryAfterDate bool
	// Pages, if positive, is the exact number of the host's real pages
	// (Host.DistinctPages), at most MaxPagesPerHost, instead of a count
	// drawn around Config.PagesPerHost. With Traps.Facets the catalog's
	// CatalogPages count among them, so Pages must then exceed
	// CatalogPages. The default (0) keeps the drawn count.
	Pages int
	// NoFiles leaves out the host's non-HTML resources (images, PDFs,
	// archives), so that every request of a crawl is for a page. The
	// default (false) keeps about one file for every three pages.
	NoFiles bool
	// Traps are the URL-space traps of the host: session ids, a calendar,
	// a faceted catalog, an endless path, soft 404s and sitemaps. The
	// zero value sets none. See Traps.
	Traps Traps
	// Shop, if non-nil, makes the host a shop instead of a graph of
	// ordinary pages: its real pages, its trap families and the surface
	// of both are drawn from Config.Seed and the host's index. A shop
	// host takes no Traps and no Pages. See Shop.
	Shop *Shop
	// Changes, if non-nil, makes the host's pages change over time, each
	// as a Poisson process of its own rate, with validators that follow
	// the versions (or lie). A shop host takes no Changes. See Changes.
	Changes *Changes
}

// withDefaults validates o and returns a copy that shares nothing with
// the caller's.
func (o HostOptions) withDefaults() (HostOptions, error) {
	if o.Latency < 0 {
		return o, fmt.Errorf("%w: negative Latency %v", errConfig, o.Latency)
	}
	if o.Capacity != nil {
		c, err := o.Capacity.withDefaults()
		if err != nil {
			return o, err
		}
		o.Capacity = &c
	}
	if o.RateLimit != nil {
		l, err := o.RateLimit.withDefaults()
		if err != nil {
			return o, err
		}
		o.RateLimit = &l
	}
	outs := make([]Outage, len(o.Outages))
	for i, out := range o.Outages {
		var err error
		if outs[i], err = out.withDefaults(); err != nil {
			return o, err
		}
	}
	o.Outages = outs
	if o.Pages < 0 || o.Pages > MaxPagesPerHost {
		return o, fmt.Errorf("%w: Pages %d not in 0..%d", errConfig, o.Pages, MaxPagesPerHost)
	}
	if o.Traps.Facets && o.Pages != 0 && o.Pages <= CatalogPages {
		return o, fmt.Errorf("%w: Pages %d leaves no page outside the catalog's %d", errConfig, o.Pages, CatalogPages)
	}
	if err := o.Traps.validate(); err != nil {
		return o, err
	}
	if o.Shop != nil {
		if o.Traps.any() || o.Pages != 0 {
			return o, fmt.Errorf("%w: a Shop host takes no Traps and no Pages", errConfig)
		}
		s, err := o.Shop.withDefaults()
		if err != nil {
			return o, err
		}
		o.Shop = &s
	}
	if o.Changes != nil {
		if o.Shop != nil {
			return o, fmt.Errorf("%w: a Shop host takes no Changes", errConfig)
		}
		c, err := o.Changes.withDefaults()
		if err != nil {
			return o, err
		}
		o.Changes = &c
	}
	return o, nil
}

// setRetryAfter sets the Retry-After header for a delay d (none for d ≤ 0):
// seconds rounded up, or an HTTP-date if asDate.
func setRetryAfter(h http.Header, d time.Duration, now time.Time, asDate bool) {
	if d <= 0 {
		return
	}
	secs := int64((d + time.Second - 1) / time.Second)
	if asDate {
		// Rounded up so that the date never announces less than d.
		at := now.Add(d)
		if t := at.Truncate(time.Second); t.Before(at) {
			at = t.Add(time.Second)
		}
		h.Set("Retry-After", at.UTC().Format(http.TimeFormat))
		return
	}
	h.Set("Retry-After", strconv.FormatInt(secs, 10))
}
