package warc

import (
	"errors"
	"io"
	"testing"

	"github.com/nlnwa/gowarc/v3"
)

// TestIndependentReader reads our files with gowarc, an independent implementation,
// in strict mode, and has it validate the block and payload digests.
func TestIndependentReader(t *testing.T) {
	dir := t.TempDir()
	w := newWriter(t, Options{Dir: dir, MaxFileSize: 2000, Info: map[string]string{"robots": "obey"}})
	var want []string // record types, per file, in order
	for i := range 8 {
		ex := testExchange(i)
		switch i {
		case 3:
			ex.Truncated = "length"
			ex.Response = ex.Response[:len(ex.Response)-4]
		case 5:
			ex.Revisit = true
			ex.Response = []byte("HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n")
			ex.RefersToTargetURI = ex.TargetURI
			ex.RefersToDate = testTime
			ex.RefersToPayloadDigest = "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"
		case 6:
			ex.IP = "2001:db8::1"
		}
		if _, err := w.Write(ex); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(w.Files()) < 2 {
		t.Fatalf("want several files, got %q", w.Files())
	}

	total := 0
	for _, path := range w.Files() {
		ours := readFile(t, path)
		for _, rec := range ours {
			want = append(want, rec.Type)
		}
		r, err := gowarc.NewWarcFileReader(path, 0, gowarc.WithStrictValidation())
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; ; i++ {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				if i != len(ours) {
					t.Errorf("%s: gowarc read %d records, ours %d", path, i, len(ours))
				}
				break
			}
			if err != nil {
				t.Fatalf("%s record %d: gowarc: %v", path, i, err)
			}
			wr := rec.WarcRecord
			if len(rec.Validation) > 0 {
				t.Errorf("%s record %d: gowarc validation: %v", path, i, rec.Validation)
			}
			if v, err := wr.ValidateDigest(); err != nil || len(v) > 0 {
				t.Errorf("%s record %d (%s): gowarc digest validation: %v %v", path, i, wr.Type(), v, err)
			}
			if i < len(ours) {
				if got := wr.Type().String(); got != ours[i].Type {
					t.Errorf("%s record %d: gowarc type %s, ours %s", path, i, got, ours[i].Type)
				}
				if got := wr.RecordId(); "<"+got+">" != ours[i].Header["WARC-Record-ID"] && got != ours[i].Header["WARC-Record-ID"] {
					t.Errorf("%s record %d: gowarc id %s, ours %s", path, i, got, ours[i].Header["WARC-Record-ID"])
				}
				if wr.Version().String() != "WARC/1.1" {
					t.Errorf("%s record %d: version %s", path, i, wr.Version())
				}
			}
			rec.Close()
			total++
		}
		r.Close()
	}
	if total != len(want) {
		t.Errorf("gowarc read %d records in all, want %d", total, len(want))
	}
}
