package simweb

import (
	"bytes"
	"compress/gzip"
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ServeHTTP answers r for the host named by its Host header (port
// stripped, case-insensitive) and logs the request.
func (w *Web) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w.begin()
	e := newLogEntry(r, w.cfg.Now())
	cw := &countingWriter{ResponseWriter: rw}
	e.Wait = w.serve(cw, r)
	// End is stamped before the last bytes are flushed: the client cannot
	// have the whole answer earlier, so a gap measured from End is never
	// shorter than the one the client kept. Stamped after the flush, a
	// handler descheduled on a loaded machine stamped it late (by
	// milliseconds under -race), and a polite client looked impolite.
	e.End = w.cfg.Now()
	cw.flush()
	e.Status = cw.status
	e.Bytes = cw.bytes
	e.ContentEncoding = rw.Header().Get("Content-Encoding")
	w.record(e)
}

// serve is the request pipeline: host, latency, address, outage, rate
// limit, capacity, method, then the robots files or a resource. It
// returns the time the request waited for workers.
func (w *Web) serve(rw http.ResponseWriter, r *http.Request) time.Duration {
	h := w.Host(r.Host)
	latency := w.cfg.Latency
	if h != nil {
		latency += h.opts.Latency
	}
	if !sleep(r.Context(), latency) {
		return 0 // client gone; nothing to answer
	}
	if h == nil {
		writeSmall(rw, r, http.StatusNotFound, "text/html; charset=utf-8", notFoundPage("unknown host"))
		return 0
	}
	local, assigned, wrong := w.misdirected(h, r)
	if wrong {
		writeSmall(rw, r, http.StatusMisdirectedRequest, "text/plain; charset=utf-8", "misdirected request: "+h.Name+" is served on "+assigned+"\n")
		return 0
	}
	now := w.cfg.Now()
	if o, ok := activeOutage(h.opts.Outages, now, h.firstRequest(now)); ok {
		w.refuse(rw, r, h, o.Status, o.RetryAfter, "outage")
		return 0
	}
	// Before the capacity, as nginx's limit_req runs before the request
	// reaches an upstream: a refusal takes no worker.
	if l := h.opts.limiter; l != nil && !l.Allow(w.cfg.Now()) {
		w.refuse(rw, r, h, l.l.Status, l.l.RetryAfter, "rate limited")
		return 0
	}
	wait, ok := w.work(rw, r, h, local)
	if !ok {
		return wait
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		rw.Header().Set("Allow", "GET, HEAD")
		writeSmall(rw, r, http.StatusMethodNotAllowed, "text/plain; charset=utf-8", "method not allowed\n")
		return wait
	}
	path := r.URL.RequestURI()
	if path == robotsPath || (h.opts.profile == ProfileRedirect && path == robotsMovedPath) {
		h.serveRobots(rw, r, path)
		return wait
	}
	if s := h.shop(); s != nil {
		s.serve(rw, r, path)
		return wait
	}
	if traps := &h.opts.Traps; traps.any() {
		path = traps.stripSession(path)
		if h.serveTrap(rw, r, path) {
			return wait
		}
	}
	i, ok := h.skeleton().byPath[path]
	if !ok {
		writeSmall(rw, r, http.StatusNotFound, "text/html; charset=utf-8", notFoundPage("no such page"))
		return wait
	}
	h.serveResource(rw, r, i)
	return wait
}

// work takes r through the Model of its host and then that of its local
// address, if they exist: it waits for a worker of each, then for the
// longer of their service times. It reports whether r was served; if not,
// it has written the refusal, or the client has gone away. It returns the
// time spent waiting for workers.
func (w *Web) work(rw http.ResponseWriter, r *http.Request, h *Host, local string) (time.Duration, bool) {
	ctx := r.Context()
	var (
		held [2]struct {
			m *Model
			t ticket
		}
		n    int
		wait time.Duration
	)
	releaseAll := func(how int) {
		for i := n - 1; i >= 0; i-- {
			held[i].m.release(held[i].t, how)
		}
	}
	for _, m := range [2]*Model{h.opts.model, w.AddrModel(local)} {
		if m == nil {
			continue
		}
		t, res, err := m.admit(ctx)
		if err != nil {
			releaseAll(releaseAbandoned)
			return wait, false
		}
		wait += res.Wait
		if res.Status != http.StatusOK {
			releaseAll(releaseReturned)
			w.refuse(rw, r, h, res.Status, res.RetryAfter, "over capacity")
			return wait, false
		}
		held[n].m, held[n].t = m, t
		n++
	}
	var svc time.Duration
	for i := range n {
		svc = max(svc, held[i].t.svc)
	}
	if !sleep(ctx, svc) {
		releaseAll(releaseAbandoned)
		return wait, false
	}
	releaseAll(releaseServed)
	return wait, true
}

// refuse answers r with an error status and Retry-After.
func (w *Web) refuse(rw http.ResponseWriter, r *http.Request, h *Host, status int, retryAfter time.Duration, why string) {
	setRetryAfter(rw.Header(), retryAfter, w.cfg.Now(), h.opts.RetryAfterDate)
	writeSmall(rw, r, status, "text/plain; charset=utf-8", strconv.Itoa(status)+" "+http.StatusText(status)+": "+h.Name+" "+why+"\n")
}

// sleep waits for d or until ctx is done; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// misdirected returns the local address r arrived on ("" when unknown)
// and reports whether it is one of the loopback addresses of ServeLoopback
// other than the one assigned to h (RFC 9110 §15.5.20), and if so which
// address is h's.
func (w *Web) misdirected(h *Host, r *http.Request) (local, assigned string, wrong bool) {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		local = a.String()
	}
	lb := w.loop.Load()
	if lb == nil || local == "" {
		return local, "", false
	}
	assigned = lb.addrs[h.index%len(lb.addrs)]
	return local, assigned, lb.serves[local] && local != assigned
}

func (h *Host) serveRobots(rw http.ResponseWriter, r *http.Request, path string) {
	status, ctype, body, location := h.opts.robotsResponse(h.Name)
	if path == robotsMovedPath {
		status, ctype, body, location = http.StatusOK, "text/plain; charset=utf-8", disallowRules, ""
	}
	if h.opts.Traps.Sitemaps && status == http.StatusOK && strings.HasPrefix(ctype, "text/plain") {
		body += "\nSitemap: " + h.URL(sitemapIndex) + "\n"
	}
	if location != "" {
		rw.Header().Set("Location", location)
	}
	writeSmall(rw, r, status, ctype, body)
}

// serveResource answers for resource i of h: validators, conditional GET,
// content coding, body — of the version current on the Web's clock when
// the host has Changes.
func (h *Host) serveResource(rw http.ResponseWriter, r *http.Request, i int) {
	res := &h.skeleton().res[i]
	v, changed := 0, time.Time{}
	if h.opts.Changes != nil {
		v, changed = h.version(i, h.web.cfg.Now())
		meta := *res
		meta.lastModified, meta.etag = h.validators(i, v, changed)
		res = &meta
	}
	hdr := rw.Header()
	setValidators(hdr, res.lastModified, res.etag)
	text := res.kind == kindPage
	if text {
		hdr.Set("Vary", "Accept-Encoding")
	}
	if notModified(r, res) {
		rw.WriteHeader(http.StatusNotModified)
		return
	}
	gz := text && acceptsGzip(r.Header.Get("Accept-Encoding"))
	body := h.body(i, gz, v, changed)
	hdr.Set("Content-Type", kindInfo[res.kind].contentType)
	if gz {
		hdr.Set("Content-Encoding", "gzip")
	}
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	rw.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		rw.Write(body)
	}
}

// body returns the (possibly gzipped) body of version v of resource i,
// changed at the given time, from the cache when it is there.
func (h *Host) body(i int, gz bool, v int, changed time.Time) []byte {
	key := cacheKey{host: h.index, res: i, gzip: gz, version: v}
	if b, ok := h.web.cache.get(key); ok {
		return b
	}
	var b []byte
	res := &h.skeleton().res[i]
	switch {
	case gz:
		b = gzipBytes(h.body(i, false, v, changed))
	case v > 0:
		b = h.versionBody(i, h.body(i, false, 0, time.Time{}), v, changed)
	case res.kind == kindPage:
		b, _ = h.renderPage(i)
	default:
		b = fileBody(res)
	}
	h.web.cache.put(key, b)
	return b
}

// gzipBytes compresses b. The gzip header carries no name or time, so the
// output is a function of b alone.
func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// notModified evaluates the preconditions of RFC 9110 §13.2.2 for a GET or
// HEAD: If-None-Match, when present, decides alone (weak comparison,
// §13.1.2); otherwise If-Modified-Since.
func notModified(r *http.Request, res *resMeta) bool {
	if inm := r.Header.Values("If-None-Match"); len(inm) > 0 {
		return etagListMatches(strings.Join(inm, ","), res.etag)
	}
	ims := r.Header.Get("If-Modified-Since")
	if ims == "" {
		return false
	}
	t, err := http.ParseTime(ims)
	if err != nil {
		return false // §13.1.3: an invalid date is ignored
	}
	return !res.lastModified.After(t)
}

// etagListMatches reports whether the If-None-Match value list ("*" or a
// comma-separated list of entity tags) matches etag by weak comparison:
// the opaque tags are equal, whether or not either is weak.
func etagListMatches(list, etag string) bool {
	if strings.TrimSpace(list) == "*" {
		return true
	}
	want := strings.TrimPrefix(etag, "W/")
	for s := list; ; {
		s = strings.TrimLeft(s, " \t,")
		if s == "" {
			return false
		}
		s = strings.TrimPrefix(s, "W/")
		if s == "" || s[0] != '"' {
			return false // malformed: stop, matching nothing
		}
		end := strings.IndexByte(s[1:], '"')
		if end < 0 {
			return false
		}
		if s[:end+2] == want {
			return true
		}
		s = s[end+2:]
	}
}

// acceptsGzip reports whether an Accept-Encoding value allows gzip
// (RFC 9110 §12.5.3): "gzip" or "x-gzip" with q > 0, or "*" with q > 0 when
// gzip is not listed.
func acceptsGzip(header string) bool {
	gzipQ, starQ := -1.0, -1.0
	for _, part := range strings.Split(header, ",") {
		params := strings.Split(part, ";")
		coding := strings.ToLower(strings.TrimSpace(params[0]))
		q := 1.0
		for _, p := range params[1:] {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil || f < 0 || f > 1 {
					f = 0 // an unreadable weight does not enable a coding
				}
				q = f
			}
		}
		switch coding {
		case "gzip", "x-gzip":
			gzipQ = max(gzipQ, q)
		case "*":
			starQ = max(starQ, q)
		}
	}
	if gzipQ >= 0 {
		return gzipQ > 0
	}
	return starQ > 0
}

// writeSmall writes a complete small response with Content-Length.
func writeSmall(rw http.ResponseWriter, r *http.Request, status int, ctype, body string) {
	hdr := rw.Header()
	hdr.Set("Content-Type", ctype)
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	rw.WriteHeader(status)
	if r.Method != http.MethodHead {
		rw.Write([]byte(body))
	}
}

func notFoundPage(why string) string {
	return "<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1><p>" + why + "</p></body></html>\n"
}
