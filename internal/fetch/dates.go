package fetch

import (
	"crypto/sha1"
	"encoding/base32"
	"fmt"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"
)

// httpDateLayouts are the three forms of an HTTP-date (RFC 9110 §5.6.7):
// IMF-fixdate, the obsolete RFC 850 form and ANSI C's asctime() form.
var httpDateLayouts = []string{
	"Mon, 02 Jan 2006 15:04:05 GMT",
	"Monday, 02-Jan-06 15:04:05 GMT",
	"Mon Jan _2 15:04:05 2006",
}

// ParseHTTPDate parses an HTTP-date in any of the three forms of RFC 9110
// §5.6.7, and reports false for anything else. A two-digit RFC 850 year
// more than 50 years in the future is taken as the most recent past year
// with those digits, as §5.6.7 asks.
func ParseHTTPDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for i, layout := range httpDateLayouts {
		t, err := time.Parse(layout, s)
		if err != nil {
			continue
		}
		if i == 1 && t.After(time.Now().AddDate(50, 0, 0)) {
			t = t.AddDate(-100, 0, 0)
		}
		return t.UTC(), true
	}
	return time.Time{}, false
}

// HasValidators reports whether the response carries a validator the next
// request can be made conditional with (an ETag, or a Last-Modified that is
// a valid HTTP-date). When it does not, compare PayloadDigest with the last
// one to tell "unchanged".
func (r *Result) HasValidators() bool {
	if r.Header == nil {
		return false
	}
	if r.Header.Get("ETag") != "" {
		return true
	}
	_, ok := ParseHTTPDate(r.Header.Get("Last-Modified"))
	return ok
}

// Complete reports whether Body is the whole decoded payload: not cut, not
// skipped, decoded without error.
func (r *Result) Complete() bool {
	return r.Truncated == "" && !r.Skipped && r.DecodeErr == nil && r.Undecoded == ""
}

// PayloadDigest returns a digest of the decoded body, the form the crawler
// keeps in its fetch history: "xxh64:" and the XXH64 of the body in 16 hex
// digits. It is "" when the body is not Complete: a partial body says
// nothing about change. It is worked out once per Result.
//
// The digest tells whether a page changed between two visits, and whether
// two files of a crawl are the same: not a signature, so a fast hash does,
// at a fraction of SHA-1's cost per page. The WARC's digests stay SHA-1,
// as the format's readers expect.
func (r *Result) PayloadDigest() string {
	if !r.Complete() {
		return ""
	}
	if r.digest == "" {
		r.digest = fmt.Sprintf("xxh64:%016x", xxhash.Sum64(r.Body))
	}
	return r.digest
}

// SamePayload reports whether the body is complete and has the digest
// prev: the page did not change although the server sent no validator (or
// a 200 to a conditional request). A digest of the "sha1:" kind, which a
// job's history kept before, is compared as such.
func (r *Result) SamePayload(prev string) bool {
	if prev == "" || !r.Complete() {
		return false
	}
	if old, ok := strings.CutPrefix(prev, "sha1:"); ok {
		sum := sha1.Sum(r.Body)
		return old == base32.StdEncoding.EncodeToString(sum[:])
	}
	return r.PayloadDigest() == prev
}
