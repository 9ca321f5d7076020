package export

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/gentlecrawl/gentlecrawl/warc"
)

// failAfter reads data, then fails with err.
type failAfter struct {
	data []byte
	err  error
}

func (f *failAfter) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

// readBoth reads the records of a decompressed member with warc.Reader and
// with scanner.next, and returns what each read, one string per record or
// error, to compare: the type, the fields, the block, or the error as
// cause gives it.
func readBoth(t *testing.T, data []byte, end error, maxBlock int64) (want, got []string) {
	t.Helper()
	wr, err := warc.NewReader(&failAfter{data: data, err: end})
	if err != nil {
		want = append(want, "NewReader: "+cause(err).Error())
	} else {
		wr.SetMaxBlockSize(maxBlock)
		for {
			rec, err := wr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				want = append(want, "error: "+cause(err).Error())
				break
			}
			var fields []string
			for name, value := range rec.Header {
				fields = append(fields, name+"="+value)
			}
			slices.Sort(fields)
			want = append(want, fmt.Sprintf("%s %q %q", rec.Type, fields, rec.Block))
		}
	}

	s := newScanner(&Options{MaxRecordSize: maxBlock})
	s.wbr = bufio.NewReaderSize(&failAfter{data: data, err: end}, 16) // small, to cut lines in pieces
	if magic, err := s.wbr.Peek(2); err != nil && err != io.EOF {
		return want, append(got, "NewReader: "+cause(fmt.Errorf("warc: %w", err)).Error())
	} else if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		t.Fatal("gzip content: not for this test")
	}
	for {
		err := s.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			got = append(got, "error: "+cause(err).Error())
			break
		}
		var fields []string
		for _, f := range s.rec.fields {
			fields = append(fields, string(s.rec.hdr[f.n0:f.n1])+"="+string(s.rec.hdr[f.v0:f.v1]))
		}
		slices.Sort(fields)
		got = append(got, fmt.Sprintf("%s %q %q", s.rec.typ, fields, s.rec.block))
	}
	return want, got
}

// TestRecordReader: scanner.next reads records as warc.Reader.Next does,
// and fails where and as it fails: on well-formed records (folded and
// repeated fields, bare LF, blank lines between records, long lines), on
// each way the header can be wrong, on the input cut at every byte, and
// on every byte changed to one that matters to the syntax.
func TestRecordReader(t *testing.T) {
	rec := func(fields string, block string) string {
		return "WARC/1.1\r\n" + fields + fmt.Sprintf("Content-Length: %d\r\n\r\n", len(block)) + block + "\r\n\r\n"
	}
	good := rec("WARC-Type: response\r\nWARC-Target-URI: http://a.test/\r\nContent-Type: application/http;msgtype=response\r\n",
		"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<title>x</title>") +
		"\r\n" + // a blank line between records, which readers tolerate
		rec("warc-type:  request \r\nX-Folded: one\r\n  two\r\n\tthree\r\nX-Folded: dropped\r\n continued, dropped\r\nx-folded: other case\r\n", "GET / HTTP/1.1\r\n\r\n")
	cases := map[string]string{
		"good":              good,
		"empty":             "",
		"blank lines only":  "\r\n\n\r\n",
		"bare LF":           strings.ReplaceAll(good, "\r\n", "\n"),
		"WARC/1.0":          strings.Replace(good, "WARC/1.1", "WARC/1.0", 1),
		"bad version":       strings.Replace(good, "WARC/1.1", "WARC/2.0", 1),
		"continuation":      "WARC/1.1\r\n continued\r\n\r\n",
		"no colon":          "WARC/1.1\r\nWARC-Type response\r\n\r\n",
		"bad name":          "WARC/1.1\r\nWARC Type: response\r\n\r\n",
		"empty name":        "WARC/1.1\r\n: response\r\n\r\n",
		"no type":           rec("WARC-Target-URI: x\r\n", "a"),
		"empty type":        rec("WARC-Type:\r\n", "a"),
		"no length":         "WARC/1.1\r\nWARC-Type: resource\r\n\r\n",
		"length +5":         "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: +5\r\n\r\nabcde\r\n\r\n",
		"length -0":         "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: -0\r\n\r\n\r\n\r\n",
		"length -1":         "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: -1\r\n\r\n",
		"length 1_0":        "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 1_0\r\n\r\n",
		"length huge":       "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 99999999999999999999\r\n\r\n",
		"length max":        "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 9223372036854775807\r\n\r\n",
		"length over limit": "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 1001\r\n\r\n",
		"lengths twice":     "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 2\r\ncontent-length: 3\r\n\r\nab\r\n\r\n",
		"short block":       "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 500\r\n\r\nabc",
		"bad end":           "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 1\r\n\r\naXY\r\n",
		"long line":         rec("WARC-Type: resource\r\nX-Long: "+strings.Repeat("v", 40000)+"\r\n", "a"),
		"header too large":  rec("WARC-Type: resource\r\nX-Long: "+strings.Repeat("v", warc.MaxHeaderSize)+"\r\n", "a"),
		"many fields":       rec("WARC-Type: resource\r\n"+strings.Repeat("X-F: vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv\r\n", 1500), "a"),
		"line without end":  "WARC/1.1\r\nWARC-Type: resource",
		"version, no end":   "WARC/1.1",
	}
	failure := errors.New("flate: corrupt input before offset 99")
	compare := func(name string, data []byte) {
		t.Helper()
		for _, end := range []error{io.EOF, failure} {
			want, got := readBoth(t, data, end, 1000)
			if !slices.Equal(want, got) {
				t.Errorf("%s, then %v:\nwarc.Reader: %q\nscanner:     %q", name, end, want, got)
			}
		}
	}
	for name, data := range cases {
		compare(name, []byte(data))
	}
	for i := range len(good) {
		compare(fmt.Sprintf("cut at %d", i), []byte(good[:i]))
		for _, c := range []byte{'\n', '\r', ' ', ':', '\t', 'x', '0', 0} {
			b := []byte(good)
			b[i] = c
			compare(fmt.Sprintf("byte %d to %q", i, c), b)
		}
	}
}

// TestRecordGet: get finds a field spelled as asked first, then in any
// case.
func TestRecordGet(t *testing.T) {
	var r record
	r.add([]byte("warc-date"), []byte("lower"))
	r.add([]byte("WARC-Date"), []byte("exact"))
	r.add([]byte("Content-LENGTH"), []byte("5"))
	if got := string(r.get("WARC-Date")); got != "exact" {
		t.Errorf("WARC-Date: %q", got)
	}
	if got := string(r.get("content-length")); got != "5" {
		t.Errorf("content-length: %q", got)
	}
	if got := r.get("Content-Type"); got != nil {
		t.Errorf("Content-Type: %q", got)
	}
	for _, tc := range []struct {
		in string
		n  int64
		ok bool
	}{{"0", 0, true}, {"+7", 7, true}, {"-0", 0, true}, {"007", 7, true}, {"9223372036854775807", 1<<63 - 1, true},
		{"9223372036854775808", 0, false}, {"-9223372036854775808", 0, false}, {"-1", 0, false}, {"", 0, false},
		{"+", 0, false}, {" 1", 0, false}, {"1e3", 0, false}, {"0x10", 0, false}} {
		if n, ok := parseLength([]byte(tc.in)); n != tc.n || ok != tc.ok {
			t.Errorf("parseLength(%q) = %d, %v; want %d, %v", tc.in, n, ok, tc.n, tc.ok)
		}
	}
	if !hasPrefixFold([]byte("Application/HTTP; msgtype=response"), "application/http") || hasPrefixFold([]byte("application/htt"), "application/http") {
		t.Error("hasPrefixFold")
	}
}
