package warc

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// memberEnds returns the offsets at which the gzip members of data end, found with
// the standard library alone (bytes.Reader is an io.ByteReader, so gzip does not
// read past a member).
func memberEnds(t *testing.T, data []byte) []int64 {
	t.Helper()
	br := bytes.NewReader(data)
	var ends []int64
	for br.Len() > 0 {
		zr, err := gzip.NewReader(br)
		if err != nil {
			t.Fatal(err)
		}
		zr.Multistream(false)
		if _, err := io.Copy(io.Discard, zr); err != nil {
			t.Fatal(err)
		}
		ends = append(ends, int64(len(data)-br.Len()))
	}
	return ends
}

// crashedFile writes exchanges and returns the bytes of the still-open file and its
// name, as a crash would leave them.
func crashedFile(t *testing.T, n int) (data []byte, name string) {
	t.Helper()
	w := newWriter(t, Options{Dir: t.TempDir()})
	for i := range n {
		if _, err := w.Write(testExchange(i)); err != nil {
			t.Fatal(err)
		}
	}
	path := w.Files()[0]
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return data, filepath.Base(path)
}

func TestRecoverCutMidRecord(t *testing.T) {
	const n = 4
	data, name := crashedFile(t, n)
	if !strings.HasSuffix(name, OpenSuffix) {
		t.Fatalf("%s is not an open file", name)
	}
	ends := memberEnds(t, data)
	if len(ends) != 1+2*n {
		t.Fatalf("%d gzip members, want %d", len(ends), 1+2*n)
	}
	want := readAllBytes(t, data)
	final := strings.TrimSuffix(name, OpenSuffix)

	// Cut the file inside the last exchange: at every offset near the start and end
	// of its two members (gzip header, deflate start, CRC and size trailer), and
	// every 11 bytes in between; and at a few offsets inside the warcinfo record.
	lastStart := ends[len(ends)-3]
	near := func(off int64) bool {
		for _, e := range ends[len(ends)-3:] {
			if off >= e-16 && off <= e+16 {
				return true
			}
		}
		return false
	}
	var offsets []int64
	for off := lastStart; off <= int64(len(data)); off++ {
		if near(off) || (off-lastStart)%11 == 0 {
			offsets = append(offsets, off)
		}
	}
	offsets = append(offsets, 0, 1, 10, ends[0]-1)
	for _, off := range offsets {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, name), data[:off], 0o644); err != nil {
			t.Fatal(err)
		}
		done, err := Recover(dir)
		if err != nil {
			t.Fatalf("cut at %d: %v", off, err)
		}
		if len(done) != 1 {
			t.Fatalf("cut at %d: Recover reported %q", off, done)
		}
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("cut at %d: .open file still there", off)
		}

		// The longest prefix of whole members.
		var wantLen int64
		wantRecs := 0
		for i, e := range ends {
			if e <= off {
				wantLen, wantRecs = e, i+1
			}
		}
		got, err := os.ReadFile(filepath.Join(dir, final))
		if wantRecs == 0 {
			if !os.IsNotExist(err) || !strings.HasPrefix(done[0], "removed") {
				t.Errorf("cut at %d: no complete record, but file kept (%q)", off, done)
			}
			continue
		}
		if err != nil {
			t.Fatalf("cut at %d: %v", off, err)
		}
		if int64(len(got)) != wantLen || !bytes.Equal(got, data[:wantLen]) {
			t.Errorf("cut at %d: recovered %d bytes, want the first %d", off, len(got), wantLen)
		}
		recs := readAllBytes(t, got)
		if len(recs) != wantRecs {
			t.Fatalf("cut at %d: %d records recovered, want %d", off, len(recs), wantRecs)
		}
		for i, rec := range recs {
			if rec.Header["WARC-Record-ID"] != want[i].Header["WARC-Record-ID"] || !bytes.Equal(rec.Block, want[i].Block) {
				t.Errorf("cut at %d: record %d differs", off, i)
			}
		}
	}
}

func TestRecoverDamagedTail(t *testing.T) {
	data, name := crashedFile(t, 3)
	ends := memberEnds(t, data)
	last := ends[len(ends)-2] // start of the last record

	corrupt := bytes.Clone(data)
	corrupt[last+(int64(len(data))-last)/2] ^= 0x55 // inside the deflate data or trailer
	tests := []struct {
		name    string
		data    []byte
		wantLen int64
	}{
		{"garbage appended", append(bytes.Clone(data), "\x1f\x8b garbage"...), int64(len(data))},
		{"zeros appended", append(bytes.Clone(data), make([]byte, 4096)...), int64(len(data))},
		{"last member corrupted", corrupt, last},
		{"whole", data, int64(len(data))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, name), tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			done, err := Recover(dir)
			if err != nil || len(done) != 1 {
				t.Fatalf("Recover: %q, %v", done, err)
			}
			got, err := os.ReadFile(filepath.Join(dir, strings.TrimSuffix(name, OpenSuffix)))
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(got)) != tt.wantLen {
				t.Errorf("recovered %d bytes, want %d (%s)", len(got), tt.wantLen, done[0])
			}
			readAllBytes(t, got)
		})
	}
}

func TestRecoverLeavesOthersAlone(t *testing.T) {
	data, name := crashedFile(t, 1)
	dir := t.TempDir()
	closed := filepath.Join(dir, "other-20250101000000-00001.warc.gz")
	if err := os.WriteFile(closed, []byte("not ours to touch"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	// A final name that already exists is not overwritten.
	clash := "clash-20250101000000-00002.warc.gz"
	for _, n := range []string{clash, clash + OpenSuffix} {
		if err := os.WriteFile(filepath.Join(dir, n), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	done, err := Recover(dir)
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("Recover error %v, want one about the existing file", err)
	}
	// One file closed out; the two closed files without an index get one (the
	// clashing one, and the one that holds no record: an empty index).
	renamed := 0
	for _, d := range done {
		if strings.HasPrefix(d, "renamed") {
			renamed++
		}
	}
	if len(done) != 3 || renamed != 1 {
		t.Errorf("Recover reported %q, want one recovered file and two indexed", done)
	}
	if b, _ := os.ReadFile(closed); string(b) != "not ours to touch" {
		t.Errorf("closed file changed")
	}
	if b, err := os.ReadFile(IndexPath(closed)); err != nil || len(b) != 0 {
		t.Errorf("index of a file without records: %q, %v; want an empty one", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, clash+OpenSuffix)); err != nil {
		t.Errorf("clashing .open file: %v", err)
	}
	if done, err := Recover(t.TempDir()); err != nil || len(done) != 0 {
		t.Errorf("Recover on an empty dir: %q, %v", done, err)
	}
	if _, err := Recover(filepath.Join(dir, "missing")); err == nil {
		t.Errorf("Recover on a missing dir succeeded")
	}
}

func readAllBytes(t *testing.T, data []byte) []*Record {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var recs []*Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return recs
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
}
