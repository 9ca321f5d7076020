package site

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Validators describe the representation a handler is about to send, in
// the two forms HTTP compares (RFC 9110 §8.8): an entity tag and a
// modification date. Either may be left out; with neither, [Conditional]
// has nothing to compare and only "If-None-Match: *" and "If-Match: *" can
// apply.
type Validators struct {
	// ETag is the entity tag: an opaque string that changes whenever the
	// representation changes, such as the result of [ETagOf]. It may be
	// given bare (v42), quoted ("v42") or weak (W/"v42"); it is sent
	// quoted. A tag with characters an entity tag cannot carry (a double
	// quote, a space, a control character) is replaced by a hash of it,
	// which still changes exactly when it does.
	ETag string
	// Weak marks the tag weak (W/"…"): the representation may change in
	// bytes without changing in meaning — a page served both gzipped and
	// not under one tag, say. A tag given with W/ is weak too.
	// If-None-Match compares weakly, so GET and HEAD answer 304 for weak
	// tags as for strong ones; If-Match compares strongly and never
	// matches a weak tag (RFC 9110 §8.8.3.2).
	Weak bool
	// LastModified is when the representation last changed. It is sent and
	// compared at the second (HTTP dates have no finer resolution), and a
	// time later than now is sent as now (RFC 9110 §8.8.2.1). The zero
	// time means unknown.
	LastModified time.Time
}

// header returns the ETag field value, or "" when there is none.
func (v Validators) header() string {
	tag, weak := v.ETag, v.Weak
	if rest, ok := strings.CutPrefix(tag, "W/"); ok {
		tag, weak = rest, true
	}
	if len(tag) >= 2 && tag[0] == '"' && tag[len(tag)-1] == '"' {
		tag = tag[1 : len(tag)-1]
	}
	if tag == "" {
		return ""
	}
	for i := 0; i < len(tag); i++ {
		if !isETagc(tag[i]) {
			tag = strings.Trim(ETagOf(v.ETag), `"`)
			break
		}
	}
	if weak {
		return `W/"` + tag + `"`
	}
	return `"` + tag + `"`
}

// isETagc reports whether c may appear between the quotes of an entity
// tag (RFC 9110 §8.8.3: etagc = %x21 / %x23-7E / obs-text).
func isETagc(c byte) bool {
	return c == 0x21 || c >= 0x23 && c <= 0x7e || c >= 0x80
}

// ETagOf returns a strong entity tag, quoted, that is a hash of versions:
// whatever changes when the page changes — a row's version or update
// time, the IDs and versions of the items a list shows, the version of the
// templates. Equal arguments give equal tags, in any process.
//
// Strings, byte slices, booleans, integers, floats and times hash by
// value (a time by its instant, whatever its location or monotonic
// reading); anything else by its fmt %v form, so pass only values whose
// printed form is stable: not pointers, and not maps of pointers.
func ETagOf(versions ...any) string {
	h := sha256.New()
	var buf [binary.MaxVarintLen64]byte
	put := func(kind byte, b []byte) {
		h.Write([]byte{kind})
		h.Write(buf[:binary.PutUvarint(buf[:], uint64(len(b)))])
		h.Write(b)
	}
	for _, v := range versions {
		switch v := v.(type) {
		case string:
			put('s', []byte(v))
		case []byte:
			put('s', v)
		case bool:
			put('b', strconv.AppendBool(nil, v))
		case int:
			put('i', strconv.AppendInt(nil, int64(v), 10))
		case int8:
			put('i', strconv.AppendInt(nil, int64(v), 10))
		case int16:
			put('i', strconv.AppendInt(nil, int64(v), 10))
		case int32:
			put('i', strconv.AppendInt(nil, int64(v), 10))
		case int64:
			put('i', strconv.AppendInt(nil, v, 10))
		case uint:
			put('i', strconv.AppendUint(nil, uint64(v), 10))
		case uint8:
			put('i', strconv.AppendUint(nil, uint64(v), 10))
		case uint16:
			put('i', strconv.AppendUint(nil, uint64(v), 10))
		case uint32:
			put('i', strconv.AppendUint(nil, uint64(v), 10))
		case uint64:
			put('i', strconv.AppendUint(nil, v, 10))
		case float32:
			put('f', strconv.AppendUint(nil, uint64(math.Float32bits(v)), 16))
		case float64:
			put('f', strconv.AppendUint(nil, math.Float64bits(v), 16))
		case time.Time:
			b := strconv.AppendInt(nil, v.Unix(), 10)
			b = append(b, '.')
			put('t', strconv.AppendInt(b, int64(v.Nanosecond()), 10))
		default:
			put('v', []byte(fmt.Sprint(v)))
		}
	}
	return `"` + hex.EncodeToString(h.Sum(nil)[:16]) + `"`
}

// Newest returns the latest of times, ignoring zero times; the zero time
// if there are none. A page built from several records was last modified
// when the newest of them was.
func Newest(times ...time.Time) time.Time {
	var n time.Time
	for _, t := range times {
		if !t.IsZero() && t.After(n) {
			n = t
		}
	}
	return n
}

// Conditional evaluates the preconditions of r against v, the validators
// of the representation the handler is about to send, in the order RFC
// 9110 §13.2.2 lays down. It reports whether it answered the request; the
// handler must then write nothing more.
//
// For GET and HEAD it first sets the ETag and Last-Modified fields. When
// the request's preconditions say the client's copy is current (its
// If-None-Match names the ETag, or, without If-None-Match, its
// If-Modified-Since is not older than LastModified), it answers 304 Not
// Modified with no body, keeping the header fields a 304 must repeat from
// the 200 it replaces (RFC 9110 §15.4.5): ETag, Cache-Control, Expires,
// Vary, Content-Location, and Date, which net/http adds. Set those before
// calling Conditional. It drops the fields that describe a body
// (Content-Type, Content-Length, Content-Encoding, Content-Language) and,
// when there is an ETag, Last-Modified, which a 304 should not repeat.
//
// For any method, it answers 412 Precondition Failed when If-Match names
// no current strong ETag, or, without If-Match, If-Unmodified-Since is
// older than LastModified; and for methods other than GET and HEAD when
// If-None-Match names the current ETag. A state-changing handler calls
// Conditional before it changes anything, with the validators of the
// current state; then it sets no ETag or Last-Modified, which would
// describe the state before the change.
//
// Details that matter:
//   - If-None-Match compares weakly (W/"x" matches "x"), If-Match
//     strongly; "*" matches any current representation, so call
//     Conditional only on the path that would answer 2xx (RFC 9110 §13.1:
//     preconditions do not apply to other answers).
//   - Lists may span several header lines and contain empty elements. A
//     malformed If-None-Match is ignored (the client gets the full
//     answer); a malformed If-Match fails (no change is made under a
//     condition that cannot be read).
//   - If-Modified-Since counts only without If-None-Match and only for GET
//     and HEAD; a value that is not an HTTP-date, that appears on several
//     lines, or that is later than the server's clock is ignored (RFC 2616
//     §14.25 called such a date invalid), as is If-Unmodified-Since that
//     is not one date.
//   - Range and If-Range are not handled: the full representation is
//     sent.
func Conditional(w http.ResponseWriter, r *http.Request, v Validators) (done bool) {
	return conditional(w, r, v, time.Now())
}

// conditional is Conditional with the server's clock reading.
func conditional(w http.ResponseWriter, r *http.Request, v Validators, now time.Time) bool {
	etag := v.header()
	var modified time.Time
	if !v.LastModified.IsZero() {
		modified = v.LastModified
		if modified.After(now) {
			modified = now
		}
		modified = modified.UTC().Truncate(time.Second)
	}
	safe := r.Method == http.MethodGet || r.Method == http.MethodHead
	h := w.Header()
	if safe {
		if etag != "" {
			h.Set("Etag", etag)
		}
		if !modified.IsZero() {
			h.Set("Last-Modified", modified.Format(http.TimeFormat))
		}
	}

	// Steps 1 and 2: If-Match, else If-Unmodified-Since.
	if im, ok := fieldList(r.Header, "If-Match"); ok {
		if !ifMatch(im, etag) {
			preconditionFailed(w)
			return true
		}
	} else if t, ok := fieldDate(r.Header, "If-Unmodified-Since"); ok && !modified.IsZero() {
		if modified.After(t) {
			preconditionFailed(w)
			return true
		}
	}

	// Step 3: If-None-Match, else (step 4) If-Modified-Since.
	if inm, ok := fieldList(r.Header, "If-None-Match"); ok {
		if list, ok := parseTags(inm); ok {
			if !list.matchWeak(etag) {
				return false
			}
			if safe {
				notModified(w, etag != "")
			} else {
				preconditionFailed(w)
			}
			return true
		}
		// Malformed: as if absent, so If-Modified-Since applies.
	}
	if !safe || modified.IsZero() {
		return false
	}
	t, ok := fieldDate(r.Header, "If-Modified-Since")
	if !ok || t.After(now) || modified.After(t) {
		return false
	}
	notModified(w, etag != "")
	return true
}

// notModified writes a 304 with the header fields RFC 9110 §15.4.5 asks
// for and no others that describe a body.
func notModified(w http.ResponseWriter, hasETag bool) {
	h := w.Header()
	for _, k := range []string{"Content-Type", "Content-Length", "Content-Encoding", "Content-Language"} {
		delete(h, k)
	}
	if hasETag {
		// "Last-Modified might be useful if the response does not have an
		// ETag field" (RFC 9110 §15.4.5); with one, it is left out.
		delete(h, "Last-Modified")
	}
	w.WriteHeader(http.StatusNotModified)
}

func preconditionFailed(w http.ResponseWriter) {
	h := w.Header()
	for _, k := range []string{"Etag", "Last-Modified", "Content-Length", "Content-Encoding", "Content-Language"} {
		delete(h, k)
	}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusPreconditionFailed)
	fmt.Fprintln(w, "412 precondition failed: the resource is not in the state the request requires")
}

// fieldList returns the field's lines joined as one list, and whether it
// is present.
func fieldList(h http.Header, name string) (string, bool) {
	vs := h.Values(name)
	if len(vs) == 0 {
		return "", false
	}
	return strings.Join(vs, ","), true
}

// fieldDate returns the field's date when it is present once and is an
// HTTP-date (any of the three forms RFC 9110 §5.6.7 asks a recipient to
// read).
func fieldDate(h http.Header, name string) (time.Time, bool) {
	vs := h.Values(name)
	if len(vs) != 1 {
		return time.Time{}, false
	}
	t, err := http.ParseTime(strings.TrimSpace(vs[0]))
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}

// tagList is a parsed If-Match or If-None-Match: "*" or entity tags.
type tagList struct {
	any  bool
	tags []string // as received: W/"x" or "x"
}

// parseTags parses `"*" / #entity-tag` (RFC 9110 §13.1.1, §13.1.2),
// allowing empty list elements and optional whitespace; ok is false when
// it is malformed.
func parseTags(s string) (tagList, bool) {
	if strings.TrimSpace(s) == "*" {
		return tagList{any: true}, true
	}
	var l tagList
	for {
		s = strings.TrimLeft(s, " \t,")
		if s == "" {
			return l, len(l.tags) > 0
		}
		start := 0
		if strings.HasPrefix(s, "W/") {
			start = 2
		}
		if len(s) < start+2 || s[start] != '"' {
			return tagList{}, false
		}
		end := start + 1
		for end < len(s) && s[end] != '"' {
			if !isETagc(s[end]) {
				return tagList{}, false
			}
			end++
		}
		if end == len(s) {
			return tagList{}, false
		}
		l.tags = append(l.tags, s[:end+1])
		s = strings.TrimLeft(s[end+1:], " \t")
		if s != "" && s[0] != ',' {
			return tagList{}, false
		}
	}
}

// matchWeak reports whether the list matches etag by weak comparison: the
// opaque tags are equal, either or both may be weak.
func (l tagList) matchWeak(etag string) bool {
	if l.any {
		return true
	}
	if etag == "" {
		return false
	}
	bare := strings.TrimPrefix(etag, "W/")
	for _, t := range l.tags {
		if strings.TrimPrefix(t, "W/") == bare {
			return true
		}
	}
	return false
}

// ifMatch evaluates If-Match: "*" matches any current representation, a
// list only a strong tag equal to the current one, which must be strong.
func ifMatch(field, etag string) bool {
	l, ok := parseTags(field)
	if !ok {
		return false
	}
	if l.any {
		return true
	}
	if etag == "" || strings.HasPrefix(etag, "W/") {
		return false
	}
	for _, t := range l.tags {
		if t == etag {
			return true
		}
	}
	return false
}

// ConditionalHandler answers conditional requests before next runs:
// validators returns the validators of the representation next would
// send, cheaply (from a version column, a file's modification time), and
// [Conditional] answers 304 or 412 when it can; otherwise next serves the
// request, with the ETag and Last-Modified fields already set.
//
// A 304 must repeat the Cache-Control, Expires and Vary a 200 would carry,
// but next does not run for it: set those fields in a handler that wraps
// this one, or call Conditional from next instead.
//
// When validators returns an error, or no validators, next serves the
// request unconditionally: the resource may not exist, and preconditions
// do not apply to answers other than 2xx (RFC 9110 §13.1).
func ConditionalHandler(validators func(*http.Request) (Validators, error), next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, err := validators(r)
		if err == nil && (v != Validators{}) && Conditional(w, r, v) {
			return
		}
		next.ServeHTTP(w, r)
	})
}
