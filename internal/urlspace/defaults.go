package urlspace

import (
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// DefaultsConfig configures Defaults. Its zero value gives the defaults.
type DefaultsConfig struct {
	// MaxPages is how many fetched pages are remembered to compare others
	// with; the oldest is forgotten first. The default is 65,536.
	MaxPages int
	// MaxHosts is how many hosts' learned defaults are kept. The default
	// is 10,000.
	MaxHosts int
}

// Defaults learns, per host and path (digit segments masked), the query
// parameters whose presence with one value gives the same page as their
// absence: start=0, page=1, sort=<the default order>, view=full. One pair of URLs that differ only
// in such a parameter and have the same content teaches it when the value
// is 0, 1 or empty; two pairs otherwise. A pair with different content
// (the parameter matters after all) withdraws it for good.
//
// Defaults is created with NewDefaults and is safe for concurrent use.
// Its memory is bounded by MaxPages (some 40 bytes a page) and MaxHosts.
type Defaults struct {
	cfg DefaultsConfig
	any atomic.Bool // a default was learned, for some host
	mu  struct {
		sync.Mutex
		content  *FIFOMap[uint64, uint64]    // key hash → content hash
		variants *FIFOMap[uint64, []variant] // hash of a key without one parameter → the pages with it
		hosts    *lru[map[string]*dflt]      // host → "name=value" → evidence
	}
}

type variant struct {
	param   string // "name=value" as in the key
	content uint64
}

type dflt struct {
	pairs   int
	counter bool
}

// NewDefaults returns an empty Defaults.
func NewDefaults(cfg DefaultsConfig) *Defaults {
	cfg.MaxPages = max(orDefault(cfg.MaxPages, 1<<16), 1)
	cfg.MaxHosts = max(orDefault(cfg.MaxHosts, 10_000), 1)
	d := &Defaults{cfg: cfg}
	// Each forgets its oldest key when full: pages met late in a long
	// crawl teach as pages met early did.
	d.mu.content = NewFIFOMap[uint64, uint64](cfg.MaxPages)
	d.mu.variants = NewFIFOMap[uint64, []variant](cfg.MaxPages)
	d.mu.hosts = newLRU[map[string]*dflt](cfg.MaxHosts)
	return d
}

// maxVariantParams bounds the parameters of a URL that are each tried as
// a default: a URL with more is compared whole only.
const maxVariantParams = 6

// Observe records that the page at key (a URL key of host, as
// urlnorm.Key makes it, its parameters sorted) had the given content (an
// equal string for equal content; "" is ignored), and learns from the
// pages fetched before that differ from it by one parameter.
func (d *Defaults) Observe(host, key, content string) {
	if content == "" {
		return
	}
	ch := hash(content)
	base, query, _ := strings.Cut(key, "?")
	var params []string
	if query != "" {
		params = strings.Split(query, "&")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	kh := hash(key)
	if _, ok := d.mu.content.Get(kh); !ok {
		d.mu.content.Put(kh, ch)
	}
	// This page without one of its parameters, fetched before.
	if len(params) <= maxVariantParams {
		for i, p := range params {
			without := withoutIndex(base, params, i)
			wh := hash(without)
			if c, ok := d.mu.content.Get(wh); ok {
				d.learn(host, scope(base, p), c == ch)
			}
			if vs, _ := d.mu.variants.Get(wh); len(vs) < 8 {
				d.mu.variants.Put(wh, append(vs, variant{param: p, content: ch}))
			}
		}
	}
	// Pages fetched before that are this one with a parameter more.
	vs, _ := d.mu.variants.Get(kh)
	for _, v := range vs {
		d.learn(host, scope(base, v.param), v.content == ch)
	}
}

func (d *Defaults) learn(host, param string, same bool) {
	h := d.mu.hosts.get(host)
	if *h == nil {
		*h = make(map[string]*dflt)
	}
	e := (*h)[param]
	if e == nil {
		if len(*h) >= 256 {
			return
		}
		e = &dflt{}
		(*h)[param] = e
	}
	if !same {
		e.counter = true
	} else {
		e.pairs++
		if e.learned(param) {
			d.any.Store(true)
		}
	}
	d.widen(*h, param)
}

// wideAfter is how many paths must have taught a default, and none
// withdrawn it, for it to hold on every path of the host: from=0 on
// /sections/world, /sections/books and /tags/x is the host's way of
// naming a first page.
const wideAfter = 3

// widePrefix marks, in a host's map, the entry counting the paths that
// taught a "name=value" (pairs) and whether one withdrew it (counter).
const widePrefix = "\x00*?"

// widen recounts the host-wide entry of the parameter of param
// ("path?name=value").
func (d *Defaults) widen(h map[string]*dflt, param string) {
	if strings.HasPrefix(param, widePrefix) {
		return
	}
	_, p, _ := strings.Cut(param, "?")
	w := &dflt{}
	for k, e := range h {
		if strings.HasPrefix(k, widePrefix) || !strings.HasSuffix(k, "?"+p) {
			continue
		}
		if e.counter {
			w.counter = true
		}
		if e.learned(k) {
			w.pairs++
		}
	}
	if _, ok := h[widePrefix+p]; ok || len(h) < 256 {
		h[widePrefix+p] = w
	}
}

// wide reports whether a host-wide entry holds on every path.
func (e *dflt) wide() bool { return e != nil && !e.counter && e.pairs >= wideAfter }

// scope names a parameter ("name=value") of a URL key's base (scheme,
// host and path) for the path it was seen under, digit segments masked:
// start=0 is the first page of /viewforum.php, fid=15 is redundant on
// /showthread.php but names the board on /forumdisplay.php.
func scope(base, param string) string {
	return pathOf(KeyRequestURI(base)) + "?" + param
}

// pathOf returns a path with its segments that hold a digit written "*".
func pathOf(path string) string {
	if !hasDigit(path) {
		return path
	}
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if hasDigit(s) {
			segs[i] = "*"
		}
	}
	return strings.Join(segs, "/")
}

// learned reports whether "path?name=value" is a default of the host's.
func (e *dflt) learned(param string) bool {
	if e == nil || e.counter {
		return false
	}
	_, param, _ = strings.Cut(param, "?")
	_, v, _ := strings.Cut(param, "=")
	if FirstValue(v) {
		return e.pairs >= 1
	}
	return e.pairs >= 2
}

// Strip returns u without the query parameters learned to be defaults of
// its host (a urlnorm.HostKey), and whether it took any away; u itself is
// not changed. Parameters are compared as "name=value", as they appear in
// the URL.
func (d *Defaults) Strip(host string, u *url.URL) (*url.URL, bool) {
	if u.RawQuery == "" || !d.any.Load() {
		return u, false
	}
	d.mu.Lock()
	h := d.mu.hosts.peek(host)
	if h == nil || len(*h) == 0 {
		d.mu.Unlock()
		return u, false
	}
	params := strings.Split(u.RawQuery, "&")
	kept := params[:0:0]
	path := pathOf(u.EscapedPath())
	for _, p := range params {
		if isDefault(*h, path, p) {
			continue
		}
		kept = append(kept, p)
	}
	d.mu.Unlock()
	if len(kept) == len(params) {
		return u, false
	}
	v := *u
	v.RawQuery = strings.Join(kept, "&")
	v.ForceQuery = false
	return &v, true
}

// isDefault reports whether "name=value" p is a learned default of the
// host's (h) on path (digit segments masked): learned there, or on enough
// other paths and withdrawn on none, this one included.
func isDefault(h map[string]*dflt, path, p string) bool {
	k := path + "?" + p
	e := h[k]
	return e.learned(k) || (e == nil || !e.counter) && h[widePrefix+p].wide()
}

// FetchedWithDefault reports whether a page fetched before (and still
// remembered) is the page at key, a URL key of host as Observe takes it,
// with one parameter more whose value has since been learned to be a
// default there: /thread.php?t=5&offset=0, fetched first because it was
// the first link found, is /thread.php?t=5, which need not be fetched
// again once offset=0 is known to change nothing. Only a first page's
// value counts (0, 1 or empty): a word learned from two pairs (a search
// word highlighted, a board named beside its topic) makes a view of the
// page or names its context, and the page's own URL is still fetched,
// as the site's address for it.
func (d *Defaults) FetchedWithDefault(host, key string) bool {
	if !d.any.Load() {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	vs, _ := d.mu.variants.Get(hash(key))
	if len(vs) == 0 {
		return false
	}
	h := d.mu.hosts.peek(host)
	if h == nil {
		return false
	}
	base, _, _ := strings.Cut(key, "?")
	path := pathOf(KeyRequestURI(base))
	for _, v := range vs {
		if _, val, _ := strings.Cut(v.param, "="); FirstValue(val) && isDefault(*h, path, v.param) {
			return true
		}
	}
	return false
}

// Learned returns the host's learned defaults ("path?name=value") with
// the pairs of pages that taught each.
func (d *Defaults) Learned(host string) map[string]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	h := d.mu.hosts.peek(host)
	if h == nil {
		return nil
	}
	out := map[string]int{}
	for p, e := range *h {
		if !strings.HasPrefix(p, widePrefix) && e.learned(p) {
			out[p] = e.pairs
		}
	}
	return out
}

// Hosts returns the hosts with a learned default, sorted.
func (d *Defaults) Hosts() []string {
	d.mu.Lock()
	var hosts []string
	d.mu.hosts.each(func(host string, h *map[string]*dflt) {
		for p, e := range *h {
			if !strings.HasPrefix(p, widePrefix) && e.learned(p) {
				hosts = append(hosts, host)
				return
			}
		}
	})
	d.mu.Unlock()
	slices.Sort(hosts)
	return hosts
}

// withoutIndex returns base with the query params but the i-th.
func withoutIndex(base string, params []string, i int) string {
	if len(params) == 1 {
		return base
	}
	var b strings.Builder
	b.WriteString(base)
	sep := byte('?')
	for j, p := range params {
		if j == i {
			continue
		}
		b.WriteByte(sep)
		sep = '&'
		b.WriteString(p)
	}
	return b.String()
}

// Any reports whether some host has a learned default.
func (d *Defaults) Any() bool { return d.any.Load() }
