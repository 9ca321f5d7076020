package simweb

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
)

// kind is what a resource is; it decides its content type and body.
type kind uint8

const (
	kindPage kind = iota
	kindJPEG
	kindPNG
	kindPDF
	kindZIP
	kindBin
)

var kindInfo = [...]struct {
	contentType string
	pattern     string // path pattern for non-HTML kinds, one %d
	magic       string
}{
	kindPage: {contentType: "text/html; charset=utf-8"},
	kindJPEG: {"image/jpeg", "/img/%d.jpg", "\xff\xd8\xff\xe0\x00\x10JFIF\x00"},
	kindPNG:  {"image/png", "/img/%d.png", "\x89PNG\r\n\x1a\n"},
	kindPDF:  {"application/pdf", "/docs/%d.pdf", "%PDF-1.4\n"},
	kindZIP:  {"application/zip", "/files/%d.zip", "PK\x03\x04"},
	kindBin:  {"application/octet-stream", "/files/%d.bin", "SIMWEB\x00\x01"},
}

// Size bounds of generated bodies.
const (
	minPageSize = 5 * 1024
	maxPageSize = 60 * 1024
	minFileSize = 1 * 1024
	maxFileSize = 80 * 1024
)

// resMeta is what is known of a resource without rendering it.
type resMeta struct {
	path         string
	kind         kind
	seed         uint64 // seeds the resource's own random stream
	size         int    // body size; for pages known only after rendering
	lastModified time.Time
	etag         string
}

// skeleton is the cheap part of a host's graph: its resources, their
// validators and the sizes of non-HTML bodies. Rendering a page of one host
// needs the skeletons of the hosts it links to, never their pages.
type skeleton struct {
	res    []resMeta      // pages first (index 0 is "/"), then files
	normal int            // res[0:normal] are the pages chained k → k+1
	pages  int            // res[normal:pages] are the pages under robots-disallowed paths
	byPath map[string]int // path → index in res
}

// lastModifiedEpoch is the latest Last-Modified of any resource; dates are
// spread over the three years before it.
var lastModifiedEpoch = time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)

// hostRand returns the random stream of host idx for the given purpose.
// Streams depend only on (seed, host index, purpose), so a host's graph is
// independent of the other hosts and of the order of requests.
func hostRand(seed int64, idx int, purpose uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), uint64(idx)<<8|purpose))
}

// buildSkeleton lays out the resources of host idx with options o.
func buildSkeleton(cfg *Config, idx int, o *HostOptions) *skeleton {
	rng := hostRand(cfg.Seed, idx, 1)
	p := cfg.PagesPerHost
	lo, hi := p/2, 3*p/2
	count := max(1, lo+rng.IntN(hi-lo+1))
	if o.Pages > 0 {
		count = o.Pages
		if o.Traps.Facets {
			count -= CatalogPages // validated: at least 1 remains
		}
	}
	sk := &skeleton{normal: count, pages: count}
	if count >= 6 {
		sk.normal = count - 4 // the last four pages live under robots-sensitive paths
	}
	meta := func(path string, k kind) resMeta {
		m := resMeta{
			path:         path,
			kind:         k,
			seed:         rng.Uint64(),
			lastModified: lastModifiedEpoch.Add(-time.Duration(rng.Int64N(3*365*24*3600)) * time.Second),
		}
		m.etag = fmt.Sprintf(`"%016x"`, m.seed^0x5eed5eed5eed5eed)
		if rng.IntN(5) == 0 {
			m.etag = "W/" + m.etag
		}
		return m
	}
	sk.res = append(sk.res, meta("/", kindPage))
	for i := 1; i < sk.normal; i++ {
		var path string
		switch rng.IntN(4) {
		case 0:
			path = fmt.Sprintf("/articles/%d-%s.html", i, slug(rng))
		case 1:
			path = fmt.Sprintf("/products/%d", i)
		case 2:
			path = fmt.Sprintf("/blog/%d/%02d/%d-%s/", 2015+rng.IntN(11), 1+rng.IntN(12), i, slug(rng))
		default:
			path = fmt.Sprintf("/list?page=%d", i)
		}
		sk.res = append(sk.res, meta(path, kindPage))
	}
	if sk.pages > sk.normal {
		i := sk.normal
		sk.res = append(sk.res,
			meta(fmt.Sprintf("/private/%d-%s.html", i, slug(rng)), kindPage),
			meta(fmt.Sprintf("/private/open/%d-%s.html", i+1, slug(rng)), kindPage),
			meta(fmt.Sprintf("/search?q=%s", words[rng.IntN(len(words))]), kindPage),
			meta(fmt.Sprintf("/nogc/%d-%s.html", i+3, slug(rng)), kindPage),
		)
	}
	files := (count + 2) / 3
	if o.NoFiles {
		files = 0
	}
	for j := 1; j <= files; j++ {
		k := kindJPEG + kind(rng.IntN(5))
		m := meta(fmt.Sprintf(kindInfo[k].pattern, j), k)
		m.size = minFileSize + rng.IntN(maxFileSize-minFileSize+1)
		sk.res = append(sk.res, m)
	}
	if o.Changes != nil {
		clampChangeDates(sk, o.Changes.Start)
	}
	sk.byPath = make(map[string]int, len(sk.res))
	for i, r := range sk.res {
		sk.byPath[r.path] = i
	}
	return sk
}

// graph is the expensive part of a host's graph: the size and links of
// every page, found by rendering each page once.
type graph struct {
	sizes []int      // by resource index
	links [][]string // by resource index; nil for files
}

// buildGraph renders every page of h once to learn its size and links.
func (h *Host) buildGraph() *graph {
	sk := h.skeleton()
	g := &graph{sizes: make([]int, len(sk.res)), links: make([][]string, len(sk.res))}
	for i, r := range sk.res {
		if r.kind != kindPage {
			g.sizes[i] = r.size
			continue
		}
		body, links := h.renderPage(i)
		g.sizes[i] = len(body)
		g.links[i] = links
	}
	return g
}

// Resource describes one servable resource of a host: the ground truth a
// crawler is checked against.
type Resource struct {
	// Path is the escaped path, with the query if any, e.g.
	// "/articles/12-some-title.html" or "/list?page=3".
	Path        string
	ContentType string
	// Size is the size of the uncompressed body.
	Size int
	// Links are the absolute URLs of the resource's <a href> and
	// <area href> elements with an http or https scheme, resolved against
	// the document's base URL, with the fragment removed, the scheme and
	// host lower-cased, the default port dropped and dot segments removed;
	// each URL once, in order of first appearance. Nil for non-HTML
	// resources. Links may point to other hosts of the web and to
	// http://outside.example/, which is not part of the web.
	Links        []string
	LastModified time.Time
	// ETag is quoted; weak (W/"…") for some resources.
	ETag string
}

// URL returns the absolute URL of path on host h.
func (h *Host) URL(path string) string { return "http://" + h.Name + path }

// Resources returns every servable resource of h except the robots.txt
// files, sorted by path. The first call renders every page of the host.
// A Shop host has none: its pages link under new URLs on every response
// (see DistinctPages and PageOf).
func (h *Host) Resources() []Resource {
	if h.opts.Shop != nil {
		return nil
	}
	sk := h.skeleton()
	out := make([]Resource, len(sk.res))
	for i := range sk.res {
		out[i] = h.resource(i)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Path < out[b].Path })
	return out
}

// Resource returns the resource at path (escaped, with the query if any).
// A Shop host has none.
func (h *Host) Resource(path string) (Resource, bool) {
	i, ok := h.skeleton().byPath[path]
	if !ok || h.opts.Shop != nil {
		return Resource{}, false
	}
	return h.resource(i), true
}

func (h *Host) resource(i int) Resource {
	sk, g := h.skeleton(), h.graph()
	r := sk.res[i]
	return Resource{
		Path:         r.path,
		ContentType:  kindInfo[r.kind].contentType,
		Size:         g.sizes[i],
		Links:        append([]string(nil), g.links[i]...),
		LastModified: r.lastModified,
		ETag:         r.etag,
	}
}

// fileBody generates the body of a non-HTML resource: a plausible magic
// number followed by pseudo-random bytes.
func fileBody(r *resMeta) []byte {
	b := make([]byte, r.size)
	rng := rand.New(rand.NewPCG(r.seed, 0xf11e))
	for i := 0; i < len(b); i += 8 {
		v := rng.Uint64()
		for j := 0; j < 8 && i+j < len(b); j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	copy(b, kindInfo[r.kind].magic)
	if r.kind == kindJPEG && len(b) >= 2 {
		b[len(b)-2], b[len(b)-1] = 0xff, 0xd9 // end of image
	}
	return b
}

var words = strings.Fields(`
	about above account across active after again against agent almost along
	already amber anchor answer apple archive around autumn balance basket
	beacon before behind below berry between beyond bitter blossom border
	branch bridge bright broken button cabin candle canyon carbon castle
	center chapter cherry circle clever climate cloud coast column comet
	copper corner cotton crystal current dawn desert detail diamond distant
	domain dragon drift eager early echo elder ember engine evening fabric
	falcon feather field figure forest fossil fountain garden gentle glacier
	golden granite harbor harvest hidden hollow horizon island ivory journal
	jungle kettle lantern latitude ledger legend lemon library light linen
	lunar marble meadow mirror morning mountain native needle network noble
	ocean olive orbit orchard paper pebble pepper planet polite quiet rapid
	raven river saddle salmon season shadow signal silver simple spider spring
	station stone summer thunder timber tower travel valley velvet violet
	voyage wander weather willow window winter yellow zenith`)

func slug(rng *rand.Rand) string {
	n := 1 + rng.IntN(4)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = words[rng.IntN(len(words))]
	}
	return strings.Join(parts, "-")
}
