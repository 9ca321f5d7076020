package simweb

import (
	"fmt"
	"hash/fnv"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Web is a synthetic web of virtual hosts. It is an http.Handler that
// dispatches on the Host header. Create it with New; it is safe for
// concurrent use.
type Web struct {
	cfg    Config
	hosts  []*Host
	byName map[string]*Host
	cache  *bodyCache
	loop   atomic.Pointer[loopback] // set by ServeLoopback

	addrModels struct {
		sync.Mutex
		m map[string]*Model // by local address; see Config.AddrCapacity
	}

	log struct {
		sync.Mutex
		entries  []LogEntry
		inflight int           // requests begun and not yet logged
		idle     chan struct{} // closed when inflight drops to 0; nil if nobody waits
	}
}

// Host is one virtual host of a Web. Its graph is built on first use.
type Host struct {
	// Name is the host name, e.g. "a.test".
	Name    string
	Profile Profile
	// Addr is the loopback address ("127.0.0.3:8080") assigned to the host
	// by the latest ServeLoopback, or "". ServeLoopback writes it before
	// it returns; do not read it concurrently with ServeLoopback.
	Addr string

	web   *Web
	index int
	opts  hostOptions

	skelOnce  sync.Once
	skel      *skeleton
	graphOnce sync.Once
	grph      *graph
	shopOnce  sync.Once
	shopSite  *shopSite   // of HostOptions.Shop; see Host.shop
	changes   changeState // of HostOptions.Changes; see Host.changeProcs

	firstMu sync.Mutex
	first   time.Time // when the first request arrived; see firstRequest
}

// firstRequest returns when h's first request arrived: now, if this is it.
func (h *Host) firstRequest(now time.Time) time.Time {
	h.firstMu.Lock()
	defer h.firstMu.Unlock()
	if h.first.IsZero() {
		h.first = now
	}
	return h.first
}

// hostOptions are the per-host behaviours of the server: from the
// profile, Config and Config.HostOptions.
type hostOptions struct {
	profile    Profile
	crawlDelay string // seconds, as written in robots.txt
	HostOptions
	model   *Model   // of HostOptions.Capacity; nil without one
	limiter *Limiter // of HostOptions.RateLimit; nil without one
}

// New returns the web described by cfg. It is cheap even for many hosts:
// each host's graph is built when it is first needed.
func New(cfg Config) (*Web, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	w := &Web{
		cfg:    cfg,
		hosts:  make([]*Host, cfg.Hosts),
		byName: make(map[string]*Host, cfg.Hosts),
		cache:  newBodyCache(64 << 20),
	}
	for i := range w.hosts {
		p := cfg.Profiles[i%len(cfg.Profiles)]
		h := &Host{
			Name:    hostLabel(i) + "." + cfg.Domain,
			Profile: p,
			web:     w,
			index:   i,
			opts:    hostOptions{profile: p, crawlDelay: formatSeconds(cfg.CrawlDelay)},
		}
		if cfg.HostOptions != nil {
			o, err := cfg.HostOptions(i, h.Name).withDefaults()
			if err != nil {
				return nil, fmt.Errorf("%w (host %s)", err, h.Name)
			}
			if o.Changes != nil && o.Changes.Start.IsZero() {
				o.Changes.Start = cfg.Now()
			}
			h.opts.HostOptions = o
			if o.Capacity != nil {
				c := *o.Capacity
				c.Seed ^= uint64(cfg.Seed)<<32 ^ uint64(i) // jitter differs per host
				if h.opts.model, err = NewModel(c); err != nil {
					return nil, fmt.Errorf("%w (host %s)", err, h.Name)
				}
			}
			if o.RateLimit != nil {
				if h.opts.limiter, err = NewLimiter(*o.RateLimit); err != nil {
					return nil, fmt.Errorf("%w (host %s)", err, h.Name)
				}
			}
		}
		w.hosts[i] = h
		w.byName[h.Name] = h
	}
	return w, nil
}

// Hosts returns the hosts of the web in index order. The slice is a copy;
// the Hosts are shared.
func (w *Web) Hosts() []*Host { return append([]*Host(nil), w.hosts...) }

// Host returns the host called name (case-insensitive, port and trailing
// dot ignored), or nil.
func (w *Web) Host(name string) *Host { return w.byName[normalizeHost(name)] }

// normalizeHost turns a Host header into a host name: port stripped,
// lower-cased, trailing dot removed.
func normalizeHost(hostport string) string {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

func (h *Host) skeleton() *skeleton {
	h.skelOnce.Do(func() { h.skel = buildSkeleton(&h.web.cfg, h.index, &h.opts.HostOptions) })
	return h.skel
}

func (h *Host) graph() *graph {
	h.graphOnce.Do(func() { h.grph = h.buildGraph() })
	return h.grph
}

// Options returns a copy of the options the host was given by
// Config.HostOptions, with defaults filled in.
func (h *Host) Options() HostOptions {
	o := h.opts.HostOptions
	if o.Capacity != nil {
		c := *o.Capacity
		o.Capacity = &c
	}
	if o.RateLimit != nil {
		l := *o.RateLimit
		o.RateLimit = &l
	}
	o.Outages = append([]Outage(nil), o.Outages...)
	if o.Shop != nil {
		s := *o.Shop
		o.Shop = &s
	}
	if o.Changes != nil {
		c := *o.Changes
		c.Rates = append([]float64(nil), c.Rates...)
		o.Changes = &c
	}
	return o
}

// Model returns the host's capacity Model, or nil when it has no Capacity.
func (h *Host) Model() *Model { return h.opts.model }

// Limiter returns the host's rate Limiter, or nil when it has no
// RateLimit.
func (h *Host) Limiter() *Limiter { return h.opts.limiter }

// AddrModel returns the Model of Config.AddrCapacity for requests arriving
// on the local address addr ("127.0.0.2:8080", as in LogEntry.Local; ""
// for requests without one), creating it if no request has arrived there
// yet. It returns nil when Config.AddrCapacity is nil.
func (w *Web) AddrModel(addr string) *Model {
	if w.cfg.AddrCapacity == nil {
		return nil
	}
	w.addrModels.Lock()
	defer w.addrModels.Unlock()
	if m := w.addrModels.m[addr]; m != nil {
		return m
	}
	if w.addrModels.m == nil {
		w.addrModels.m = make(map[string]*Model)
	}
	c := *w.cfg.AddrCapacity
	f := fnv.New64a()
	f.Write([]byte(addr))
	c.Seed ^= uint64(w.cfg.Seed)<<32 ^ f.Sum64()
	m, _ := NewModel(c) // validated by New
	w.addrModels.m[addr] = m
	return m
}
