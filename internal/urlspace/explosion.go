package urlspace

import (
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/gentlecrawl/gentlecrawl/urlnorm"
)

// ExplosionConfig configures an Explosion. Its zero value gives the
// defaults.
type ExplosionConfig struct {
	// MinURLs is how many URLs a host must have before it can be reported.
	// The default is 200.
	MinURLs int
	// Ratio is how many URLs per distinct content make an explosion. The
	// default is 10.
	Ratio float64
	// MaxDigests is how many distinct contents are remembered per host;
	// beyond it every new digest counts as distinct, so an explosion can
	// be missed but never invented. The default is 100,000.
	MaxDigests int
	// MaxPatterns is how many parameter names and path patterns are
	// counted per host (the rarest is replaced first). The default is 64.
	MaxPatterns int
	// MaxHosts is how many hosts are remembered; the least recently used
	// is forgotten first. The default is 10,000.
	MaxHosts int
}

// Explosion notices hosts whose URLs grow far faster than their distinct
// content: filters that combine, sort orders, calendars, session ids. It
// counts the URLs discovered and fetched per host and the distinct contents
// fetched, and among the URLs whose content was a duplicate, the parameter
// names and path patterns they carry, so that the report can say where the
// URL space explodes.
//
// An Explosion is created with NewExplosion and is safe for concurrent use.
type Explosion struct {
	cfg ExplosionConfig
	mu  struct {
		sync.Mutex
		hosts *lru[explosionHost]
	}
}

// ExplosionReport is the state of one host.
type ExplosionReport struct {
	Host       string
	URLs       int // URLs discovered (or fetched, when more)
	Fetched    int // fetches observed with a digest
	Distinct   int // distinct contents among them
	Duplicates int // fetches whose content had been seen before
	// Exploding is set when URLs ≥ MinURLs, URLs > Ratio × Distinct and at
	// least half the fetches were duplicates (which tells a URL space that
	// explodes from a large site whose pages are still to be fetched).
	Exploding bool
	Top       []Pattern // the patterns most common among duplicates, most first; up to 5
}

// Pattern is a query parameter ("?sort") or a path pattern ("/calendar/*/*",
// digits-bearing segments as "*") and how many duplicate fetches had it.
type Pattern struct {
	Pattern    string
	Duplicates int
}

type explosionHost struct {
	discovered, fetched, distinct, duplicates int
	digests                                   map[uint64]struct{}
	patterns                                  map[string]int
}

// NewExplosion returns an empty Explosion.
func NewExplosion(cfg ExplosionConfig) *Explosion {
	cfg.MinURLs = orDefault(cfg.MinURLs, 200)
	if cfg.Ratio <= 0 {
		cfg.Ratio = 10
	}
	cfg.MaxDigests = orDefault(cfg.MaxDigests, 100_000)
	cfg.MaxPatterns = max(orDefault(cfg.MaxPatterns, 64), 1)
	cfg.MaxHosts = max(orDefault(cfg.MaxHosts, 10_000), 1)
	e := &Explosion{cfg: cfg}
	e.mu.hosts = newLRU[explosionHost](cfg.MaxHosts)
	return e
}

// Discover counts a URL newly found on its host: call it once per new
// seen-key, whether or not the URL is then accepted.
func (e *Explosion) Discover(u *url.URL) {
	host := urlnorm.HostKey(u)
	e.mu.Lock()
	e.mu.hosts.get(host).discovered++
	e.mu.Unlock()
}

// Observe records that u was fetched and returned content with the given
// digest (as for Learner.Observe: the payload digest, or a near-duplicate
// cluster id). An empty digest is ignored.
func (e *Explosion) Observe(u *url.URL, digest string) {
	if digest == "" {
		return
	}
	host := urlnorm.HostKey(u)
	d := hash(digest)
	e.mu.Lock()
	defer e.mu.Unlock()
	h := e.mu.hosts.get(host)
	h.fetched++
	if h.digests == nil {
		h.digests = make(map[uint64]struct{})
	}
	if _, dup := h.digests[d]; !dup {
		h.distinct++
		if len(h.digests) < e.cfg.MaxDigests {
			h.digests[d] = struct{}{}
		}
		return
	}
	h.duplicates++
	if h.patterns == nil {
		h.patterns = make(map[string]int)
	}
	if u.RawQuery != "" {
		var names [16]string
		seen := names[:0]
		for p := range strings.SplitSeq(u.RawQuery, "&") {
			name := urlnorm.DecodeParamName(paramName(p))
			if name == "" || slices.Contains(seen, name) {
				continue
			}
			if len(seen) < len(names) {
				seen = append(seen, name)
			}
			e.countLocked(h, "?"+name)
		}
	}
	e.countLocked(h, pathPattern(u.EscapedPath()))
}

// countLocked counts pattern with the Space-Saving algorithm: when the table
// is full, the rarest entry is replaced and its count inherited, so frequent
// patterns are never lost.
func (e *Explosion) countLocked(h *explosionHost, pattern string) {
	if _, ok := h.patterns[pattern]; ok || len(h.patterns) < e.cfg.MaxPatterns {
		h.patterns[pattern]++
		return
	}
	minKey, minN := "", -1
	for k, n := range h.patterns {
		if minN < 0 || n < minN || n == minN && k < minKey {
			minKey, minN = k, n
		}
	}
	delete(h.patterns, minKey)
	h.patterns[pattern] = minN + 1
}

// pathPattern keeps the first four segments of path, segments holding a
// digit replaced by "*".
func pathPattern(path string) string {
	var b strings.Builder
	n := 0
	for s := range strings.SplitSeq(strings.TrimPrefix(path, "/"), "/") {
		if n == 4 {
			b.WriteString("/…")
			break
		}
		b.WriteByte('/')
		if strings.ContainsAny(s, "0123456789") {
			s = "*"
		}
		if len(s) > 64 {
			s = s[:64] + "…"
		}
		b.WriteString(s)
		n++
	}
	return b.String()
}

// Report returns the state of host (a urlnorm.HostKey), or nil when the
// host is unknown.
func (e *Explosion) Report(host string) *ExplosionReport {
	e.mu.Lock()
	defer e.mu.Unlock()
	h := e.mu.hosts.peek(host)
	if h == nil {
		return nil
	}
	return e.reportLocked(host, h)
}

// Exploding returns the reports of the hosts that explode, sorted by host.
func (e *Explosion) Exploding() []*ExplosionReport {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*ExplosionReport
	e.mu.hosts.each(func(host string, h *explosionHost) {
		if r := e.reportLocked(host, h); r.Exploding {
			out = append(out, r)
		}
	})
	slices.SortFunc(out, func(a, b *ExplosionReport) int { return strings.Compare(a.Host, b.Host) })
	return out
}

func (e *Explosion) reportLocked(host string, h *explosionHost) *ExplosionReport {
	r := &ExplosionReport{
		Host:       host,
		URLs:       max(h.discovered, h.fetched),
		Fetched:    h.fetched,
		Distinct:   h.distinct,
		Duplicates: h.duplicates,
	}
	r.Exploding = r.URLs >= e.cfg.MinURLs && float64(r.URLs) > e.cfg.Ratio*float64(r.Distinct) &&
		2*h.duplicates >= h.fetched
	for p, n := range h.patterns {
		r.Top = append(r.Top, Pattern{p, n})
	}
	slices.SortFunc(r.Top, func(a, b Pattern) int {
		if a.Duplicates != b.Duplicates {
			return b.Duplicates - a.Duplicates
		}
		return strings.Compare(a.Pattern, b.Pattern)
	})
	if len(r.Top) > 5 {
		r.Top = r.Top[:5]
	}
	return r
}
