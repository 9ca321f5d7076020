package export

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"

	"github.com/gentlecrawl/gentlecrawl/warc"
)

// scanner reads the records of gzip members and makes the lines of their
// pages. The Exporter has one for what it reads itself, and each worker
// has one. Its memory is reused from record to record.
type scanner struct {
	opts *Options
	zr   gzip.Reader   // the member being read
	wbr  *bufio.Reader // its records, decompressed
	rec  record        // the record being read
	blk  []byte        // holds rec.block, reused from record to record
	long []byte        // a header line longer than wbr's buffer
	end  [4]byte       // the end of a record
	nest nested        // for a member whose content is itself gzip

	body []byte        // decoded body, reused from record to record
	head *bufio.Reader // reads a response head
	hr   bytes.Reader  // what head reads
	date []byte        // a date formatted

	src  bytes.Reader // a worker's batch
	base int64        // the offset of the batch in its file

	enc   *json.Encoder // writes the lines to sink
	sink  sink
	stats *Stats // counts Records, Pages and Robots
}

func newScanner(opts *Options) *scanner {
	s := &scanner{
		opts: opts,
		wbr:  bufio.NewReaderSize(nil, 32<<10),
		head: bufio.NewReader(nil),
	}
	s.enc = json.NewEncoder(&s.sink)
	s.enc.SetEscapeHTML(false)
	return s
}

// into sets where the lines go, and what counts them.
func (s *scanner) into(w io.Writer, stats *Stats) {
	s.sink.w, s.stats = w, stats
}

// sink is the writer of a scanner's lines, which changes with the batch.
type sink struct{ w io.Writer }

func (s *sink) Write(p []byte) (int, error) { return s.w.Write(p) }

// outcome is what reading one gzip member came to.
type outcome struct {
	end     int64 // where reading stopped: the end of the member, or where it failed
	records int   // records read, the one that failed included
	err     error // why a record could not be read (the cause of a ReadError)
	fatal   bool  // err is damage: reading the file stops
	eof     bool  // there is no member: the file ends at its start
}

// member reads the gzip member that begins at offset start of the file,
// from src, and writes the lines of its pages. at tells how far src has
// been read, as an offset in the file; src is read no further than the
// member's end (the gzip reader reads an io.ByteReader byte by byte), so
// at the end that is where the next member begins. src is a *bytes.Reader
// or a *bufio.Reader, which the decompressor reads fastest. err is the
// writer's, or ctx's.
func (s *scanner) member(ctx context.Context, src flate.Reader, at func() int64, start int64) (m outcome, err error) {
	failed := func(err error) (outcome, error) {
		m.records++
		m.err, m.fatal, m.end = cause(err), true, at()
		return m, nil
	}
	if err := s.zr.Reset(src); err != nil {
		if err == io.EOF && at() == start {
			m.eof, m.end = true, start
			return m, nil
		}
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return failed(fmt.Errorf("gzip header: %w", err))
	}
	s.zr.Multistream(false)
	s.wbr.Reset(&s.zr)
	next := s.next
	// As warc.NewReader does, take a member whose content starts as gzip
	// does for gzip, and read what that decompresses to: warc.Reader does
	// it.
	if magic, err := s.wbr.Peek(2); err != nil && err != io.EOF {
		return failed(fmt.Errorf("warc: %w", err))
	} else if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		if err := s.nest.open(s); err != nil {
			return failed(err)
		}
		next = s.nest.next
	}
	for {
		if err := ctx.Err(); err != nil {
			return m, err
		}
		err := next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if !errors.Is(err, warc.ErrBlockTooLarge) {
				return failed(err)
			}
			// Skip the rest of the member (checking it) and go on.
			m.records++
			m.err = cause(err)
			if _, err := io.Copy(io.Discard, &s.zr); err != nil {
				m.err, m.fatal = fmt.Errorf("%w; then: %w", m.err, err), true
			}
			break
		}
		m.records++
		s.stats.Records++
		if err := s.line(); err != nil {
			return m, err
		}
	}
	m.end = at()
	return m, nil
}

// nested reads a member whose content is gzip as warc.Reader does.
type nested struct {
	s  *scanner
	wr *warc.Reader
}

func (n *nested) open(s *scanner) error {
	wr, err := warc.NewReader(s.wbr)
	if err != nil {
		return err
	}
	wr.SetMaxBlockSize(s.opts.MaxRecordSize)
	n.s, n.wr = s, wr
	return nil
}

func (n *nested) next() error {
	rec, err := n.wr.Next()
	if err == nil {
		n.s.rec.fromWARC(rec)
	}
	return err
}

// line writes the line of the record read, if it is a page.
func (s *scanner) line() error {
	rec := &s.rec
	if rec.typ != "response" && rec.typ != "revisit" {
		return nil
	}
	if ct := rec.get("Content-Type"); len(ct) > 0 && !hasPrefixFold(ct, "application/http") {
		return nil // not an HTTP exchange (dns:, a resource of another tool)
	}
	p, robots := s.pageOf(rec)
	if robots {
		s.stats.Robots++
		return nil
	}
	s.stats.Pages++
	return s.enc.Encode(&p)
}
