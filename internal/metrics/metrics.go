// Package metrics exposes a running crawl to Prometheus: how many requests
// it sends and how they end, how long servers take to answer, how many bytes
// come over the wire and how many conditional requests and compression
// spare, and how much work is waiting.
//
// Every request the crawler sends reaches Metrics.Request as the
// reqlog.Record the request log writes; the crawler's live progress reaches
// Metrics.Progress about once a second. Metrics.Handler serves the lot in
// the Prometheus text format, together with the Go runtime and process
// metrics, from a registry of its own (never the global default one, so two
// crawls in one program do not collide).
//
// Label values are bounded, so a crawl of a million hosts cannot grow the
// series without limit: there is never a per-URL label, unexpected kinds,
// purposes, file types and status codes are counted as "other", at most
// 32 kinds of failure get a name of their own, and only the
// first hosts seen (as many as New is told) get a host label value of
// their own.
package metrics

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/gentlecrawl/gentlecrawl/internal/reqlog"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Label values standing for a missing or an unbounded value.
const (
	// other is the label value under which a value beyond a bound (or not
	// one of the expected ones) is counted.
	other = "other"
	// none is the label value of an empty field: no status code without an
	// answer, no purpose for robots.txt and sitemaps, no file type without
	// an answer.
	none = "none"
)

// maxErrorLabels is how many kinds of failure get an "error" label value of
// their own; failures of any further kind are counted as "other".
const maxErrorLabels = 32

// WaitReasons are the reasons a host waits that the crawler gives
// (Progress.Waiting's keys), each a series of gentlecrawl_hosts_waiting
// from the start.
var WaitReasons = []string{"delay", "rate", "backoff", "robots", "address"}

// maxWaitLabels bounds the "reason" label of gentlecrawl_hosts_waiting the
// same way: the crawler has five reasons, this leaves room for more.
const maxWaitLabels = 16

// maxLabelLen is the longest error or host value kept as a label value; a
// longer one is counted as "other" (a host key is scheme://host:port, a
// host name at most 253 bytes).
const maxLabelLen = 300

// Buckets of the response time histograms, in seconds: from 5 ms (a server
// on the same network) to a minute (beyond the crawler's own time-outs),
// each about twice to two and a half times the one before.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60}

// Buckets of the response size histogram, in bytes: 256 B to 64 MiB, each
// four times the one before.
var sizeBuckets = prometheus.ExponentialBuckets(256, 4, 10)

// Kinds of request as indexes of the per-kind series; kindOther is any
// kind the crawler does not (yet) send.
const (
	kindPage = iota
	kindRobots
	kindSitemap
	kindOther
	numKinds
)

var kindNames = [numKinds]string{reqlog.KindPage, reqlog.KindRobots, reqlog.KindSitemap, other}

func kindIndex(kind string) int {
	switch kind {
	case reqlog.KindPage:
		return kindPage
	case reqlog.KindRobots:
		return kindRobots
	case reqlog.KindSitemap:
		return kindSitemap
	}
	return kindOther
}

// Progress is the state of the crawl Metrics.Progress shows.
type Progress struct {
	Queued int // URLs waiting to be fetched
	Active int // hosts being fetched now
	// Requests sent so far. It is not exported again: the request counters,
	// fed one request at a time by Request, already count every one.
	Requests int
	Waiting  map[string]int // hosts waiting, by reason ("delay", "rate", "backoff", "robots", "address")
}

// Metrics holds the metrics of one crawl. Its methods are safe for
// concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	requests   *prometheus.CounterVec
	requestsBy sync.Map // requestKey → prometheus.Counter

	errors   *prometheus.CounterVec
	errorsBy sync.Map // errorKey → prometheus.Counter
	errNames *bounded

	duration, ttfb, size [numKinds]prometheus.Observer

	wire, decoded                        prometheus.Counter
	savedNotModified, savedByCompression prometheus.Counter
	condNotModified, condFull            prometheus.Counter
	condNone                             prometheus.Counter

	queued, active prometheus.Gauge
	waiting        *prometheus.GaugeVec
	waitMu         sync.Mutex
	waitNames      *bounded
	waitSet        map[string]bool // reasons given a value so far

	// Per host; all nil when New is given no host labels.
	hosts          *bounded
	hostRequests   *prometheus.CounterVec
	hostRequestsBy sync.Map // hostKey → prometheus.Counter
	hostDuration   *prometheus.SummaryVec
	hostDurationBy sync.Map // host label → prometheus.Observer
}

// requestKey is a combination of label values of
// gentlecrawl_requests_total, each already bounded; code is the status
// code, 0 for none and -1 for other.
type requestKey struct {
	kind, purpose, typ string
	code               int
}

type errorKey struct{ kind, err string }

type hostKey struct {
	host string
	code int
}

// New returns the metrics of one crawl; hostLabels is how many hosts get
// their own "host" label value (the first hosts seen); requests to every
// other host are counted under host="other". 0: no per-host series at all.
func New(hostLabels int) *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	f := func(c prometheus.Collector) prometheus.Collector { reg.MustRegister(c); return c }
	m := &Metrics{reg: reg, errNames: newBounded(maxErrorLabels), waitNames: newBounded(maxWaitLabels), waitSet: map[string]bool{}}

	m.requests = f(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gentlecrawl_requests_total",
		Help: "HTTP requests the crawler sent, counted when the answer (or the failure) is in. " +
			"kind: page, robots (robots.txt) or sitemap. " +
			"purpose: discovery (a page fetched for the first time), refresh (fetched again to see whether it changed), or none for robots.txt and sitemaps. " +
			"code: the HTTP status code of the answer, or none when no answer came (see gentlecrawl_request_errors_total). " +
			"type: the kind of file answered (html, image, css, javascript, pdf, other), or none without an answer.",
	}, []string{"kind", "purpose", "code", "type"})).(*prometheus.CounterVec)

	m.errors = f(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gentlecrawl_request_errors_total",
		Help: "Requests that got no HTTP answer at all, by what went wrong: " +
			"dns (the name did not resolve), refused (the connection was refused), timeout (the server did not answer in time), tls (the secure connection failed), and so on. " +
			"At most " + strconv.Itoa(maxErrorLabels) + " kinds of failure are named; any further ones are counted as other.",
	}, []string{"kind", "error"})).(*prometheus.CounterVec)

	duration := f(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "gentlecrawl_response_duration_seconds",
		Help: "How long requests took, from sending the request to the last byte of the answer; " +
			"for a request that failed, to the failure (a time-out shows here as its full wait).",
		Buckets: durationBuckets,
	}, []string{"kind"})).(*prometheus.HistogramVec)
	ttfb := f(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "gentlecrawl_response_ttfb_seconds",
		Help: "How long servers took to start answering: from sending the request to the first byte of the answer. " +
			"Only requests that got an answer.",
		Buckets: durationBuckets,
	}, []string{"kind"})).(*prometheus.HistogramVec)
	size := f(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "gentlecrawl_response_size_bytes",
		Help: "Size of answers as they came over the network, headers included and before decompression. " +
			"Only requests that got an answer.",
		Buckets: sizeBuckets,
	}, []string{"kind"})).(*prometheus.HistogramVec)
	for k, name := range kindNames {
		m.duration[k] = duration.WithLabelValues(name)
		m.ttfb[k] = ttfb.WithLabelValues(name)
		m.size[k] = size.WithLabelValues(name)
	}

	received := f(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gentlecrawl_received_bytes_total",
		Help: "Bytes the crawler received. form: wire counts them as they came over the network (headers included, compressed when the server compressed), " +
			"decoded counts the bodies after decompression.",
	}, []string{"form"})).(*prometheus.CounterVec)
	m.wire = received.WithLabelValues("wire")
	m.decoded = received.WithLabelValues("decoded")

	saved := f(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gentlecrawl_saved_bytes_total",
		Help: "Bytes that did not have to be sent. by: not_modified counts the size of the full answer each 304 Not Modified spared; " +
			"compression counts how much smaller compressed answers were on the wire than decoded.",
	}, []string{"by"})).(*prometheus.CounterVec)
	m.savedNotModified = saved.WithLabelValues("not_modified")
	m.savedByCompression = saved.WithLabelValues("compression")

	cond := f(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gentlecrawl_conditional_requests_total",
		Help: "Conditional requests (If-None-Match or If-Modified-Since, to refetch a page only if it changed), by how they ended: " +
			"not_modified (a 304, nothing resent), full (the whole page was sent again), none (no answer).",
	}, []string{"result"})).(*prometheus.CounterVec)
	m.condNotModified = cond.WithLabelValues("not_modified")
	m.condFull = cond.WithLabelValues("full")
	m.condNone = cond.WithLabelValues(none)

	m.queued = f(prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "gentlecrawl_queued_urls",
		Help: "URLs waiting to be fetched.",
	})).(prometheus.Gauge)
	m.active = f(prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "gentlecrawl_hosts_active",
		Help: "Hosts the crawler is fetching from right now.",
	})).(prometheus.Gauge)
	m.waiting = f(prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "gentlecrawl_hosts_waiting",
		Help: "Hosts with URLs to fetch that the crawler holds back for now, by reason: " +
			"delay (the pause it keeps between two requests to a host), rate (the pace it learned from how the host answers), " +
			"backoff (the host pushed back with refusals, errors or Retry-After), robots (its robots.txt could not be read; tried again later), " +
			"address (other hosts on the same IP address are being fetched).",
	}, []string{"reason"})).(*prometheus.GaugeVec)
	// The crawler's reasons are there from the start, at 0: a scrape
	// before any host has waited (or of a crawl whose hosts never do)
	// finds the series a dashboard expects rather than none.
	for _, reason := range WaitReasons {
		m.waiting.WithLabelValues(m.waitNames.label(reason)).Set(0)
		m.waitSet[m.waitNames.label(reason)] = true
	}

	if hostLabels > 0 {
		m.hosts = newBounded(hostLabels)
		m.hostRequests = f(prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gentlecrawl_host_requests_total",
			Help: "HTTP requests sent to each host, by status code (none: no answer). " +
				"Only the first " + strconv.Itoa(hostLabels) + " hosts the crawl meets are named; the requests to all others are counted under host=\"other\".",
		}, []string{"host", "code"})).(*prometheus.CounterVec)
		// A summary without quantiles is just a sum and a count, kept
		// lock-free: enough for the mean time each host takes
		// (rate of _sum / rate of _count), the question an operator asks
		// of one host. Buckets would multiply the series of every host by
		// their number, and the distribution is in the histogram above.
		m.hostDuration = f(prometheus.NewSummaryVec(prometheus.SummaryOpts{
			Name: "gentlecrawl_host_response_duration_seconds",
			Help: "Time requests to each host took, to the last byte of the answer or to the failure: " +
				"the sum and the count, so their rates give the mean. Hosts beyond the first " + strconv.Itoa(hostLabels) + " are counted as host=\"other\".",
		}, []string{"host"})).(*prometheus.SummaryVec)
	}
	return m
}

// Request counts one request sent, once its answer (or failure) is in.
func (m *Metrics) Request(r *reqlog.Record) {
	k := kindIndex(r.Kind)
	kind := kindNames[k]
	code := boundCode(r.Status)
	m.requestCounter(requestKey{kind: kind, purpose: boundPurpose(r.Purpose), typ: boundType(r.Type), code: code}).Inc()

	answered := r.Status != 0
	if !answered {
		e := r.Error
		if e == "" {
			e = "unknown"
		}
		m.errorCounter(errorKey{kind: kind, err: m.errNames.label(e)}).Inc()
	}

	m.duration[k].Observe(r.Duration.Seconds())
	if answered {
		m.ttfb[k].Observe(r.TTFB.Seconds())
		m.size[k].Observe(float64(r.Wire))
	}

	if r.Wire > 0 {
		m.wire.Add(float64(r.Wire))
	}
	if r.Body > 0 {
		m.decoded.Add(float64(r.Body))
	}
	if r.Saved > 0 {
		m.savedNotModified.Add(float64(r.Saved))
	}
	if r.Compressed && r.Body > r.Wire {
		m.savedByCompression.Add(float64(r.Body - r.Wire))
	}
	if r.Conditional {
		switch {
		case r.Status == http.StatusNotModified:
			m.condNotModified.Inc()
		case answered:
			m.condFull.Inc()
		default:
			m.condNone.Inc()
		}
	}

	if m.hosts != nil {
		host := m.hosts.label(r.Host)
		m.hostCounter(hostKey{host: host, code: code}).Inc()
		m.hostObserver(host).Observe(r.Duration.Seconds())
	}
}

// The children of the label vectors are cached in sync.Maps: each
// combination of label values is written once and then only read, the
// case sync.Map is built for, and a read neither locks nor allocates.

func (m *Metrics) requestCounter(key requestKey) prometheus.Counter {
	if c, ok := m.requestsBy.Load(key); ok {
		return c.(prometheus.Counter)
	}
	c := m.requests.WithLabelValues(key.kind, key.purpose, codeText(key.code), key.typ)
	m.requestsBy.Store(key, c)
	return c
}

func (m *Metrics) errorCounter(key errorKey) prometheus.Counter {
	if c, ok := m.errorsBy.Load(key); ok {
		return c.(prometheus.Counter)
	}
	c := m.errors.WithLabelValues(key.kind, key.err)
	m.errorsBy.Store(key, c)
	return c
}

func (m *Metrics) hostCounter(key hostKey) prometheus.Counter {
	if c, ok := m.hostRequestsBy.Load(key); ok {
		return c.(prometheus.Counter)
	}
	c := m.hostRequests.WithLabelValues(key.host, codeText(key.code))
	m.hostRequestsBy.Store(key, c)
	return c
}

func (m *Metrics) hostObserver(host string) prometheus.Observer {
	if o, ok := m.hostDurationBy.Load(host); ok {
		return o.(prometheus.Observer)
	}
	o := m.hostDuration.WithLabelValues(host)
	m.hostDurationBy.Store(host, o)
	return o
}

// Progress updates the gauges of the crawl's state. A waiting reason that
// was set before but is absent from p goes back to 0.
func (m *Metrics) Progress(p Progress) {
	m.queued.Set(float64(p.Queued))
	m.active.Set(float64(p.Active))

	m.waitMu.Lock()
	defer m.waitMu.Unlock()
	now := make(map[string]int, len(p.Waiting))
	for reason, n := range p.Waiting {
		now[m.waitNames.label(reason)] += n
	}
	for reason, n := range now {
		m.waiting.WithLabelValues(reason).Set(float64(n))
		m.waitSet[reason] = true
	}
	for reason := range m.waitSet {
		if _, ok := now[reason]; !ok {
			m.waiting.WithLabelValues(reason).Set(0)
		}
	}
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		// A collector that fails (the process collector, say, on a system
		// without /proc) should not hide the crawl's own metrics.
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      m.reg,
	})
}

func boundPurpose(p string) string {
	switch p {
	case "discovery":
		return "discovery"
	case "refresh":
		return "refresh"
	case "":
		return none
	}
	return other
}

func boundType(t string) string {
	switch t {
	case "":
		return none
	case reqlog.TypeHTML:
		return reqlog.TypeHTML
	case reqlog.TypeImage:
		return reqlog.TypeImage
	case reqlog.TypeCSS:
		return reqlog.TypeCSS
	case reqlog.TypeJS:
		return reqlog.TypeJS
	case reqlog.TypePDF:
		return reqlog.TypePDF
	case reqlog.TypeOther:
		return reqlog.TypeOther
	}
	return other
}

// boundCode keeps the status codes HTTP defines (100 to 599) and 0 for no
// answer; anything else a server sends becomes -1, "other".
func boundCode(status int) int {
	if status == 0 || status >= 100 && status <= 599 {
		return status
	}
	return -1
}

func codeText(code int) string {
	switch code {
	case 0:
		return none
	case -1:
		return other
	}
	return strconv.Itoa(code)
}

// bounded hands out label values for free-form strings (hosts, kinds of
// failure): the first max distinct strings are their own label value,
// everything after is "other". Looking up a string already named neither
// locks nor allocates; once the bound is reached, nor does any other.
type bounded struct {
	max   int
	names sync.Map // string → the same string, copied
	full  atomic.Bool
	mu    sync.Mutex
	n     int
}

func newBounded(max int) *bounded {
	b := &bounded{max: max}
	b.full.Store(max <= 0)
	return b
}

func (b *bounded) label(s string) string {
	if v, ok := b.names.Load(s); ok {
		return v.(string)
	}
	if b.full.Load() || !labelValue(s) {
		return other
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if v, ok := b.names.Load(s); ok {
		return v.(string)
	}
	if b.n >= b.max {
		b.full.Store(true)
		return other
	}
	// A copy: the caller's string may share memory with a larger buffer.
	s = strings.Clone(s)
	b.names.Store(s, s)
	b.n++
	if b.n == b.max {
		b.full.Store(true)
	}
	return s
}

// labelValue reports whether s may be a label value of its own: not empty,
// not too long, valid UTF-8 (client_golang refuses anything else), and not
// one of the values that stand for something else.
func labelValue(s string) bool {
	return s != "" && len(s) <= maxLabelLen && s != other && s != none && utf8.ValidString(s)
}
