package site

import (
	"cmp"
	"container/list"
	"context"
	"crypto/ed25519"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/httpsig"
)

// ErrPrivateAddress is the error of a key directory whose host resolves to
// a loopback, private or otherwise non-public address, which BotAuth does
// not fetch unless AllowPrivateNetworks is set.
var ErrPrivateAddress = errors.New("site: key directory at a loopback or private address (BotAuth.AllowPrivateNetworks)")

// DirectoryError is a key directory that could not be had: the fetch
// failed, or what came back is not a directory of Ed25519 keys.
type DirectoryError struct {
	URL string // the directory's URL
	Err error
}

func (e *DirectoryError) Error() string { return "key directory " + e.URL + ": " + e.Err.Error() }

func (e *DirectoryError) Unwrap() error { return e.Err }

// maxDirectoryFetches bounds the key directories fetched at once, so that
// a flood of requests naming new agents cannot make the server a flood of
// fetches.
const maxDirectoryFetches = 8

var errBusy = errors.New("too many key directories being fetched")

// directories fetches and caches key directories by agent origin: least
// recently used first out, each kept for the TTL its Cache-Control gives
// within a floor and a ceiling, a failure briefly; concurrent requests for
// one origin share its fetch.
type directories struct {
	client                 *http.Client
	timeout                time.Duration
	userAgent              string
	maxSize                int64
	minTTL, maxTTL, errTTL time.Duration
	size                   int
	now                    func() time.Time
	sem                    chan struct{}

	mu       sync.Mutex
	order    *list.List // of *dirEntry, most recent first
	entries  map[string]*list.Element
	inflight map[string]*dirCall
}

type dirEntry struct {
	origin  string
	keys    map[string]ed25519.PublicKey
	err     error
	fetched time.Time
	expires time.Time
}

type dirCall struct {
	done chan struct{}
	e    *dirEntry
}

func newDirectories(b *BotAuth) *directories {
	timeout := orDefault(b.DirectoryTimeout, 5*time.Second)
	allow := b.AllowPrivateNetworks
	dialer := &net.Dialer{
		Timeout: timeout,
		// The address dialed, after DNS: a name that resolves into the
		// server's own network is refused however it is spelled.
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return err
			}
			if !allow && !publicAddr(ap.Addr()) {
				return ErrPrivateAddress
			}
			return nil
		},
	}
	var tlsConfig *tls.Config
	if b.TLSConfig != nil {
		tlsConfig = b.TLSConfig.Clone()
	}
	tr := &http.Transport{
		Proxy:                  nil, // never a proxy from the environment: the guard checks the address dialed
		DialContext:            dialer.DialContext,
		TLSClientConfig:        tlsConfig,
		TLSHandshakeTimeout:    timeout,
		ResponseHeaderTimeout:  timeout,
		MaxResponseHeaderBytes: 16 << 10,
		MaxIdleConnsPerHost:    1,
		IdleConnTimeout:        30 * time.Second,
		ForceAttemptHTTP2:      true,
	}
	return &directories{
		timeout: timeout,
		client: &http.Client{
			Transport: tr,
			// The directory draft: "MUST NOT automatically follow HTTP
			// redirects". So a redirect loop is one answer, and a failure.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		userAgent: cmp.Or(b.UserAgent, DefaultDirectoryUserAgent),
		maxSize:   cmp.Or(max(b.MaxDirectorySize, 0), 64<<10),
		minTTL:    orDefault(b.MinDirectoryTTL, 5*time.Minute),
		maxTTL:    orDefault(b.MaxDirectoryTTL, 24*time.Hour),
		errTTL:    orDefault(b.DirectoryErrorTTL, time.Minute),
		size:      orDefault(b.MaxDirectories, 1000),
		now:       b.now,
		sem:       make(chan struct{}, maxDirectoryFetches),
		order:     list.New(),
		entries:   make(map[string]*list.Element),
		inflight:  make(map[string]*dirCall),
	}
}

// keys returns the keys the agent origin publishes, by thumbprint. With
// refresh, a directory fetched more than the floor ago is fetched again
// (a key not found may be new).
func (d *directories) keys(ctx context.Context, origin string, refresh bool) (map[string]ed25519.PublicKey, error) {
	for {
		d.mu.Lock()
		now := d.now()
		if el, ok := d.entries[origin]; ok {
			e := el.Value.(*dirEntry)
			stale := refresh && e.err == nil && now.Sub(e.fetched) >= d.minTTL
			if now.Before(e.expires) && !stale {
				d.order.MoveToFront(el)
				d.mu.Unlock()
				return e.keys, e.err
			}
		}
		if c, ok := d.inflight[origin]; ok {
			d.mu.Unlock()
			select {
			case <-c.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if c.e != nil {
				return c.e.keys, c.e.err
			}
			continue
		}
		c := &dirCall{done: make(chan struct{})}
		d.inflight[origin] = c
		d.mu.Unlock()

		select {
		case d.sem <- struct{}{}:
		default:
			d.mu.Lock()
			delete(d.inflight, origin)
			d.mu.Unlock()
			close(c.done)
			return nil, &DirectoryError{URL: origin + httpsig.WellKnownPath, Err: errBusy}
		}
		// Shared by every request waiting for it, the fetch runs to its own
		// time limit whatever becomes of the request that started it.
		e := d.fetch(context.WithoutCancel(ctx), origin)
		<-d.sem
		c.e = e
		d.mu.Lock()
		delete(d.inflight, origin)
		if el, ok := d.entries[origin]; ok {
			d.order.Remove(el)
			delete(d.entries, origin)
		}
		for d.order.Len() >= d.size {
			old := d.order.Back()
			d.order.Remove(old)
			delete(d.entries, old.Value.(*dirEntry).origin)
		}
		d.entries[origin] = d.order.PushFront(e)
		d.mu.Unlock()
		close(c.done)
		return e.keys, e.err
	}
}

// acceptedTypes are the media types a key directory may come as: the
// draft's, a JWK Set's and plain JSON's.
var acceptedTypes = map[string]bool{
	httpsig.MediaType:          true,
	"application/jwk-set+json": true,
	"application/json":         true,
}

func (d *directories) fetch(ctx context.Context, origin string) *dirEntry {
	u := origin + httpsig.WellKnownPath
	now := d.now()
	e := &dirEntry{origin: origin, fetched: now}
	// The whole fetch, body included, within the time limit: a slow
	// directory is cut.
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	timedOut := func() *dirEntry {
		e.err = &DirectoryError{URL: u, Err: fmt.Errorf("timed out after %v", d.timeout)}
		e.expires = now.Add(d.errTTL)
		return e
	}
	fail := func(err error) *dirEntry {
		e.err = &DirectoryError{URL: u, Err: err}
		e.expires = now.Add(d.errTTL)
		return e
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fail(err)
	}
	req.Header.Set("Accept", httpsig.MediaType+", application/jwk-set+json;q=0.9, application/json;q=0.8")
	req.Header.Set("User-Agent", d.userAgent)
	resp, err := d.client.Do(req)
	if err != nil {
		switch {
		case errors.Is(err, ErrPrivateAddress):
			return fail(ErrPrivateAddress)
		case ctx.Err() != nil:
			return timedOut()
		}
		return fail(err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return fail(fmt.Errorf("redirects (%d to %q), and a key directory's redirects are not followed", resp.StatusCode, resp.Header.Get("Location")))
	case resp.StatusCode != http.StatusOK:
		return fail(fmt.Errorf("answers %s", resp.Status))
	}
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case mt == "text/html":
		return fail(errors.New("is an HTML page, not a key directory"))
	case err != nil || !acceptedTypes[mt]:
		return fail(fmt.Errorf("has the media type %q, not %s", resp.Header.Get("Content-Type"), httpsig.MediaType))
	}
	if resp.ContentLength > d.maxSize {
		return fail(fmt.Errorf("is %d bytes, more than the %d read", resp.ContentLength, d.maxSize))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, d.maxSize+1))
	if ctx.Err() != nil {
		return timedOut()
	}
	if err != nil {
		return fail(fmt.Errorf("reading: %w", err))
	}
	if int64(len(body)) > d.maxSize {
		return fail(fmt.Errorf("is more than the %d bytes read", d.maxSize))
	}
	keys, _, err := httpsig.ParseDirectory(body)
	if err != nil {
		return fail(err)
	}
	e.keys = keys
	e.expires = now.Add(d.ttl(resp.Header))
	return e
}

// ttl is how long a directory is kept: its Cache-Control max-age within
// the floor and the ceiling; without one (or with no-store, no-cache),
// the floor, since a directory asked for on every request would make the
// verifier a burden to the agent.
func (d *directories) ttl(h http.Header) time.Duration {
	ttl := d.minTTL
	for _, cc := range h.Values("Cache-Control") {
		for _, dir := range strings.Split(cc, ",") {
			name, val, _ := strings.Cut(strings.TrimSpace(dir), "=")
			if strings.EqualFold(name, "max-age") {
				if n, err := strconv.ParseInt(strings.Trim(val, `"`), 10, 64); err == nil && n >= 0 {
					ttl = time.Duration(min(n, int64(d.maxTTL/time.Second)+1)) * time.Second
				}
			}
		}
	}
	return min(max(ttl, d.minTTL), d.maxTTL)
}

// publicAddr reports whether a key directory may be fetched from addr
// without AllowPrivateNetworks: the rule of internal/fetch.IsPublic
// (loopback, private, link-local, CGNAT, multicast, unspecified, reserved
// and documentation ranges are not public; IPv4-mapped and NAT64
// addresses are judged by their IPv4 address).
func publicAddr(addr netip.Addr) bool {
	if !addr.IsValid() {
		return false
	}
	addr = addr.Unmap().WithZone("")
	if nat64.Contains(addr) {
		b := addr.As16()
		return publicAddr(netip.AddrFrom4([4]byte(b[12:])))
	}
	if addr.IsLoopback() || addr.IsPrivate() || addr.IsUnspecified() ||
		addr.IsLinkLocalUnicast() || addr.IsMulticast() ||
		addr.IsLinkLocalMulticast() || addr.IsInterfaceLocalMulticast() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(addr) {
			return false
		}
	}
	return true
}

var nat64 = netip.MustParsePrefix("64:ff9b::/96")

var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("fec0::/10"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
}
