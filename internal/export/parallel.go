package export

// Reading a file with several workers (Options.Workers > 1).
//
// Where the gzip members of a file begin is written nowhere: a member ends
// where its deflate stream does, which only decompressing it tells. But
// every member begins with the gzip magic, 1f 8b 08, which elsewhere in
// compressed data is rare (once in 16 MiB). So a goroutine (split) cuts the
// file into batches of some hundred KiB, each beginning with the magic as
// far as it can; a worker reads a batch from its first byte as a run of
// members: it decompresses them, reads their records and makes the lines
// of their pages; and the goroutine that called File takes the batches in
// their order (take) and writes their lines.
//
// A worker's lines are taken when its batch begins where the last member
// taken ended. When it does not (the magic it begins with was inside a
// member, or a member went on past the end of the batch before it), or
// the worker could not tell (a member runs past the end of its batch:
// the error it met may be only that end), File reads from where the last
// member ended itself, from the file, as it does with one worker, up to
// the end of the batch. Either way the lines and the errors are those of
// reading the file from its start, member after member: the batches only
// decide who does the work. For files written by the crawler, a member a
// record and few larger than a batch, the workers do nearly all of it.

import (
	"bytes"
	"context"
	"io"
	"math"
	"os"
	"slices"
	"sync"
)

// The sizes of batches: a batch ends at the first gzip magic from
// batchSize bytes on, or after batchMax bytes when there is none. Tests
// make them small.
var (
	batchSize = 128 << 10
	batchMax  = 1 << 20
)

// readSize is how much split reads at a time.
const readSize = 64 << 10

var gzipMagic = []byte{0x1f, 0x8b, 0x08}

// batch is a part of a file, and what a worker made of it.
type batch struct {
	seq        int    // its place in the file: 0, 1, ...
	start, end int64  // the bytes of the file it holds
	data       []byte // those bytes
	final      bool   // the last batch: the file ends at end, or could not be read further
	eof        bool   // the file ends at end

	read    bool       // the worker read it, from start
	pos     int64      // where it stopped: the end of the last member it took whole
	lines   lineBuf    // the lines of the pages of those members
	stats   Stats      // their Records, Pages and Robots
	records int        // their records, read or failed (ReadError.Record)
	errs    []batchErr // their errors, in order
	fatal   bool       // the last of errs is damage: the file stops there
}

// batchErr is a ReadError without its file, numbered from the batch's
// first record.
type batchErr struct {
	offset int64
	record int
	err    error
}

// lineBuf collects lines.
type lineBuf []byte

func (b *lineBuf) Write(p []byte) (int, error) {
	*b = append(*b, p...)
	return len(p), nil
}

// parallel reads the file of fs with the workers, as readFile does alone.
func (e *Exporter) parallel(ctx context.Context, fs *fileState) error {
	n := e.opts.Workers
	if e.free == nil {
		e.free = make(chan *batch, 2*n)
		for range 2 * n {
			e.free <- new(batch)
		}
		for range n {
			e.workers = append(e.workers, newScanner(&e.opts))
		}
	}
	// All the batches fit in either channel: sending never waits.
	toRead := make(chan *batch, 2*n)
	read := make(chan *batch, 2*n)
	pctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { e.split(pctx, fs.f, toRead) })
	for _, s := range e.workers {
		wg.Go(func() {
			for {
				select {
				case b, ok := <-toRead:
					if !ok {
						return
					}
					s.batch(pctx, b)
					read <- b
				case <-pctx.Done():
					return
				}
			}
		})
	}

	// The batches read, by seq modulo its length: those in use have 2n
	// consecutive numbers from the next one to take.
	ring := make([]*batch, 2*n)
	defer func() {
		stop()
		wg.Wait()
		for _, b := range ring {
			if b != nil {
				e.free <- b
			}
		}
		for b := range toRead {
			e.free <- b
		}
		for len(read) > 0 {
			e.free <- <-read
		}
	}()
	for seq := 0; ; seq++ {
		i := seq % len(ring)
		for ring[i] == nil {
			select {
			case b := <-read:
				ring[b.seq%len(ring)] = b
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		b := ring[i]
		ring[i] = nil
		last, err := e.take(ctx, fs, b)
		if cap(b.lines) > maxKeep {
			b.lines = nil // the lines of a large page's text: not for every batch
		}
		e.free <- b
		if last || err != nil {
			return err
		}
	}
}

// take writes the lines of a batch: the worker's when it read the batch
// from where the last member ended, and reads the rest of the batch
// itself. last is true when the file has been read. err is the writer's,
// or ctx's.
func (e *Exporter) take(ctx context.Context, fs *fileState, b *batch) (last bool, err error) {
	if err := ctx.Err(); err != nil {
		return true, err
	}
	if b.read && b.start == fs.pos {
		if _, err := e.out.Write(b.lines); err != nil {
			return true, err
		}
		e.stats.Records += b.stats.Records
		e.stats.Pages += b.stats.Pages
		e.stats.Robots += b.stats.Robots
		for _, be := range b.errs {
			fs.errs = append(fs.errs, &ReadError{File: fs.path, Offset: be.offset, Record: fs.record + be.record, Err: be.err})
		}
		fs.record += b.records
		fs.pos = b.pos
		if b.fatal {
			return true, nil
		}
	}
	if fs.pos < b.end || b.final {
		limit := b.end
		if b.final {
			limit = math.MaxInt64 // to the end of the file, or the error that stopped split
		}
		if done, err := e.readFile(ctx, fs, limit); done || err != nil {
			return true, err
		}
	}
	return b.final, nil
}

// batch reads the members of b from its start, as far as it holds them
// whole. A batch that does not begin with the gzip magic is left to take.
func (s *scanner) batch(ctx context.Context, b *batch) {
	b.read, b.pos, b.lines, b.stats, b.records, b.errs, b.fatal = false, b.start, b.lines[:0], Stats{}, 0, b.errs[:0], false
	if !bytes.HasPrefix(b.data, gzipMagic) {
		return
	}
	s.src.Reset(b.data)
	s.base = b.start
	s.into(&b.lines, &b.stats)
	for b.pos < b.end {
		mark, stats, records := len(b.lines), b.stats, b.records
		m, err := s.member(ctx, &s.src, s.atBatch, b.pos)
		if err != nil {
			return // ctx is done: no one takes the batch
		}
		if m.eof {
			break // not before the end of the batch, but to be sure
		}
		if m.err != nil && s.src.Len() == 0 && !b.eof {
			// The member may go on past the batch, and what failed be
			// only the end of the batch: take reads it from the file.
			b.lines, b.stats, b.records = b.lines[:mark], stats, records
			break
		}
		if m.err != nil {
			b.errs = append(b.errs, batchErr{offset: b.pos, record: b.records + m.records, err: m.err})
		}
		b.records += m.records
		b.pos = m.end
		if m.fatal {
			b.fatal = true
			break
		}
	}
	b.read = true
}

// atBatch is how far a worker has read the file: its batch's start plus
// what it has read of the batch.
func (s *scanner) atBatch() int64 {
	return s.base + s.src.Size() - int64(s.src.Len())
}

// split reads the file f from its start and cuts it into batches, which it
// sends to out in order, the last with final set.
func (e *Exporter) split(ctx context.Context, f *os.File, out chan<- *batch) {
	defer close(out)
	carry := e.carry[:0] // read past the end of the last batch
	defer func() { e.carry = carry }()
	var off int64
	var rerr error // of reading f: io.EOF at its end
	for seq := 0; ; seq++ {
		var b *batch
		select {
		case b = <-e.free:
		case <-ctx.Done():
			return
		}
		data := append(b.data[:0], carry...)
		carry = carry[:0]
		cut, from := -1, batchSize // the magic is looked for from data[from:] on
		for {
			if len(data) >= from+len(gzipMagic) {
				if i := bytes.Index(data[from:], gzipMagic); i >= 0 {
					cut = from + i
					break
				}
				from = len(data) - len(gzipMagic) + 1
			}
			if len(data) >= batchMax {
				cut = len(data)
				break
			}
			if rerr != nil {
				break
			}
			data = slices.Grow(data, readSize)
			n, err := f.Read(data[len(data) : len(data)+readSize])
			data = data[:len(data)+n]
			if err != nil {
				rerr = err
			}
		}
		if cut >= 0 {
			carry = append(carry, data[cut:]...)
			data = data[:cut]
		}
		b.seq, b.data, b.start, b.end = seq, data, off, off+int64(len(data))
		b.final = cut < 0
		b.eof = b.final && rerr == io.EOF
		out <- b
		if b.final {
			return
		}
		off = b.end
	}
}
