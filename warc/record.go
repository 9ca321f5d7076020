package warc

import (
	"bytes"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base32"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// Record types and values written by this package (WARC 1.1 §6 and §5.9).
const (
	typeWarcinfo = "warcinfo"
	typeRequest  = "request"
	typeResponse = "response"
	typeRevisit  = "revisit"

	contentTypeRequest  = "application/http;msgtype=request"
	contentTypeResponse = "application/http;msgtype=response"
	contentTypeFields   = "application/warc-fields"

	// ProfileServerNotModified is the WARC-Profile of revisit records written for a
	// 304 Not Modified answer to a conditional request (WARC 1.1 §6.7.3).
	ProfileServerNotModified = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"

	warcVersion = "WARC/1.1"
	crlf        = "\r\n"
)

// newRecordID returns a fresh "<urn:uuid:...>" with a random (version 4) UUID
// (RFC 9562 §5.4).
func newRecordID() string {
	var u [16]byte
	_, _ = rand.Read(u[:]) // crypto/rand.Read never returns an error (Go 1.24+).
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return "<urn:uuid:" + string(b[:]) + ">"
}

// sha1Digest returns the labelled digest "sha1:BASE32" that WARC-Block-Digest and
// WARC-Payload-Digest carry (WARC 1.1 §5.8, §5.9).
func sha1Digest(p []byte) string {
	sum := sha1.Sum(p)
	return "sha1:" + base32.StdEncoding.EncodeToString(sum[:])
}

// sha1Digest2 is sha1Digest of a followed by b.
func sha1Digest2(a, b []byte) string {
	if len(b) == 0 {
		return sha1Digest(a)
	}
	h := sha1.New()
	h.Write(a)
	h.Write(b)
	var sum [sha1.Size]byte
	return "sha1:" + base32.StdEncoding.EncodeToString(h.Sum(sum[:0]))
}

// formatDate renders a WARC-Date: UTC, W3C-DTF, with a fraction of a second only
// when the time has one (WARC 1.1 §5.4 allows finer than second precision). The
// fraction stops at microseconds, which every reader we know of accepts.
func formatDate(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.999999Z")
}

// httpBody returns the entity body of an HTTP message: what follows the first empty
// line. ok is false when the message has no complete header section.
func httpBody(msg []byte) (body []byte, ok bool) {
	_, body, ok = SplitHTTP(msg)
	return body, ok
}

// SplitHTTP cuts an HTTP message (a response or request record's block) after
// the empty line that ends its head. Line ends are CRLF, or bare LF, which some
// servers send (RFC 9112 §2.2). Without an empty line, ok is false and the whole
// message is head.
func SplitHTTP(msg []byte) (head, body []byte, ok bool) {
	for i := 0; i < len(msg); {
		j := bytes.IndexByte(msg[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1 // start of the next line
		switch {
		case i < len(msg) && msg[i] == '\n':
			return msg[:i+1], msg[i+1:], true
		case i+1 < len(msg) && msg[i] == '\r' && msg[i+1] == '\n':
			return msg[:i+2], msg[i+2:], true
		}
	}
	return msg, nil, false
}

// field is one WARC named field, in the order it is written.
type field struct{ name, value string }

// appendHeader appends to dst the header of a record whose block is blockLen
// bytes long: version line, fields, Content-Length and the empty line that
// ends the header.
func appendHeader(dst []byte, fields []field, blockLen int) []byte {
	dst = append(dst, warcVersion+crlf...)
	for _, f := range fields {
		dst = append(dst, f.name...)
		dst = append(dst, ": "...)
		dst = append(dst, f.value...)
		dst = append(dst, crlf...)
	}
	dst = append(dst, "Content-Length: "...)
	dst = strconv.AppendInt(dst, int64(blockLen), 10)
	return append(dst, crlf+crlf...)
}

// validValue reports whether s can be a WARC field value written on one line: no
// control characters (which would let a value end the line and inject a field).
func validValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// validToken reports whether s is a non-empty field name: RFC 9110 token characters
// (WARC 1.1 §4 field-name = token).
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
