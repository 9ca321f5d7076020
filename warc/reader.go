package warc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Limits on untrusted input.
const (
	// MaxHeaderSize bounds the header of one record: version line, fields and the
	// empty line that ends them.
	MaxHeaderSize = 64 << 10
	// DefaultMaxBlockSize is the largest Content-Length a [Reader] accepts unless
	// told otherwise with [Reader.SetMaxBlockSize].
	DefaultMaxBlockSize = 1 << 30
)

// Errors returned by [Reader.Next], wrapped with the number of the record.
var (
	// ErrHeaderTooLarge means a record header is longer than MaxHeaderSize.
	ErrHeaderTooLarge = errors.New("warc: record header too large")
	// ErrBlockTooLarge means a record's Content-Length is above the reader's maximum.
	ErrBlockTooLarge = errors.New("warc: record block too large")
	// ErrMalformed means the input is not a well-formed WARC record.
	ErrMalformed = errors.New("warc: malformed record")
)

// Record is one WARC record as read by a [Reader].
type Record struct {
	// Type is the WARC-Type, e.g. "response".
	Type string
	// Header maps each field name, spelled as in the file, to its first value.
	Header map[string]string
	// Block is the record block: exactly Content-Length bytes.
	Block []byte
}

// Get returns the first value of the named field, whatever its case in the file.
func (r *Record) Get(name string) string {
	if v, ok := r.Header[name]; ok {
		return v
	}
	for k, v := range r.Header {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// Reader reads WARC records from a stream, gzipped (per record or as a whole) or
// plain. It is not safe for concurrent use.
type Reader struct {
	br       *bufio.Reader
	maxBlock int64
	n        int // records read so far
	err      error
}

// NewReader returns a Reader for r, detecting gzip from the first bytes.
func NewReader(r io.Reader) (*Reader, error) {
	br := bufio.NewReader(r)
	magic, err := br.Peek(2)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("warc: %w", err)
	}
	rd := &Reader{br: br, maxBlock: DefaultMaxBlockSize}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		// Multistream (the default) reads one gzip member after another, which
		// is how per-record compressed files are read as one stream.
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("warc: %w", err)
		}
		rd.br = bufio.NewReader(zr)
	}
	return rd, nil
}

// SetMaxBlockSize sets the largest Content-Length Next accepts; n <= 0 restores the
// default of 1 GiB.
func (r *Reader) SetMaxBlockSize(n int64) {
	if n <= 0 {
		n = DefaultMaxBlockSize
	}
	r.maxBlock = n
}

// Next returns the next record, or io.EOF after the last one. An error other than
// io.EOF wraps ErrMalformed, ErrHeaderTooLarge, ErrBlockTooLarge or the error of the
// underlying reader; once Next has returned an error it returns the same error.
func (r *Reader) Next() (*Record, error) {
	if r.err != nil {
		return nil, r.err
	}
	rec, err := readRecord(r.br, r.maxBlock, math.MaxInt64)
	if err != nil {
		if err != io.EOF {
			err = fmt.Errorf("record %d: %w", r.n+1, err)
		}
		r.err = err
		return nil, err
	}
	r.n++
	return rec, nil
}

// readRecord reads one record from br. At a clean end of input it returns io.EOF.
// Block holds the first keep bytes of the block, the rest is read and discarded;
// with keep 0 Block is nil.
func readRecord(br *bufio.Reader, maxBlock, keep int64) (*Record, error) {
	// Tolerate empty lines between records, which some writers add.
	var line []byte
	budget := MaxHeaderSize
	for {
		var err error
		line, err = readLine(br, &budget)
		if err == io.EOF && len(line) == 0 {
			return nil, io.EOF
		}
		if err != nil {
			return nil, headerErr(err)
		}
		if len(line) > 0 {
			break
		}
	}
	if v := string(line); v != "WARC/1.1" && v != "WARC/1.0" {
		return nil, fmt.Errorf("%w: version line %.40q", ErrMalformed, line)
	}

	rec := &Record{Header: make(map[string]string)}
	sawField := false
	var last string // field a continuation line extends; "" if that field was dropped
	for {
		line, err := readLine(br, &budget)
		if err != nil {
			return nil, headerErr(err)
		}
		if len(line) == 0 {
			break
		}
		if line[0] == ' ' || line[0] == '\t' {
			// Folded value (WARC 1.1 §4, LWS).
			if !sawField {
				return nil, fmt.Errorf("%w: continuation line before any field", ErrMalformed)
			}
			if last != "" {
				rec.Header[last] += " " + string(bytes.Trim(line, " \t"))
			}
			continue
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok || !validToken(string(name)) {
			return nil, fmt.Errorf("%w: field line %.60q", ErrMalformed, line)
		}
		sawField = true
		last = string(name)
		if _, dup := rec.Header[last]; dup {
			last = "" // only the first value is kept
			continue
		}
		rec.Header[last] = string(bytes.Trim(value, " \t"))
	}

	rec.Type = rec.Get("WARC-Type")
	if rec.Type == "" {
		return nil, fmt.Errorf("%w: no WARC-Type", ErrMalformed)
	}
	cl := rec.Get("Content-Length")
	n, err := strconv.ParseInt(cl, 10, 64)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("%w: Content-Length %q", ErrMalformed, cl)
	}
	if n > maxBlock {
		return nil, fmt.Errorf("%w: Content-Length %d, limit %d", ErrBlockTooLarge, n, maxBlock)
	}

	// Copy rather than allocate n bytes up front: a short input claiming a large
	// block then costs only what it holds.
	var dst io.Writer = io.Discard
	var block headWriter
	switch {
	case keep >= n:
		dst = &block.buf
	case keep > 0:
		block.max = keep
		dst = &block
	}
	if got, err := io.CopyN(dst, br, n); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("%w: block ends after %d of %d bytes: %w", ErrMalformed, got, n, err)
	}
	if keep > 0 {
		rec.Block = block.buf.Bytes()
	}

	var end [4]byte
	if _, err := io.ReadFull(br, end[:]); err != nil || string(end[:]) != crlf+crlf {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return nil, fmt.Errorf("%w: record end: %w", ErrMalformed, err)
		}
		return nil, fmt.Errorf("%w: record does not end in CRLF CRLF", ErrMalformed)
	}
	return rec, nil
}

// headWriter keeps the first max bytes written to it and drops the rest.
type headWriter struct {
	buf bytes.Buffer
	max int64
}

func (h *headWriter) Write(p []byte) (int, error) {
	if room := h.max - int64(h.buf.Len()); room > 0 {
		h.buf.Write(p[:min(int64(len(p)), room)])
	}
	return len(p), nil
}

func headerErr(err error) error {
	switch {
	case errors.Is(err, ErrHeaderTooLarge):
		return err
	case err == io.EOF:
		return fmt.Errorf("%w: header: %w", ErrMalformed, io.ErrUnexpectedEOF)
	default:
		return fmt.Errorf("%w: header: %w", ErrMalformed, err)
	}
}

// readLine returns the next line without its line end (CRLF, or a bare LF), charging
// its length to *budget. A line without a line end is an error (io.EOF at the end of
// input). The returned slice is valid until the next read.
func readLine(br *bufio.Reader, budget *int) ([]byte, error) {
	var long []byte
	for {
		frag, err := br.ReadSlice('\n')
		*budget -= len(frag)
		if *budget < 0 {
			return nil, fmt.Errorf("%w: more than %d bytes", ErrHeaderTooLarge, MaxHeaderSize)
		}
		if err == bufio.ErrBufferFull {
			long = append(long, frag...)
			continue
		}
		if err != nil {
			if len(frag) > 0 || len(long) > 0 {
				return append(long, frag...), io.EOF
			}
			return nil, err
		}
		line := frag
		if long != nil {
			line = append(long, frag...)
		}
		line = line[:len(line)-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		return line, nil
	}
}
