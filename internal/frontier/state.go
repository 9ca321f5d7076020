package frontier

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// The in-memory state that opening a store otherwise rebuilds by reading
// every queue entry and every seen-set key — the hosts' queue counts and
// head due times, the sequence number, the seen filter — is written at
// Close to a file beside Pebble's, so that opening a large job takes the
// time of reading one file instead of a scan of the whole store.
//
// The file is a copy of what the store holds, never the only record of
// anything: a copy that is missing, torn or stale is ignored and the state
// rebuilt by the scan. Which copy is current is said by the store itself:
// Close writes the file (to a temporary name, synced, renamed, the
// directory synced), then a meta key naming the file's random token,
// synced. Opening reads the token and deletes it before the store can
// change: a job killed after a change has no token, and the next open
// scans. A cut anywhere in Close leaves either no token, or the token of a
// file that is whole on disk.
const (
	stateFile    = "GENTLECRAWL-STATE"
	stateTmpFile = "GENTLECRAWL-STATE.tmp"
	stateMagic   = "gcstate1"
	stateMetaKey = "state"
)

// stateLimit bounds what a state file may claim, so that a torn or foreign
// file cannot make the reader allocate without bound.
const (
	stateMaxHosts  = 1 << 32
	stateMaxHost   = 1 << 16 // bytes of a host name
	stateMaxLayers = 64
	stateMaxWords  = 1 << 36 // 64-bit words of one filter layer (512 GiB)
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// saveState writes the in-memory state and marks it current. It runs in
// Close, once every change has been applied and synced, with nothing else
// using the store.
func (s *Store) saveState(fs vfs.FS, dir string) error {
	var token [16]byte
	rand.Read(token[:])
	tmp, final := fs.PathJoin(dir, stateTmpFile), fs.PathJoin(dir, stateFile)
	f, err := fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	s.mu.Lock()
	err = s.writeState(w, token)
	s.mu.Unlock()
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fs.Remove(tmp)
		return err
	}
	s.closeStep("state written")
	if err := fs.Rename(tmp, final); err != nil {
		return err
	}
	d, err := fs.OpenDir(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	s.closeStep("state renamed")
	if err := s.db.Set(metaKey(stateMetaKey), token[:], pebble.Sync); err != nil {
		return err
	}
	s.closeStep("state marked")
	return nil
}

// closeStep runs the test hook between Close's steps.
func (s *Store) closeStep(step string) {
	if s.afterCloseStep != nil {
		s.afterCloseStep(step)
	}
}

// stateWriter writes the state file's fields and keeps its checksum.
type stateWriter struct {
	w   io.Writer
	crc hash.Hash32
	buf []byte
	err error
}

func (sw *stateWriter) flush() {
	if sw.err == nil && len(sw.buf) > 0 {
		sw.crc.Write(sw.buf)
		_, sw.err = sw.w.Write(sw.buf)
	}
	sw.buf = sw.buf[:0]
}

func (sw *stateWriter) uvarint(x uint64) {
	sw.buf = binary.AppendUvarint(sw.buf, x)
	if len(sw.buf) > 32<<10 {
		sw.flush()
	}
}

func (sw *stateWriter) bytes(b []byte) {
	sw.uvarint(uint64(len(b)))
	sw.buf = append(sw.buf, b...)
}

// writeState writes, in order: the magic, the token, the sequence number,
// the crawl's queued count, each host (name, next allowed time, queue
// count, queued and refused counts, head due time and whether it is
// known), the seen filter (its last layer's count and capacity, then each
// layer's words), and a CRC-32C of all that.
func (s *Store) writeState(w io.Writer, token [16]byte) error {
	sw := &stateWriter{w: w, crc: crc32.New(crcTable), buf: make([]byte, 0, 64<<10)}
	sw.buf = append(sw.buf, stateMagic...)
	sw.buf = append(sw.buf, token[:]...)
	sw.uvarint(s.mu.seq)
	sw.uvarint(uint64(s.mu.queued))
	sw.uvarint(uint64(len(s.mu.hosts)))
	for name, st := range s.mu.hosts {
		sw.bytes([]byte(name))
		sw.uvarint(timeNanos(st.durableNext))
		sw.uvarint(uint64(st.pending))
		sw.uvarint(uint64(st.queued))
		sw.uvarint(uint64(st.overBudget))
		// A leased host's due time is its queue's head's only while no
		// entry came in under the lease; the reader looks it up.
		known := st.lease == nil && st.pending > 0
		var due uint64
		if known {
			due = timeNanos(st.due)
		}
		sw.uvarint(due)
		sw.uvarint(b2u(known))
	}
	f := s.mu.seen
	sw.uvarint(uint64(f.n))
	sw.uvarint(uint64(f.cap))
	sw.uvarint(uint64(len(f.layers)))
	for _, l := range f.layers {
		sw.uvarint(l.blocks)
		for _, word := range l.words {
			sw.buf = binary.LittleEndian.AppendUint64(sw.buf, word)
			if len(sw.buf) >= 64<<10 {
				sw.flush()
			}
		}
	}
	sw.flush()
	if sw.err != nil {
		return sw.err
	}
	_, err := w.Write(binary.BigEndian.AppendUint32(nil, sw.crc.Sum32()))
	return err
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// loadState restores the in-memory state from the current state file, if
// there is one, and marks that no file is current any more (whether or not
// it was found whole). It returns false when the state must be rebuilt by a
// scan, with the reason a file was refused in refused; err is a failure of
// the store itself.
func (s *Store) loadState(fs vfs.FS, dir string) (restored bool, refused, err error) {
	token, ok, err := s.get(metaKey(stateMetaKey))
	if err != nil {
		return false, nil, err
	}
	path := fs.PathJoin(dir, stateFile)
	if !ok {
		fs.Remove(path) // a stale copy, if any
		return false, nil, nil
	}
	// From here on the store may change: no file is current. The delete
	// need not wait for the disk: Pebble's log is replayed as a prefix, so
	// it is durable before any change after it is, and while none is, the
	// file is still the store's state.
	if err := s.db.Delete(metaKey(stateMetaKey), pebble.NoSync); err != nil {
		return false, nil, fmt.Errorf("frontier: write: %w", err)
	}
	defer fs.Remove(path)
	f, err := fs.Open(path)
	if err != nil {
		return false, err, nil
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return false, err, nil
	}
	if err := s.readState(f, token, info.Size()); err != nil {
		// What readState set up is dropped with it: the scan starts afresh.
		if errors.Is(err, errStoreRead) {
			return false, nil, err
		}
		return false, err, nil
	}
	return true, nil, nil
}

// errStoreRead marks a failure to read the store (not the state file)
// while restoring the state.
var errStoreRead = errors.New("frontier: read")

// stateReader reads the fields writeState wrote and checks them as it goes.
type stateReader struct {
	r   *bufio.Reader
	err error
}

func (sr *stateReader) uvarint(limit uint64) uint64 {
	if sr.err != nil {
		return 0
	}
	x, err := binary.ReadUvarint(sr.r)
	if err == nil && x > limit {
		err = fmt.Errorf("a field of %d, over %d", x, limit)
	}
	sr.err = err
	return x
}

func (sr *stateReader) full(b []byte) {
	if sr.err == nil {
		_, sr.err = io.ReadFull(sr.r, b)
	}
}

// readState reads a state file of size bytes whose token must be token.
// The checksum covers all but its own last 4 bytes.
func (s *Store) readState(file io.Reader, token []byte, size int64) error {
	if size < 4 {
		return errors.New("frontier: state file: shorter than its checksum")
	}
	crc := crc32.New(crcTable)
	r := bufio.NewReaderSize(io.TeeReader(io.LimitReader(file, size-4), crc), 1<<20)
	sr := &stateReader{r: r}
	head := make([]byte, len(stateMagic)+16)
	sr.full(head)
	if sr.err != nil {
		return fmt.Errorf("frontier: state file: %w", sr.err)
	}
	if string(head[:len(stateMagic)]) != stateMagic || !bytes.Equal(head[len(stateMagic):], token) {
		return errors.New("frontier: state file: not the one the store names")
	}
	seq := sr.uvarint(1<<64 - 1)
	queued := sr.uvarint(1 << 62)
	// Every host takes at least 7 bytes, and every block 64.
	n := sr.uvarint(min(stateMaxHosts, uint64(size)/7))
	hosts := make(map[string]*hostState, min(n, 1<<20))
	var unknown []*hostState
	name := make([]byte, 0, 256)
	for range n {
		l := sr.uvarint(stateMaxHost)
		if sr.err != nil {
			break
		}
		name = name[:l]
		sr.full(name)
		st := &hostState{name: string(name), index: -1}
		st.next = nanosTime(sr.uvarint(1<<64 - 1))
		st.durableNext = st.next
		st.pending = int(sr.uvarint(1 << 40))
		st.queued = int(sr.uvarint(1 << 40))
		st.overBudget = int(sr.uvarint(1 << 40))
		st.due = nanosTime(sr.uvarint(1<<64 - 1))
		if known := sr.uvarint(1); known == 0 && st.pending > 0 {
			unknown = append(unknown, st)
		}
		if hosts[st.name] != nil {
			sr.err = fmt.Errorf("host %q twice", st.name)
		}
		hosts[st.name] = st
	}
	f := &seenFilter{n: int(sr.uvarint(1 << 62)), cap: int(sr.uvarint(1 << 62))}
	layers := sr.uvarint(stateMaxLayers)
	for range layers {
		blocks := sr.uvarint(min(stateMaxWords/8, uint64(size)/64))
		if sr.err != nil {
			break
		}
		l := bloomLayer{words: make([]uint64, blocks*8), blocks: blocks}
		buf := make([]byte, 64<<10)
		for i := 0; i < len(l.words) && sr.err == nil; {
			chunk := buf[:min(len(buf), 8*(len(l.words)-i))]
			sr.full(chunk)
			for j := 0; j+8 <= len(chunk); j += 8 {
				l.words[i] = binary.LittleEndian.Uint64(chunk[j:])
				i++
			}
		}
		f.layers = append(f.layers, l)
	}
	if sr.err == nil && (len(f.layers) == 0 || f.n > f.cap) {
		sr.err = errors.New("no seen filter")
	}
	if sr.err != nil {
		return fmt.Errorf("frontier: state file: %w", sr.err)
	}
	if _, err := r.ReadByte(); err != io.EOF {
		return errors.New("frontier: state file: bytes after its end")
	}
	var tail [4]byte
	if _, err := io.ReadFull(file, tail[:]); err != nil || binary.BigEndian.Uint32(tail[:]) != crc.Sum32() {
		return errors.New("frontier: state file: checksum does not match")
	}
	for _, st := range unknown {
		due, err := s.headDue(st.name)
		if err != nil {
			return fmt.Errorf("%w: %w", errStoreRead, err)
		}
		st.due = due
	}
	s.mu.seq, s.mu.queued, s.mu.hosts, s.mu.seen = seq, int(queued), hosts, f
	return nil
}
