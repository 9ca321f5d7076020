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
		hosts *lru[learnHost]
	}
}

// Param is a parameter learned to be irrelevant for a host, with the
// evidence.
type Param struct {
	Name     string
	Groups   int      // groups of URLs, differing only in Name, that each returned one content
	URLs     int      // distinct URLs in those groups
	Examples []string // up to 3 keys of URLs from the first such group
}

type learnHost struct {
	params       map[string]*learnParam
	exampleBytes int
}

type learnParam struct {
	groups     []learnGroup
	index      map[uint64]int // base hash → index in groups
	next       int            // next group to replace when full
	irrelevant bool
	counter    int // counter-examples seen
	support    int
	urls       int
	examples   []string
}

type learnGroup struct {
	base, digest uint64
	values       []uint64 // hashes of distinct values seen, up to MinValues
	n            int      // distinct values seen with digest
	examples     []string
	supported    bool // reached MinValues
	done         bool // a counter-example, or content changing under one URL
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
// u is compared by its key (urlnorm.Key, without the session ids).
func (l *Learner) Observe(u *url.URL, digest string) {
	if digest == "" || u.RawQuery == "" {
		return
	}
	host := urlnorm.HostKey(u)
	dh := hash(digest)
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.mu.hosts.get(host)
	if h.params == nil {
		h.params = make(map[string]*learnParam)
	}
	key := urlnorm.Key(u, nil)
	path, query, _ := strings.Cut(key, "?")
	if query == "" {
		return
	}
	params := strings.Split(query, "&") // sorted by name
	// Parameters already learned stay out of every group's base, so that
	// several irrelevant parameters are learned even when they vary
	// together; they are still observed themselves, so that a
	// counter-example can withdraw them.
	var stack [16]bool
	learned := stack[:0]
	if len(params) > len(stack) {
		learned = make([]bool, 0, len(params))
	}
	for _, p := range params {
		lp := h.params[urlnorm.DecodeParamName(paramName(p))]
		learned = append(learned, lp != nil && lp.irrelevant)
	}
	for i := 0; i < len(params); {
		name := paramName(params[i])
		j := i + 1
		for j < len(params) && paramName(params[j]) == name {
			j++
		}
		// The group: the key without this parameter.
		base := hash(path)
		for k, p := range params {
			if (k < i || k >= j) && !learned[k] {
				base = hashMore(hashMore(base, "&"), p)
			}
		}
		value := hash(strings.Join(params[i:j], "&"))
		l.observeLocked(h, urlnorm.DecodeParamName(name), base, value, dh, key)
		i = j
	}
}

func (l *Learner) observeLocked(h *learnHost, name string, base, value, digest uint64, key string) {
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
	if g.done {
		return
	}
	seen := slices.Contains(g.values, value)
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
	if len(g.values) < cap(g.values) {
		g.values = append(g.values, value)
	}
	g.n++
	if len(g.examples) < maxExamples && h.exampleBytes+len(key) <= maxExampleBytes {
		if len(key) > maxExampleLen {
			key = key[:maxExampleLen]
		}
		g.examples = append(g.examples, strings.Clone(key))
		h.exampleBytes += len(key)
	}
	switch {
	case g.supported:
		p.urls++
	case g.n >= l.cfg.MinValues:
		g.supported = true
		p.support++
		p.urls += g.n
		if p.examples == nil {
			p.examples = g.examples
		}
	}
	p.irrelevant = p.support > 0 && p.counter == 0
}

// Drop reports whether the parameter name (percent-decoded) has been
// learned to be irrelevant on host (a urlnorm.HostKey).
func (l *Learner) Drop(host, name string) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	h := l.mu.hosts.peek(host)
	if h == nil {
		return false
	}
	p := h.params[name]
	return p != nil && p.irrelevant
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
			out = append(out, Param{Name: name, Groups: p.support, URLs: p.urls, Examples: slices.Clone(p.examples)})
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

func paramName(p string) string {
	if i := strings.IndexByte(p, '='); i >= 0 {
		return p[:i]
	}
	return p
}
