package urlspace

import (
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/gentlecrawl/gentlecrawl/urlnorm"
)

// LearnerConfig configures a Learner. Its zero value gives the defaults.
type LearnerConfig struct {
	// MinValues is how many distinct values of a parameter, in URLs that
	// are otherwise the same and all with the same content, make the
	// parameter irrelevant for the host. The default is 3.
	MinValues int
	// MaxHosts is how many hosts are remembered; the least recently
	// observed is forgotten first. The default is 4,096.
	MaxHosts int
	// MaxParams is how many parameter names are followed per host; names
	// beyond it are not learned. The default is 32.
	MaxParams int
	// MaxGroups is how many groups of URLs (the same URL but for the
	// parameter) are followed per parameter; the oldest is replaced
	// first. The default is 16.
	MaxGroups int
}

// maxExampleBytes bounds the example URLs kept per host.
const (
	maxExampleBytes = 16 << 10
	maxExampleLen   = 256
	maxExamples     = 3
)

// Learner learns, per host, the query parameters that do not change the
// content: when URLs that differ only in one parameter keep returning the
// same content digest — MinValues distinct values with one digest, and
// never two values with different digests (a counter-example) — the
// parameter is irrelevant, and [Learner.Drop] says to leave it out of the
// seen-key from then on. A later counter-example withdraws it.
//
// A Learner is created with NewLearner and is safe for concurrent use. Its
// memory is bounded by its LearnerConfig: a few hundred kilobytes per host
// at most, usually far less.
type Learner struct {
	cfg LearnerConfig
	mu  struct {
		sync.RWMutex
		hosts    *lru[learnHost]
		response uint32 // pages observed by ObserveLinks
	}
}

// Param is a parameter learned to be irrelevant for a host, with the
// evidence.
type Param struct {
	Name     string
	Groups   int      // groups of URLs, differing only in Name, that each returned one content
	URLs     int      // distinct URLs in those groups
	Examples []string // up to 3 keys of URLs from the first such group
	// Fresh counts the distinct values seen in links when the parameter's
	// value was new on every response (a session id or a tracking token,
	// whatever its name); 0 otherwise.
	Fresh int
}

type learnHost struct {
	params       map[string]*learnParam
	fresh        map[string]*freshParam
	exampleBytes int
	// bare remembers the content of URLs fetched, by the hash of their
	// key without the parameters already learned (a group's base for a
	// parameter they lack): a parameter added to a page is judged
	// against the page without it. At most maxBare, oldest forgotten.
	bare *FIFOMap[uint64, uint64]
}

// maxBare bounds the URLs remembered per host for parameters' absence.
const maxBare = 4096

// absent is the value hash of a parameter left out of a URL.
const absent = 1

// putBare records the content of a URL by its base.
func (h *learnHost) putBare(base, digest uint64) {
	if h.bare == nil {
		h.bare = NewFIFOMap[uint64, uint64](maxBare)
	}
	h.bare.Put(base, digest)
}

// freshParam follows the values a parameter has in the links of the
// host's pages: a session id's value is new on every response, never
// seen in another, while a page number, a sort order or an item id recurs
// across the pages that link with it.
type freshParam struct {
	values    map[uint64]uint32 // value hash → the response it was first seen in
	distinct  int               // distinct values seen
	recurring int               // values seen again in another response
	tokens    int               // distinct values that look like tokens
}

// Freshness thresholds: a parameter is fresh after freshMinValues distinct
// values, none of them recurring in another response, nearly all
// token-like. At most maxFreshValues values are remembered per parameter.
const (
	freshMinValues = 4
	maxFreshValues = 512
)

func (f *freshParam) fresh() bool {
	return f.distinct >= freshMinValues && f.recurring == 0 && f.tokens*10 >= f.distinct*9
}

type learnParam struct {
	groups     []learnGroup
	index      map[uint64]int // base hash → index in groups
	next       int            // next group to replace when full
	irrelevant bool
	counter    int // counter-examples seen
	support    int
	// weak counts the groups of one value and the URL without the
	// parameter, both with one content: a parameter added to pages
	// (?source=home) that never changed one. MinValues of them, with two
	// distinct values at least (weakValues), make it irrelevant too: one
	// value that gives the page without it is a default (lang=en), which
	// says nothing of the others.
	weak       int
	weakValues []uint64
	urls       int
	examples   []string
}

type learnGroup struct {
	base, digest uint64
	values       []uint64 // hashes of distinct values seen, up to MinValues
	n            int      // distinct values seen with digest
	examples     []string
	supported    bool // reached MinValues, or two values one of them absent
	done         bool // a counter-example, or content changing under one URL
	bare         bool // the URL without the parameter is among the values
	words        bool // a value is not a number
}

// NewLearner returns an empty Learner.
func NewLearner(cfg LearnerConfig) *Learner {
	cfg.MinValues = max(orDefault(cfg.MinValues, 3), 2)
	cfg.MaxHosts = max(orDefault(cfg.MaxHosts, 4096), 1)
	cfg.MaxParams = max(orDefault(cfg.MaxParams, 32), 1)
	cfg.MaxGroups = max(orDefault(cfg.MaxGroups, 16), 1)
	l := &Learner{cfg: cfg}
	l.mu.hosts = newLRU[learnHost](cfg.MaxHosts)
	return l
}

// Observe records that u, as fetched, returned content with the given
// digest: any string equal for equal content, such as the payload's SHA-1
// or the id of its near-duplicate cluster. Only fetches that returned
// content (200 responses) should be observed; an empty digest is ignored.
// u is compared by its key (urlnorm.Key, without the session ids). Query
// parameters and path parameters (";name=value" in a segment, learned
// under the name ";name") are both learned.
func (l *Learner) Observe(u *url.URL, digest string) {
	if digest == "" {
		return
	}
	host := urlnorm.HostKey(u)
	dh := hash(digest)
	key := urlnorm.Key(u, nil)
	path, params := splitParams(key)
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.mu.hosts.get(host)
	if h.params == nil {
		h.params = make(map[string]*learnParam)
	}
	// Parameters already learned, and those whose values are fresh on
	// every response, stay out of every group's base, so that several
	// irrelevant parameters are learned even when they vary together;
	// they are still observed themselves, so that a counter-example can
	// withdraw them.
	var stack [16]bool
	learned := stack[:0]
	if len(params) > len(stack) {
		learned = make([]bool, 0, len(params))
	}
	for _, p := range params {
		name := urlnorm.DecodeParamName(p.name)
		lp := h.params[name]
		learned = append(learned, lp != nil && lp.irrelevant || h.isFresh(name))
	}
	// The URL as the base of a group of a parameter it lacks: each
	// group waiting for it gets its content as the parameter's absence.
	// (A URL with a parameter left out of bases is not the URL without
	// it.)
	full, whole := hash(path), true
	for k, p := range params {
		if learned[k] {
			whole = false
		} else {
			full = hashMore(hashMore(hashMore(full, "&"), p.name), p.value)
		}
	}
	if whole {
		for name, lp := range h.params {
			if gi, ok := lp.index[full]; ok {
				l.observeGroup(h, lp, &lp.groups[gi], absent, dh, key, h.isFresh(name))
			}
		}
	}
	for i := 0; i < len(params); {
		name := params[i].name
		j := i + 1
		for j < len(params) && params[j].name == name {
			j++
		}
		// The group: the key without this parameter.
		base := hash(path)
		for k, p := range params {
			if (k < i || k >= j) && !learned[k] {
				base = hashMore(hashMore(hashMore(base, "&"), p.name), p.value)
			}
		}
		value, word := uint64(0), false
		for _, p := range params[i:j] {
			value = hashMore(hashMore(value, p.value), "&")
			word = word || !numeric(p.value)
		}
		if value == absent {
			value++
		}
		dname := urlnorm.DecodeParamName(name)
		l.observeLocked(h, dname, base, value, dh, key, h.isFresh(dname), word)
		i = j
	}
	if whole {
		h.putBare(full, dh)
	}
}

// param is one query or path parameter of a key; a path parameter's name
// starts with ";".
type param struct{ name, value string }

// splitParams splits a URL key into its path without path parameters
// (and without the scheme and host, which are the host's) and its
// parameters: path parameters first, named ";name", then the query's,
// each group in key order (the query is sorted by name).
func splitParams(key string) (path string, params []param) {
	path, query, _ := strings.Cut(key, "?")
	if strings.IndexByte(path, ';') >= 0 {
		var b strings.Builder
		for i, seg := range strings.Split(path, "/") {
			if i > 0 {
				b.WriteByte('/')
			}
			seg, rest, ok := strings.Cut(seg, ";")
			b.WriteString(seg)
			for ok {
				var p string
				p, rest, ok = strings.Cut(rest, ";")
				name, value, _ := strings.Cut(p, "=")
				if name != "" {
					params = append(params, param{";" + name, value})
				}
			}
		}
		path = b.String()
	}
	for p := range strings.SplitSeq(query, "&") {
		if p == "" {
			continue
		}
		name, value, _ := strings.Cut(p, "=")
		params = append(params, param{name, value})
	}
	return path, params
}

func (l *Learner) observeLocked(h *learnHost, name string, base, value, digest uint64, key string, fresh, word bool) {
	p := h.params[name]
	if p == nil {
		if len(h.params) >= l.cfg.MaxParams {
			return
		}
		p = &learnParam{index: make(map[uint64]int)}
		h.params[name] = p
	}
	gi, ok := p.index[base]
	if !ok {
		g := learnGroup{base: base, digest: digest, values: make([]uint64, 0, l.cfg.MinValues)}
		if len(p.groups) < l.cfg.MaxGroups {
			gi = len(p.groups)
			p.groups = append(p.groups, g)
		} else {
			gi = p.next
			p.next = (p.next + 1) % l.cfg.MaxGroups
			old := &p.groups[gi]
			delete(p.index, old.base)
			for _, e := range old.examples {
				h.exampleBytes -= len(e)
			}
			p.groups[gi] = g
		}
		p.index[base] = gi
	}
	g := &p.groups[gi]
	g.words = g.words || word
	l.observeGroup(h, p, g, value, digest, key, fresh)
	if d, ok := h.bare.Get(base); ok && !g.bare {
		// The URL without the parameter was fetched before.
		l.observeGroup(h, p, g, absent, d, "", fresh)
	}
}

// observeGroup records one value of a parameter (absent: the URL without
// it) in one of its groups, with the content it returned.
func (l *Learner) observeGroup(h *learnHost, p *learnParam, g *learnGroup, value, digest uint64, key string, fresh bool) {
	if g.done {
		return
	}
	seen := slices.Contains(g.values, value) || value == absent && g.bare
	if digest != g.digest {
		g.done = true
		if !seen {
			// Two values of the parameter, two contents: it matters.
			p.counter++
			p.irrelevant = false
		}
		// Otherwise one URL returned two contents: no evidence either way.
		return
	}
	if seen {
		return
	}
	if value == absent {
		g.bare = true
	} else if len(g.values) < cap(g.values) {
		g.values = append(g.values, value)
	}
	g.n++
	if key != "" && len(g.examples) < maxExamples && h.exampleBytes+len(key) <= maxExampleBytes {
		if len(key) > maxExampleLen {
			key = key[:maxExampleLen]
		}
		g.examples = append(g.examples, strings.Clone(key))
		h.exampleBytes += len(key)
	}
	// A parameter whose value is fresh on every response needs less
	// evidence: two values with one content.
	need := l.cfg.MinValues
	if fresh {
		need = min(need, 2)
	}
	switch {
	case g.supported:
		p.urls++
	case g.n >= need:
		g.supported = true
		p.support++
		p.urls += g.n
		if p.examples == nil {
			p.examples = g.examples
		}
	case g.bare && g.n >= 2 && g.words:
		// One value (a word: a number without it is a page, an offset)
		// and no value, one content: weak evidence, which counts once
		// seen on MinValues pages with two values or more.
		g.supported = true
		p.weak++
		p.urls += g.n
		for _, v := range g.values {
			if !slices.Contains(p.weakValues, v) && len(p.weakValues) < 2 {
				p.weakValues = append(p.weakValues, v)
			}
		}
		if p.examples == nil || len(p.examples) < len(g.examples) {
			p.examples = g.examples
		}
	}
	p.irrelevant = (p.support > 0 || p.weak >= l.cfg.MinValues && len(p.weakValues) >= 2) && p.counter == 0
}

// ObserveLinks records the links of one fetched page of a host (each once;
// the order does not matter) so that parameters whose value is fresh on
// every response are recognized whatever their name: a session id or a
// tracking token. Such a parameter is then learned from a single pair of
// URLs that differ in it and return the same content (Observe), where
// other parameters need MinValues. Links to other hosts are ignored, and
// so are nil links (the caller's for links it did not parse, which have no
// parameters).
func (l *Learner) ObserveLinks(page *url.URL, links []*url.URL) {
	host := urlnorm.HostKey(page)
	// The keys are made before the lock is taken: other pages' workers
	// wait on it.
	var params []param
	for _, u := range links {
		if u == nil || u.RawQuery == "" && !strings.Contains(u.EscapedPath(), ";") {
			continue // nil: a link without parameters, not parsed
		}
		if urlnorm.HostKey(u) != host {
			continue
		}
		_, ps := splitParams(urlnorm.Key(u, nil))
		params = append(params, ps...)
	}
	if len(params) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.response++
	resp := l.mu.response
	h := l.mu.hosts.get(host)
	if h.fresh == nil {
		h.fresh = make(map[string]*freshParam)
	}
	for _, p := range params {
		name := urlnorm.DecodeParamName(p.name)
		f := h.fresh[name]
		if f == nil {
			if len(h.fresh) >= l.cfg.MaxParams {
				continue
			}
			f = &freshParam{values: make(map[uint64]uint32)}
			h.fresh[name] = f
		}
		v := hash(p.value)
		first, seen := f.values[v]
		switch {
		case seen && first != resp:
			f.recurring++
			f.values[v] = resp // counted once per response
		case !seen:
			f.distinct++
			if tokenLike(p.value) {
				f.tokens++
			}
			if len(f.values) < maxFreshValues {
				f.values[v] = resp
			}
		}
	}
}

// TokenVariants reports whether a and b are the same URL but for
// parameters (query or path parameters) whose values look like generated
// tokens: present in both with two such values, or in one only with such a
// value. That is the same page under two session ids, or with and without
// a tracking token, before the parameter is learned. Session ids that
// urlnorm knows are ignored.
func TokenVariants(a, b *url.URL) bool {
	if urlnorm.HostKey(a) != urlnorm.HostKey(b) {
		return false
	}
	pa, qa := splitParams(urlnorm.Key(a, nil))
	pb, qb := splitParams(urlnorm.Key(b, nil))
	if pa != pb {
		return false
	}
	differ := false
	for _, x := range qa {
		i := slices.IndexFunc(qb, func(y param) bool { return y.name == x.name })
		switch {
		case i < 0:
			if !tokenLike(x.value) {
				return false
			}
			differ = true
		case qb[i].value != x.value:
			if !tokenLike(x.value) || !tokenLike(qb[i].value) {
				return false
			}
			differ = true
		}
	}
	for _, y := range qb {
		if !slices.ContainsFunc(qa, func(x param) bool { return x.name == y.name }) {
			if !tokenLike(y.value) {
				return false
			}
			differ = true
		}
	}
	return differ
}

// tokenLike reports whether a parameter value looks like a generated
// token rather than a word, a slug, a small number or a date: at least 6
// characters mixing letters and digits, or at least 9 digits (a timestamp).
func tokenLike(v string) bool {
	if len(v) < 6 {
		return false
	}
	letters, digits := 0, 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case '0' <= c && c <= '9':
			digits++
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			letters++
		case c == '-' || c == '_' || c == '.' || c == '%':
		default:
			return false
		}
	}
	return digits > 0 && letters > 0 || digits >= 9 && digits == len(v)
}

// Drop reports whether the parameter name (percent-decoded) has been
// learned to be irrelevant on host (a urlnorm.HostKey), or is a campaign
// or click-tracking parameter (Campaign), irrelevant on every host.
func (l *Learner) Drop(host, name string) bool {
	if Campaign(name) {
		return true
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	h := l.mu.hosts.peek(host)
	if h == nil {
		return false
	}
	p := h.params[name]
	return p != nil && p.irrelevant
}

// Campaign reports whether a query parameter's name (percent-decoded) is
// one that analytics and advertising add to links to count where a visit
// came from, and that no site's content depends on: Google Analytics'
// campaign parameters (utm_source, utm_medium, utm_campaign, utm_term,
// utm_content, utm_id and the other utm_ names) and the click ids of
// Google Ads (gclid, dclid, gbraid, wbraid), Microsoft Advertising
// (msclkid), Meta (fbclid), Yandex (yclid) and Mailchimp (mc_cid,
// mc_eid). A crawler that fetches a page once per campaign that linked it
// costs the site a request for nothing; these are dropped before the
// first, where other tracking parameters are learned from what comes back.
func Campaign(name string) bool {
	if len(name) > 4 && name[:4] == "utm_" {
		return true
	}
	switch name {
	case "gclid", "dclid", "gbraid", "wbraid", "msclkid", "fbclid", "yclid", "mc_cid", "mc_eid":
		return true
	}
	return false
}

// Fresh reports whether the parameter name (percent-decoded; ";name" for
// a path parameter) has had a fresh value on every response of host that
// linked with it (see ObserveLinks), whether or not content confirmed
// that it does not matter.
func (l *Learner) Fresh(host, name string) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	h := l.mu.hosts.peek(host)
	return h != nil && h.isFresh(name)
}

// DropFunc returns Drop for one host, in the shape urlnorm.Key takes.
func (l *Learner) DropFunc(host string) func(name string) bool {
	return func(name string) bool { return l.Drop(host, name) }
}

// Irrelevant returns the parameters learned to be irrelevant on host, by
// name, with their evidence.
func (l *Learner) Irrelevant(host string) []Param {
	l.mu.RLock()
	defer l.mu.RUnlock()
	h := l.mu.hosts.peek(host)
	if h == nil {
		return nil
	}
	var out []Param
	for name, p := range h.params {
		if p.irrelevant {
			pr := Param{Name: name, Groups: p.support + p.weak, URLs: p.urls, Examples: slices.Clone(p.examples)}
			if h.isFresh(name) {
				pr.Fresh = h.fresh[name].distinct
			}
			out = append(out, pr)
		}
	}
	slices.SortFunc(out, func(a, b Param) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Hosts returns the hosts with at least one irrelevant parameter, sorted.
func (l *Learner) Hosts() []string {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var out []string
	l.mu.hosts.each(func(host string, h *learnHost) {
		for _, p := range h.params {
			if p.irrelevant {
				out = append(out, host)
				return
			}
		}
	})
	slices.Sort(out)
	return out
}

// isFresh reports whether the parameter name has had a fresh value on
// every response that linked with it (see Learner.ObserveLinks).
func (h *learnHost) isFresh(name string) bool {
	f := h.fresh[name]
	return f != nil && f.fresh()
}

func paramName(p string) string {
	if i := strings.IndexByte(p, '='); i >= 0 {
		return p[:i]
	}
	return p
}
