package warc

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"
)

func plainRecord(header, block string) string {
	return "WARC/1.1\r\n" + header + "\r\n" + block + "\r\n\r\n"
}

func TestReaderPlain(t *testing.T) {
	in := plainRecord("WARC-Type: resource\r\nWARC-Record-ID: <urn:uuid:1>\r\nContent-Length: 5\r\n", "hello") +
		"\r\n" + // an extra empty line between records is tolerated
		"WARC/1.0\nWARC-Type: metadata\nX-Folded: a\n  b\nX-Folded: second\nwarc-record-id: <urn:uuid:2>\nContent-Length: 0\n\n\r\n\r\n"
	r, err := NewReader(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if rec.Type != "resource" || string(rec.Block) != "hello" || rec.Header["WARC-Record-ID"] != "<urn:uuid:1>" {
		t.Errorf("first record %+v", rec)
	}
	rec, err = r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if rec.Type != "metadata" || len(rec.Block) != 0 || rec.Header["X-Folded"] != "a b" ||
		rec.Get("WARC-Record-ID") != "<urn:uuid:2>" || rec.Header["warc-record-id"] != "<urn:uuid:2>" {
		t.Errorf("second record %+v", rec)
	}
	for range 2 {
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("Next at end: %v, want io.EOF", err)
		}
	}
}

func TestReaderEmpty(t *testing.T) {
	for _, in := range []string{"", "\r\n\r\n"} {
		r, err := NewReader(strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Next(); err != io.EOF {
			t.Errorf("Next on %q: %v, want io.EOF", in, err)
		}
	}
}

func TestReaderMalformed(t *testing.T) {
	ok := "WARC-Type: resource\r\nContent-Length: 5\r\n"
	tests := []struct {
		name, in string
	}{
		{"not WARC", "HTTP/1.1 200 OK\r\n\r\n"},
		{"unknown version", "WARC/9.9\r\n" + ok + "\r\nhello\r\n\r\n"},
		{"no type", plainRecord("Content-Length: 5\r\n", "hello")},
		{"no length", plainRecord("WARC-Type: resource\r\n", "hello")},
		{"negative length", plainRecord("WARC-Type: resource\r\nContent-Length: -1\r\n", "")},
		{"length not a number", plainRecord("WARC-Type: resource\r\nContent-Length: 5x\r\n", "hello")},
		{"field without colon", plainRecord("WARC-Type resource\r\nContent-Length: 5\r\n", "hello")},
		{"space in field name", plainRecord("WARC Type: resource\r\nContent-Length: 5\r\n", "hello")},
		{"continuation first", plainRecord(" folded\r\n"+ok, "hello")},
		{"header cut", "WARC/1.1\r\nWARC-Type: resource\r\nContent-Le"},
		{"header without end", "WARC/1.1\r\nWARC-Type: resource\r\n"},
		{"block short", "WARC/1.1\r\n" + ok + "\r\nhel"},
		{"no record end", "WARC/1.1\r\n" + ok + "\r\nhello"},
		{"wrong record end", "WARC/1.1\r\n" + ok + "\r\nhelloXXXX"},
		{"length too small", plainRecord("WARC-Type: resource\r\nContent-Length: 4\r\n", "hello")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewReader(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.Next()
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("Next: %v, want ErrMalformed", err)
			}
			if !strings.Contains(err.Error(), "record 1") {
				t.Errorf("error %q does not say which record", err)
			}
			if _, err2 := r.Next(); err2 != err {
				t.Errorf("second Next: %v, want the same error", err2)
			}
		})
	}
}

func TestReaderLimits(t *testing.T) {
	t.Run("header too large", func(t *testing.T) {
		long := "X-Long: " + strings.Repeat("a", MaxHeaderSize) + "\r\n"
		in := plainRecord("WARC-Type: resource\r\n"+long+"Content-Length: 0\r\n", "")
		r, _ := NewReader(strings.NewReader(in))
		if _, err := r.Next(); !errors.Is(err, ErrHeaderTooLarge) {
			t.Errorf("Next: %v, want ErrHeaderTooLarge", err)
		}
	})
	t.Run("many fields", func(t *testing.T) {
		many := strings.Repeat("X-F: 0123456789\r\n", MaxHeaderSize/16)
		in := plainRecord("WARC-Type: resource\r\n"+many+"Content-Length: 0\r\n", "")
		r, _ := NewReader(strings.NewReader(in))
		if _, err := r.Next(); !errors.Is(err, ErrHeaderTooLarge) {
			t.Errorf("Next: %v, want ErrHeaderTooLarge", err)
		}
	})
	t.Run("header just under the limit", func(t *testing.T) {
		head := "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 0\r\n"
		pad := "X-Pad: " + strings.Repeat("a", MaxHeaderSize-len(head)-len("X-Pad: \r\n")-2) + "\r\n"
		in := head + pad + "\r\n\r\n\r\n"
		if len(in)-4 != MaxHeaderSize {
			t.Fatalf("header is %d bytes", len(in)-4)
		}
		r, _ := NewReader(strings.NewReader(in))
		if _, err := r.Next(); err != nil {
			t.Errorf("Next: %v", err)
		}
	})
	t.Run("block over configured maximum", func(t *testing.T) {
		in := plainRecord("WARC-Type: resource\r\nContent-Length: 11\r\n", "hello world")
		r, _ := NewReader(strings.NewReader(in))
		r.SetMaxBlockSize(10)
		if _, err := r.Next(); !errors.Is(err, ErrBlockTooLarge) {
			t.Errorf("Next: %v, want ErrBlockTooLarge", err)
		}
		r, _ = NewReader(strings.NewReader(in))
		r.SetMaxBlockSize(11)
		if _, err := r.Next(); err != nil {
			t.Errorf("Next at the limit: %v", err)
		}
	})
	t.Run("block over default maximum", func(t *testing.T) {
		// Refused from the header alone, before anything is read or allocated.
		in := "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 1073741825\r\n\r\n"
		r, _ := NewReader(strings.NewReader(in))
		if _, err := r.Next(); !errors.Is(err, ErrBlockTooLarge) {
			t.Errorf("Next: %v, want ErrBlockTooLarge", err)
		}
	})
	t.Run("large claimed block, short input", func(t *testing.T) {
		in := "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 1073741824\r\n\r\nabc"
		r, _ := NewReader(strings.NewReader(in))
		if _, err := r.Next(); !errors.Is(err, ErrMalformed) || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("Next: %v, want ErrMalformed wrapping io.ErrUnexpectedEOF", err)
		}
	})
}

func TestReaderGzip(t *testing.T) {
	var buf bytes.Buffer
	for _, block := range []string{"one", "two"} {
		zw := gzip.NewWriter(&buf)
		io.WriteString(zw, plainRecord("WARC-Type: resource\r\nContent-Length: 3\r\n", block))
		zw.Close()
	}
	good := buf.Bytes()
	recs := readAllBytes(t, good)
	if len(recs) != 2 || string(recs[1].Block) != "two" {
		t.Fatalf("read %d records", len(recs))
	}

	corrupt := bytes.Clone(good)
	corrupt[len(corrupt)-6] ^= 0xff // in the CRC of the last member
	r, _ := NewReader(bytes.NewReader(corrupt))
	var err error
	for err == nil {
		_, err = r.Next()
	}
	if !errors.Is(err, ErrMalformed) || !errors.Is(err, gzip.ErrChecksum) {
		t.Errorf("corrupt gzip: %v, want ErrMalformed wrapping gzip.ErrChecksum", err)
	}

	if _, err := NewReader(bytes.NewReader([]byte{0x1f, 0x8b, 0})); err == nil {
		t.Errorf("NewReader on a broken gzip header succeeded")
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte(plainRecord("WARC-Type: resource\r\nContent-Length: 5\r\n", "hello")))
	f.Add([]byte("WARC/1.1\r\nWARC-Type: x\r\n folded\r\nContent-Length: 0\r\n\r\n\r\n\r\n"))
	f.Add(encodedExchange())
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := NewReader(bytes.NewReader(in))
		if err != nil {
			return
		}
		r.SetMaxBlockSize(1 << 20)
		for range 100 {
			rec, err := r.Next()
			if err != nil {
				return
			}
			if rec.Type == "" || rec.Header == nil {
				t.Fatalf("record without type: %+v", rec)
			}
		}
	})
}

// encodedExchange is one exchange as Write encodes it, for the fuzz corpus.
func encodedExchange() []byte {
	var buf bytes.Buffer
	encodeExchange(&buf, testExchange(1), testTime, newRecordID(), newRecordID(), newRecordID())
	return buf.Bytes()
}
