package gentlecrawl

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/gentlecrawl/gentlecrawl/internal/fetch"
)

// validatorMode is how the crawl sends a host the validators it kept.
type validatorMode uint8

const (
	// sendBoth sends If-None-Match and If-Modified-Since as the server
	// gave them: what RFC 9110 asks, and what nginx and most servers
	// honour.
	sendBoth validatorMode = iota
	// sendStripped sends the ETag without the content-coding suffix a
	// compressing module added ("abc-gzip" → "abc"), with
	// If-Modified-Since: Apache's mod_deflate adds "-gzip" to the ETag of
	// a compressed response and then does not recognise it in
	// If-None-Match (Apache bug 45023), but it recognises the ETag of the
	// entity it compressed.
	sendStripped
	// sendDateOnly sends If-Modified-Since alone: a server that ignores
	// the ETags it sends may still honour the date.
	sendDateOnly
	// sendGaveUp: nothing was honoured; both validators are sent again,
	// as they cost nothing.
	sendGaveUp
)

func (m validatorMode) String() string {
	return [...]string{"both validators", "the ETag without its encoding suffix", "If-Modified-Since alone", "both validators (nothing was honoured)"}[m]
}

// validatorBook learns, per origin, which validators the server honours:
// the evidence is a full 200 to a conditional request whose body is the
// one kept from the last visit (the server could have answered 304 and
// did not). After such an answer, with no 304 yet to the way the
// validators were sent, the next way is tried: the ETag without its
// encoding suffix, then If-Modified-Since alone. It is safe for concurrent
// use and keeps a few words per origin that sent validators.
type validatorBook struct {
	mu    sync.Mutex
	hosts map[string]*hostValidators
}

// maxValidatorHosts bounds validatorBook.hosts; origins past it are sent
// both validators, unlearned.
const maxValidatorHosts = 100_000

type hostValidators struct {
	mode validatorMode
	// honoured and ignored count, for the current mode, 304s and full
	// answers with the same body; ignoredBefore counts the latter under
	// earlier modes.
	honoured, ignored, ignoredBefore int
	example                          string // an ETag that was ignored
	// lies counts pages found changed, on a visit without validators,
	// after 304s to the validators they still have; lieExample is one.
	lies       int
	lieExample string
}

// lyingAfter is how many pages must be caught with lying validators before
// an origin's revisits are all made without them: one could be a page of
// its own.
const lyingAfter = 2

// lied records that a page of origin changed while the server kept
// answering 304 to the validators it still sends for it. It reports
// whether the origin is now known to lie.
func (b *validatorBook) lied(origin, url string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	h := b.hosts[origin]
	if h == nil {
		if len(b.hosts) >= maxValidatorHosts {
			return false
		}
		if b.hosts == nil {
			b.hosts = make(map[string]*hostValidators)
		}
		h = &hostValidators{}
		b.hosts[origin] = h
	}
	h.lies++
	if h.lieExample == "" {
		h.lieExample = url
	}
	return h.lies == lyingAfter
}

// lying says origin's validators were found to lie: its pages are
// refreshed without them.
func (b *validatorBook) lying(origin string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	h := b.hosts[origin]
	return h != nil && h.lies >= lyingAfter
}

// request returns the validators to send origin for a URL whose last
// visit gave etag and lastModified, and the mode used.
func (b *validatorBook) request(origin, etag, lastModified string) (string, string, validatorMode) {
	b.mu.Lock()
	mode := sendBoth
	if h := b.hosts[origin]; h != nil {
		mode = h.mode
	}
	b.mu.Unlock()
	switch mode {
	case sendStripped:
		if s, ok := fetch.StripETagCoding(etag); ok {
			return s, lastModified, mode
		}
	case sendDateOnly:
		if lastModified != "" {
			return "", lastModified, mode
		}
	}
	return etag, lastModified, mode
}

// observe records the answer to a conditional request sent in mode:
// notModified for a 304, sameBody for a complete 200 whose body equals
// the one kept; etag is the ETag that was kept. It reports whether the
// origin's mode changed.
func (b *validatorBook) observe(origin string, mode validatorMode, notModified, sameBody bool, etag, lastModified string) (changed bool) {
	if !notModified && !sameBody {
		return false // the page changed, or the answer says nothing
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	h := b.hosts[origin]
	if h == nil {
		if notModified || len(b.hosts) >= maxValidatorHosts {
			return false // honoured as sent: nothing to learn
		}
		if b.hosts == nil {
			b.hosts = make(map[string]*hostValidators)
		}
		h = &hostValidators{}
		b.hosts[origin] = h
	}
	if mode != h.mode {
		return false // sent before the mode changed
	}
	if notModified {
		h.honoured++
		return false
	}
	h.ignored++
	if h.example == "" {
		h.example = etag
	}
	if h.honoured > 0 {
		return false // honoured too: a page of its own, not the host's way
	}
	// Nothing honoured in this mode yet: try the next one.
	_, suffixed := fetch.StripETagCoding(etag)
	next := h.mode
	switch h.mode {
	case sendBoth:
		switch {
		case suffixed:
			next = sendStripped
		case lastModified != "":
			next = sendDateOnly
		default:
			next = sendGaveUp
		}
	case sendStripped:
		next = sendDateOnly
		if lastModified == "" {
			next = sendGaveUp
		}
	case sendDateOnly:
		next = sendGaveUp
	}
	if next == h.mode {
		return false
	}
	h.mode, h.ignoredBefore, h.ignored = next, h.ignoredBefore+h.ignored, 0
	return true
}

// report says, per origin where validators as sent were ignored, what
// was found and how they are sent now.
func (b *validatorBook) report() map[string]OriginValidators {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]OriginValidators)
	for origin, h := range b.hosts {
		if h.lies >= lyingAfter {
			out[origin] = OriginValidators{Sent: ValidatorsNone, Lies: h.lies, LiedURL: h.lieExample}
			continue
		}
		v := OriginValidators{Ignored: h.ignoredBefore, ETag: h.example}
		switch h.mode {
		case sendBoth:
			continue // a page or two of its own; the host honours them
		case sendGaveUp:
			v.Sent = ValidatorsAsGiven
			v.Ignored += h.ignored
		case sendStripped:
			v.Sent, v.Honoured, v.Full = ValidatorsStripped, h.honoured, h.ignored
		case sendDateOnly:
			v.Sent, v.Honoured, v.Full = ValidatorsDateOnly, h.honoured, h.ignored
		}
		out[origin] = v
	}
	return out
}

// savedValidators is how an origin's learning is kept in the job (the
// store's meta "validators"), so that a resumed crawl does not learn again
// by sending what a server ignores.
type savedValidators struct {
	Mode          validatorMode `json:"mode"`
	Honoured      int           `json:"honoured,omitempty"`
	Ignored       int           `json:"ignored,omitempty"`
	IgnoredBefore int           `json:"ignored_before,omitempty"`
	Example       string        `json:"example,omitempty"`
	Lies          int           `json:"lies,omitempty"`
	LieExample    string        `json:"lie_example,omitempty"`
}

// metaValidators names the store's record of the validator book.
const metaValidators = "validators"

// save writes what was learned to the store.
func (b *validatorBook) save(ctx context.Context, store interface {
	SetMeta(context.Context, string, string) error
}) error {
	b.mu.Lock()
	if len(b.hosts) == 0 {
		b.mu.Unlock()
		return nil
	}
	out := make(map[string]savedValidators, len(b.hosts))
	for origin, h := range b.hosts {
		out[origin] = savedValidators{h.mode, h.honoured, h.ignored, h.ignoredBefore, h.example, h.lies, h.lieExample}
	}
	b.mu.Unlock()
	v, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return store.SetMeta(ctx, metaValidators, string(v))
}

// load reads what earlier runs of the job learned. A record it cannot read
// is an error: the job directory is damaged.
func (b *validatorBook) load(ctx context.Context, store interface {
	Meta(context.Context, string) (string, error)
}) error {
	v, err := store.Meta(ctx, metaValidators)
	if err != nil || v == "" {
		return err
	}
	var in map[string]savedValidators
	if err := json.Unmarshal([]byte(v), &in); err != nil {
		return fmt.Errorf("job directory: corrupt record of validators: %w", err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.hosts == nil {
		b.hosts = make(map[string]*hostValidators)
	}
	for origin, s := range in {
		if len(b.hosts) >= maxValidatorHosts {
			break
		}
		if s.Mode > sendGaveUp {
			return fmt.Errorf("job directory: unknown validator mode %d for %s", s.Mode, origin)
		}
		b.hosts[origin] = &hostValidators{mode: s.Mode, honoured: s.Honoured, ignored: s.Ignored, ignoredBefore: s.IgnoredBefore,
			example: s.Example, lies: s.Lies, lieExample: s.LieExample}
	}
	return nil
}
