package warc_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gentlecrawl/gentlecrawl/internal/warccheck"
	"github.com/gentlecrawl/gentlecrawl/warc"
)

// warcSeedEnv, when set, runs TestPowerLossTornTail with that one seed.
const warcSeedEnv = "GENTLECRAWL_WARC_POWER_SEED"

// TestPowerLossTornTail writes exchanges with the Writer, syncing now and
// then, rotating files, and stops it as a power cut does: the files it
// closed are whole (synced before their rename), and of the open one the
// disk holds what was synced and, after it, any part of what was written:
// cut at any byte, blocks of it never written (zeros), garbage, or the
// file grown with zeros past what was written. For each of those states
// the job is resumed as the crawler resumes one — Recover, then a new
// Writer — and:
//
//   - every record written before the last sync reads back whole: the file
//     recovered is exactly the longest run of whole gzip members the torn
//     file begins with (nothing damaged kept, nothing whole dropped), and
//     never shorter than what was synced;
//   - the files are closed out and indexed, and a file whose rename or
//     index the cut lost (the rotation's directory sync not yet done) is
//     closed out and indexed whole;
//   - the new Writer goes on in a new file, numbered after the others, and
//     every file reads back with three readers (internal/warccheck: ours,
//     gowarc and npm's warcio) and matches its index.
//
// Each seed gives the records, the syncs, the rotations and the cuts
// another shape.
func TestPowerLossTornTail(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4, 5, 6, uint64(time.Now().UnixNano()%100000) + 100}
	if v := os.Getenv(warcSeedEnv); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", warcSeedEnv, v, err)
		}
		seeds = []uint64{n}
	}
	root := t.TempDir()
	for _, seed := range seeds {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			t.Logf("%s=%d repeats this run's shape", warcSeedEnv, seed)
			dir := filepath.Join(root, strconv.FormatUint(seed, 10))
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			runWARCPowerLoss(t, seed, dir)
		})
	}
	if !t.Failed() {
		// Every file of every state of every seed, with ours, gowarc and
		// warcio.js (one node process), and its index.
		warccheck.Job(t, root)
	}
}

var powerClock = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// powerExchange is the i-th exchange: a page of text (which compresses), or
// of random bytes (which does not, and spans disk blocks).
func powerExchange(rng *rand.Rand, i int) *warc.Exchange {
	var body []byte
	if rng.IntN(3) == 0 {
		body = make([]byte, rng.IntN(12000))
		for j := range body {
			body[j] = byte(rng.Uint32())
		}
	} else {
		body = []byte(strings.Repeat(fmt.Sprintf("<p>page %d, line %d</p>\n", i, rng.IntN(1000)), 1+rng.IntN(300)))
	}
	uri := fmt.Sprintf("https://example.org/p/%d", i)
	return &warc.Exchange{
		TargetURI: uri,
		Date:      powerClock.Add(time.Duration(i) * time.Second),
		Request:   []byte("GET /p/" + strconv.Itoa(i) + " HTTP/1.1\r\nHost: example.org\r\n\r\n"),
		Response: append([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: "+
			strconv.Itoa(len(body))+"\r\n\r\n"), body...),
	}
}

// powerFile is a file as the writer left it when the power went.
type powerFile struct {
	name   string // in the directory: NAME.warc.gz, or NAME.warc.gz.open
	data   []byte // what was written
	synced int    // bytes synced (all of a closed file)
	closed bool
}

// runWARCPowerLoss writes the files of one seed, and recovers each state
// of the disk it draws in a directory of its own under root.
func runWARCPowerLoss(t *testing.T, seed uint64, root string) {
	rng := rand.New(rand.NewPCG(seed, 29))
	src := t.TempDir()
	maxSize := []int64{16000, 40000, 100000, warc.DefaultMaxFileSize}[rng.IntN(4)]
	w, err := warc.Create(warc.Options{Dir: src, MaxFileSize: maxSize, Now: func() time.Time { return powerClock }})
	if err != nil {
		t.Fatal(err)
	}
	n, syncP := 3+rng.IntN(25), float64(rng.IntN(60))/100
	synced := map[string]int{} // open file → bytes synced
	for i := range n {
		if _, err := w.Write(powerExchange(rng, i)); err != nil {
			t.Fatal(err)
		}
		if rng.Float64() < syncP {
			if err := w.Sync(); err != nil {
				t.Fatal(err)
			}
			if files := w.Files(); strings.HasSuffix(files[len(files)-1], warc.OpenSuffix) {
				st, err := os.Stat(files[len(files)-1])
				if err != nil {
					t.Fatal(err)
				}
				synced[files[len(files)-1]] = int(st.Size())
			}
		}
	}
	for i := n; ; i++ {
		// A file open when the power goes (the last write may have filled
		// one, and closed it).
		if files := w.Files(); strings.HasSuffix(files[len(files)-1], warc.OpenSuffix) {
			break
		}
		if _, err := w.Write(powerExchange(rng, i)); err != nil {
			t.Fatal(err)
		}
	}
	// The power goes: what the writer wrote is read before Close, which
	// would sync and rename.
	var files []powerFile
	for _, path := range w.Files() {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f := powerFile{name: filepath.Base(path), data: data, synced: synced[path]}
		if f.closed = !strings.HasSuffix(path, warc.OpenSuffix); f.closed {
			f.synced = len(data)
		}
		files = append(files, f)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	indexes := map[string][]byte{}
	for _, f := range files {
		if f.closed {
			b, err := os.ReadFile(warc.IndexPath(filepath.Join(src, f.name)))
			if err != nil {
				t.Fatal(err)
			}
			indexes[f.name] = b
		}
	}
	open := &files[len(files)-1]
	t.Logf("%d exchanges, %d files of at most %d bytes; the open one: %s", n, len(files), maxSize, describeOpen(open))

	// The states the disk can be in; each is recovered in a directory of
	// its own, and all are read back at the end.
	states := 6 + rng.IntN(6)
	for k := range states {
		dir := filepath.Join(root, strconv.Itoa(k))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		lostRename := len(files) > 1 && rng.IntN(3) == 0
		for i, f := range files {
			switch {
			case !f.closed:
				continue
			case lostRename && i == len(files)-2:
				// The last rotation's directory sync did not happen: the
				// file is whole (synced before its rename) under its open
				// name, and its index is a temporary file, half written.
				if err := os.WriteFile(filepath.Join(dir, f.name+warc.OpenSuffix), f.data, 0o644); err != nil {
					t.Fatal(err)
				}
				tmp := "." + filepath.Base(warc.IndexPath(f.name)) + ".tmp-123"
				half := indexes[f.name][:len(indexes[f.name])/2]
				if err := os.WriteFile(filepath.Join(dir, tmp), half, 0o644); err != nil {
					t.Fatal(err)
				}
			default:
				if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(warc.IndexPath(filepath.Join(dir, f.name)), indexes[f.name], 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		torn, how := tear(rng, open.data, open.synced)
		if torn != nil {
			if err := os.WriteFile(filepath.Join(dir, open.name), torn, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		what := fmt.Sprintf("state %d (%s; last rename lost %v)", k+1, how, lostRename)
		checkRecovered(t, dir, files, open, torn, what)
		if t.Failed() {
			return
		}
		// The crawl goes on, in a new file, numbered after those there.
		// (A file Recover removed, without a whole record, may see its
		// number again.)
		last := -1
		there, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
		for _, p := range there {
			last = max(last, serial(t, filepath.Base(p)))
		}
		w, err := warc.Create(warc.Options{Dir: dir, MaxFileSize: maxSize, Now: func() time.Time { return powerClock }})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 1 + rng.IntN(3) {
			if _, err := w.Write(powerExchange(rng, 1000+i)); err != nil {
				t.Fatalf("%s: writing after the recovery: %v", what, err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		for _, p := range w.Files() {
			if s := serial(t, filepath.Base(p)); s <= last {
				t.Errorf("%s: the resumed writer wrote %s, numbered %d; the files there go up to %d", what, filepath.Base(p), s, last)
			}
		}
	}
}

func describeOpen(f *powerFile) string {
	return fmt.Sprintf("%d bytes written, %d synced", len(f.data), f.synced)
}

// tear returns what the disk may hold of a file of which synced bytes of
// data were synced when the power went, and how it was torn; nil for a
// file whose name never reached the disk.
func tear(rng *rand.Rand, data []byte, synced int) ([]byte, string) {
	ends := memberEnds(data)
	cut := synced + rng.IntN(len(data)-synced+1)
	if rng.IntN(3) == 0 && len(ends) > 0 {
		// Near the end of a member: in its trailer, or just past it.
		e := ends[rng.IntN(len(ends))] + rng.IntN(17) - 8
		cut = min(max(e, synced), len(data))
	}
	out := slices.Clone(data[:cut])
	const block = 4096
	switch rng.IntN(5) {
	case 0:
		if synced == 0 && rng.IntN(2) == 0 {
			return nil, "never synced, not there"
		}
		return out, fmt.Sprintf("cut at %d", cut)
	case 1:
		// Blocks past the synced ones never written: zeros.
		holes := 0
		for b := synced / block * block; b < cut; b += block {
			if rng.IntN(3) == 0 {
				clear(out[max(b, synced):min(b+block, cut)])
				holes++
			}
		}
		return out, fmt.Sprintf("cut at %d, %d blocks of zeros", cut, holes)
	case 2:
		// The size reached the disk, the data did not.
		return append(out, make([]byte, 1+rng.IntN(2*block))...), fmt.Sprintf("cut at %d, then zeros", cut)
	case 3:
		// Garbage in the unsynced part.
		if cut > synced {
			at := synced + rng.IntN(cut-synced)
			for i := at; i < min(cut, at+1+rng.IntN(64)); i++ {
				out[i] = byte(rng.Uint32())
			}
			return out, fmt.Sprintf("cut at %d, garbage from %d", cut, at)
		}
		return out, fmt.Sprintf("cut at %d", cut)
	default:
		// One byte changed past the synced part, anywhere.
		if cut > synced {
			at := synced + rng.IntN(cut-synced)
			out[at] ^= byte(1 + rng.IntN(255))
			return out, fmt.Sprintf("cut at %d, byte %d changed", cut, at)
		}
		return out, fmt.Sprintf("cut at %d", cut)
	}
}

// memberEnds returns where the gzip members of data end, found with the
// standard library alone; it stops at the first member that is not whole.
func memberEnds(data []byte) []int {
	br := bytes.NewReader(data)
	var ends []int
	for br.Len() > 0 {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return ends
		}
		zr.Multistream(false)
		if _, err := io.Copy(io.Discard, zr); err != nil {
			return ends
		}
		ends = append(ends, len(data)-br.Len())
	}
	return ends
}

// sameMember reports whether a is one whole gzip member that holds what
// the member b holds.
func sameMember(a, b []byte) bool {
	inflate := func(p []byte) ([]byte, bool) {
		br := bytes.NewReader(p)
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, false
		}
		zr.Multistream(false)
		out, err := io.ReadAll(zr)
		return out, err == nil && br.Len() == 0
	}
	x, okA := inflate(a)
	y, okB := inflate(b)
	return okA && okB && bytes.Equal(x, y)
}

// checkRecovered runs Recover in dir and checks what it made of each file.
func checkRecovered(t *testing.T, dir string, files []powerFile, open *powerFile, torn []byte, what string) {
	t.Helper()
	done, err := warc.Recover(dir)
	if err != nil {
		t.Fatalf("%s: Recover: %v (%q)", what, err, done)
	}
	for _, f := range files {
		name := strings.TrimSuffix(f.name, warc.OpenSuffix)
		path := filepath.Join(dir, name)
		if _, err := os.Stat(path + warc.OpenSuffix); err == nil {
			t.Errorf("%s: %s is still open after Recover", what, name)
		}
		want := f.data
		if !f.closed {
			// The longest run of whole members that the torn file starts
			// with: the members written, each of them read back as it was
			// written (a change the gzip header's time, flags and system
			// bytes leaves it whole, as no checksum covers them).
			good, start := 0, 0
			for _, e := range memberEnds(f.data) {
				if e > len(torn) || !sameMember(torn[start:e], f.data[start:e]) {
					break
				}
				good, start = e, e
			}
			if good < f.synced {
				t.Fatalf("%s: test bug: %d bytes synced, %d whole", what, f.synced, good)
			}
			want = torn[:good]
			if good == 0 {
				if _, err := os.Stat(path); !os.IsNotExist(err) {
					t.Errorf("%s: %s, without one whole record, kept: %v (%q)", what, name, err, done)
				}
				continue
			}
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v (%q)", what, err, done)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: %s recovered as %d bytes, want its first %d (%d synced) (%q)", what, name, len(got), len(want), f.synced, done)
			continue
		}
		// Every record whole, as written: read with our reader, each one
		// against the record at its place in what was written.
		recs := readAll(t, got, what+": "+name)
		all := readAll(t, f.data, what+": "+name+" as written")
		if len(recs) > len(all) {
			t.Fatalf("%s: %s: %d records recovered of %d written", what, name, len(recs), len(all))
		}
		for i, rec := range recs {
			if rec.Header["WARC-Record-ID"] != all[i].Header["WARC-Record-ID"] || !bytes.Equal(rec.Block, all[i].Block) {
				t.Errorf("%s: %s: record %d differs from what was written", what, name, i+1)
			}
		}
		if f.closed || f.synced > 0 {
			syncedRecs := readAll(t, f.data[:f.synced], what+": "+name+" as synced")
			if len(recs) < len(syncedRecs) {
				t.Errorf("%s: %s: %d records recovered, %d were synced", what, name, len(recs), len(syncedRecs))
			}
		}
		if _, err := os.Stat(warc.IndexPath(path)); err != nil {
			t.Errorf("%s: %s has no index after Recover: %v", what, name, err)
		}
	}
	if open.synced > 0 && torn == nil {
		t.Fatalf("%s: test bug: a synced file left out", what)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(leftovers) > 0 {
		t.Errorf("%s: left after Recover: %v", what, leftovers)
	}
}

func readAll(t *testing.T, data []byte, what string) []*warc.Record {
	t.Helper()
	r, err := warc.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	var recs []*warc.Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return recs
		}
		if err != nil {
			t.Fatalf("%s: record %d: %v", what, len(recs)+1, err)
		}
		recs = append(recs, rec)
	}
}

// serial returns the serial number in a WARC file's name.
func serial(t *testing.T, name string) int {
	t.Helper()
	name = strings.TrimSuffix(strings.TrimSuffix(name, warc.OpenSuffix), ".warc.gz")
	n, err := strconv.Atoi(name[strings.LastIndexByte(name, '-')+1:])
	if err != nil {
		t.Fatalf("no serial in %s", name)
	}
	return n
}
