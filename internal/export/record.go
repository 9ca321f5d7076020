package export

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/gentlecrawl/gentlecrawl/warc"
)

// record is a WARC record as the export reads it. It is what a
// warc.Record holds, but its memory (header and block) is reused from
// record to record, where warc.Reader makes a map and two strings per
// field and grows a new block each time: for small records that was most
// of the allocations of an export.
type record struct {
	typ    string  // WARC-Type
	hdr    []byte  // the names and values of the fields, back to back
	fields []field // in file order, each name once (the first value wins)
	block  []byte  // exactly Content-Length bytes
}

// field is a named field of a record: name and value are hdr[n0:n1] and
// hdr[v0:v1].
type field struct{ n0, n1, v0, v1 int }

// get returns the first value of the named field, whatever its case in the
// file: the field spelled as name, or else the first one spelled otherwise.
// It is nil when there is none. Names are tokens (ASCII).
func (r *record) get(name string) []byte {
	for _, f := range r.fields {
		if string(r.hdr[f.n0:f.n1]) == name {
			return r.hdr[f.v0:f.v1]
		}
	}
	for _, f := range r.fields {
		if equalFold(r.hdr[f.n0:f.n1], name) {
			return r.hdr[f.v0:f.v1]
		}
	}
	return nil
}

// has reports whether a field is spelled exactly name.
func (r *record) has(name []byte) bool {
	for _, f := range r.fields {
		if bytes.Equal(r.hdr[f.n0:f.n1], name) {
			return true
		}
	}
	return false
}

// add appends a field.
func (r *record) add(name, value []byte) int {
	f := field{n0: len(r.hdr)}
	r.hdr = append(r.hdr, name...)
	f.n1, f.v0 = len(r.hdr), len(r.hdr)
	r.hdr = append(r.hdr, value...)
	f.v1 = len(r.hdr)
	r.fields = append(r.fields, f)
	return len(r.fields) - 1
}

// fromWARC makes r a copy of rec, read by a warc.Reader.
func (r *record) fromWARC(rec *warc.Record) {
	r.hdr, r.fields = r.hdr[:0], r.fields[:0]
	for name, value := range rec.Header {
		r.add([]byte(name), []byte(value))
	}
	r.typ, r.block = rec.Type, rec.Block
}

// equalFold is strings.EqualFold for an ASCII s.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		if lower(b[i]) != lower(s[i]) {
			return false
		}
	}
	return true
}

// hasPrefixFold reports whether b begins with the ASCII prefix, in any
// case. For an ASCII prefix it is strings.HasPrefix(strings.ToLower(b),
// prefix): no other character lowers to one of its letters and keeps the
// next in place.
func hasPrefixFold(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && equalFold(b[:len(prefix)], prefix)
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// maxKeep is the largest buffer a scanner keeps for the next record; a
// larger one, which only a large record needs, is left to the collector.
const maxKeep = 4 << 20

// next reads the next record of the member being read into s.rec. At the
// end of the member it returns io.EOF. It reads as warc.Reader.Next does,
// and fails as it does, with the same errors (without the record number
// Next puts in front, which cause drops anyway); TestRecordReader holds
// the two side by side.
func (s *scanner) next() error {
	br, r := s.wbr, &s.rec
	budget := warc.MaxHeaderSize
	var line []byte
	for {
		var err error
		line, err = s.readLine(br, &budget)
		if err == io.EOF && len(line) == 0 {
			return io.EOF
		}
		if err != nil {
			return headerErr(err)
		}
		if len(line) > 0 {
			break
		}
	}
	if v := string(line); v != "WARC/1.1" && v != "WARC/1.0" {
		return fmt.Errorf("%w: version line %.40q", warc.ErrMalformed, line)
	}

	r.typ, r.hdr, r.fields, r.block = "", r.hdr[:0], r.fields[:0], nil
	sawField := false
	last := -1 // the field a continuation line extends; -1 if that field was dropped
	for {
		line, err := s.readLine(br, &budget)
		if err != nil {
			return headerErr(err)
		}
		if len(line) == 0 {
			break
		}
		if line[0] == ' ' || line[0] == '\t' {
			// Folded value (WARC 1.1 §4, LWS): hdr ends with it.
			if !sawField {
				return fmt.Errorf("%w: continuation line before any field", warc.ErrMalformed)
			}
			if last >= 0 {
				r.hdr = append(r.hdr, ' ')
				r.hdr = append(r.hdr, bytes.Trim(line, " \t")...)
				r.fields[last].v1 = len(r.hdr)
			}
			continue
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok || !validToken(name) {
			return fmt.Errorf("%w: field line %.60q", warc.ErrMalformed, line)
		}
		sawField = true
		if r.has(name) {
			last = -1 // only the first value is kept
			continue
		}
		last = r.add(name, bytes.Trim(value, " \t"))
	}

	switch t := r.get("WARC-Type"); string(t) {
	case "":
		return fmt.Errorf("%w: no WARC-Type", warc.ErrMalformed)
	case "response":
		r.typ = "response"
	case "request":
		r.typ = "request"
	case "revisit":
		r.typ = "revisit"
	default:
		r.typ = string(t)
	}
	cl := r.get("Content-Length")
	n, ok := parseLength(cl)
	if !ok {
		return fmt.Errorf("%w: Content-Length %q", warc.ErrMalformed, cl)
	}
	if n > s.opts.MaxRecordSize {
		return fmt.Errorf("%w: Content-Length %d, limit %d", warc.ErrBlockTooLarge, n, s.opts.MaxRecordSize)
	}

	// The buffer grows with what arrives, not to n at once: a short input
	// claiming a large block then costs only what it holds.
	if cap(s.blk) > maxKeep {
		s.blk = nil
	}
	buf := s.blk[:0]
	var rerr error
	for int64(len(buf)) < n && rerr == nil {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, int(min(n-int64(len(buf)), int64(max(cap(buf), 32<<10)))))
		}
		var m int
		m, rerr = br.Read(buf[len(buf):min(int64(cap(buf)), n)])
		buf = buf[:len(buf)+m]
	}
	s.blk = buf
	if got := int64(len(buf)); got < n {
		if rerr == io.EOF {
			rerr = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("%w: block ends after %d of %d bytes: %w", warc.ErrMalformed, got, n, rerr)
	}
	r.block = buf

	if _, err := io.ReadFull(br, s.end[:]); err != nil || string(s.end[:]) != "\r\n\r\n" {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return fmt.Errorf("%w: record end: %w", warc.ErrMalformed, err)
		}
		return fmt.Errorf("%w: record does not end in CRLF CRLF", warc.ErrMalformed)
	}
	return nil
}

// readLine returns the next line without its line end (CRLF, or a bare
// LF), charging its length to *budget. A line without a line end is an
// error (io.EOF at the end of input). The line is valid until the next
// read.
func (s *scanner) readLine(br *bufio.Reader, budget *int) ([]byte, error) {
	long := s.long[:0]
	for {
		frag, err := br.ReadSlice('\n')
		*budget -= len(frag)
		if *budget < 0 {
			return nil, fmt.Errorf("%w: more than %d bytes", warc.ErrHeaderTooLarge, warc.MaxHeaderSize)
		}
		if err == bufio.ErrBufferFull {
			long = append(long, frag...)
			s.long = long
			continue
		}
		if err != nil {
			if len(frag) > 0 || len(long) > 0 {
				s.long = append(long, frag...)
				return s.long, io.EOF
			}
			return nil, err
		}
		line := frag
		if len(long) > 0 {
			s.long = append(long, frag...)
			line = s.long
		}
		line = line[:len(line)-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		return line, nil
	}
}

func headerErr(err error) error {
	switch {
	case errors.Is(err, warc.ErrHeaderTooLarge):
		return err
	case err == io.EOF:
		return fmt.Errorf("%w: header: %w", warc.ErrMalformed, io.ErrUnexpectedEOF)
	default:
		return fmt.Errorf("%w: header: %w", warc.ErrMalformed, err)
	}
}

// validToken reports whether b is a non-empty field name: RFC 9110 token
// characters (WARC 1.1 §4 field-name = token).
func validToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// parseLength parses a Content-Length as strconv.ParseInt(b, 10, 64)
// does, and accepts what it accepts and is not negative: decimal digits,
// after an optional sign ("-0" is 0).
func parseLength(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg, b = b[0] == '-', b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if n > (1<<63-1-d)/10 {
			return 0, false // out of range, either sign
		}
		n = n*10 + d
	}
	if neg && n != 0 {
		return 0, false
	}
	return n, true
}
