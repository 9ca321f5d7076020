package gentlecrawl

import (
	"fmt"
	"strings"
	"sync"
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

// codingSuffixes are what compressing modules append to an ETag.
var codingSuffixes = []string{"-gzip", "-br", "-deflate", "-zstd"}

// stripCoding returns etag without a content-coding suffix inside its
// quotes (W/"abc-gzip" → W/"abc"), and whether it had one.
func stripCoding(etag string) (string, bool) {
	if !strings.HasSuffix(etag, `"`) {
		return etag, false
	}
	body := etag[:len(etag)-1]
	for _, s := range codingSuffixes {
		if rest, ok := strings.CutSuffix(body, s); ok && strings.Contains(rest, `"`) && !strings.HasSuffix(rest, `"`) {
			return rest + `"`, true
		}
	}
	return etag, false
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
		if s, ok := stripCoding(etag); ok {
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
// the one kept; etag is the ETag that was kept.
func (b *validatorBook) observe(origin string, mode validatorMode, notModified, sameBody bool, etag, lastModified string) {
	if !notModified && !sameBody {
		return // the page changed, or the answer says nothing
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	h := b.hosts[origin]
	if h == nil {
		if notModified || len(b.hosts) >= maxValidatorHosts {
			return // honoured as sent: nothing to learn
		}
		if b.hosts == nil {
			b.hosts = make(map[string]*hostValidators)
		}
		h = &hostValidators{}
		b.hosts[origin] = h
	}
	if mode != h.mode {
		return // sent before the mode changed
	}
	if notModified {
		h.honoured++
		return
	}
	h.ignored++
	if h.example == "" {
		h.example = etag
	}
	if h.honoured > 0 {
		return // honoured too: a page of its own, not the host's way
	}
	// Nothing honoured in this mode yet: try the next one.
	_, suffixed := stripCoding(etag)
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
	if next != h.mode {
		h.mode, h.ignoredBefore, h.ignored = next, h.ignoredBefore+h.ignored, 0
	}
}

// report says, per origin where validators as sent were ignored, what
// was found, e.g. `If-None-Match ignored (ETag "5f-6a1b-gzip", 1 full
// answer with the same body); the ETag without its encoding suffix: 287
// answered 304`.
func (b *validatorBook) report() map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]string)
	for origin, h := range b.hosts {
		ignored := h.ignoredBefore
		if h.mode == sendBoth || h.mode == sendGaveUp {
			ignored += h.ignored
		}
		answers := "full answers"
		if ignored == 1 {
			answers = "full answer"
		}
		line := fmt.Sprintf("validators ignored as sent (ETag %s: %d %s with the same body)", h.example, ignored, answers)
		switch h.mode {
		case sendBoth:
			continue // a page or two of its own; the host honours them
		case sendGaveUp:
			line += "; no way of sending them was honoured"
		default:
			line += fmt.Sprintf("; %s: %d answered 304, %d full", h.mode, h.honoured, h.ignored)
		}
		out[origin] = line
	}
	return out
}
