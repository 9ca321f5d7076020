package warc

import (
	"bytes"
	stdgzip "compress/gzip"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// benchHTML returns an HTML page of about n bytes that compresses the way
// real pages do, not like a run of one byte.
func benchHTML(n int) []byte {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html><html><head><title>bench</title></head><body>\n")
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "<p class=\"item-%d\"><a href=\"/section/%d/page-%d.html\">Item %d of the list</a> written %d times, id %x</p>\n", i%7, i%13, i, i, i*31%97, i*2654435761)
	}
	return []byte(b.String()[:n])
}

func gzipped(t testing.TB, p []byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(p); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pageExchange is the exchange of a page of n bytes, sent gzipped or not.
func pageExchange(t testing.TB, n int, gz bool) *Exchange {
	body := benchHTML(n)
	head := "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nDate: Sat, 01 Mar 2025 12:30:45 GMT\r\nServer: nginx\r\n"
	if gz {
		body = gzipped(t, body)
		head += "Content-Encoding: gzip\r\n"
	}
	head += fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body))
	return &Exchange{
		TargetURI: fmt.Sprintf("https://example.com/page/%d", n),
		Date:      testTime,
		IP:        "192.0.2.7",
		Request:   []byte("GET /page HTTP/1.1\r\nHost: example.com\r\nUser-Agent: gentlecrawl/0.1\r\nAccept-Encoding: gzip\r\n\r\n"),
		Response:  append([]byte(head), body...),
	}
}

// gzipRecord is how records were written before the compressor was driven
// directly: a gzip writer at the default level over header, block and the
// closing CRLFs.
func gzipRecord(t *testing.T, fields []field, block []byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(appendHeader(nil, fields, len(block)))
	zw.Write(block)
	zw.Write([]byte(crlf + crlf))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestWriteRecordSameBytes checks that a record with a body to compress is
// byte for byte the gzip member a gzip writer makes.
func TestWriteRecordSameBytes(t *testing.T) {
	fields := []field{{"WARC-Type", typeResponse}, {"WARC-Record-ID", "<urn:uuid:x>"}}
	for _, n := range []int{1, 100, 5_000, 70_000, 300_000} {
		block := benchHTML(n)
		for range 2 { // the second time with a reused encoder
			e := getEncoder()
			var got bytes.Buffer
			got.WriteString("before")
			e.writeRecord(&got, fields, nil, block, 0)
			putEncoder(e)
			if want := gzipRecord(t, fields, block); !bytes.Equal(got.Bytes()[len("before"):], want) {
				t.Fatalf("block of %d bytes: member differs from a gzip writer's (%d bytes, want %d)", n, got.Len()-len("before"), len(want))
			}
		}
	}
}

// TestWriteRecordHeadOnly checks records of headers alone (a request, a
// revisit), which are Huffman-coded: one gzip member each, holding the
// record, for both gzip readers; smaller than the headers; and a large
// block with no body is compressed at the default level as before.
func TestWriteRecordHeadOnly(t *testing.T) {
	fields := []field{{"WARC-Type", typeRequest}, {"WARC-Record-ID", "<urn:uuid:6d0f7a2e-3b1c-4d5e-8f90-a1b2c3d4e5f6>"}}
	req := []byte("GET /std/index.html HTTP/1.1\r\nHost: 127.0.0.1:18080\r\nUser-Agent: gentlecrawl/1.0 (+https://example.org/bot)\r\nAccept-Encoding: gzip, deflate, br, zstd\r\n\r\n")
	for _, head := range [][]byte{nil, req, benchHTML(maxHeadOnly - 200), benchHTML(maxHeadOnly + 1)} {
		want := append(appendHeader(nil, fields, len(head)), head...)
		want = append(want, crlf+crlf...)
		e := getEncoder()
		var b bytes.Buffer
		e.writeRecord(&b, fields, head, nil, 0)
		putEncoder(e)
		for name, open := range map[string]func(io.Reader) (io.Reader, error){
			"klauspost": func(r io.Reader) (io.Reader, error) {
				zr, err := gzip.NewReader(r)
				if err == nil {
					zr.Multistream(false)
				}
				return zr, err
			},
			"compress/gzip": func(r io.Reader) (io.Reader, error) {
				zr, err := stdgzip.NewReader(r)
				if err == nil {
					zr.Multistream(false)
				}
				return zr, err
			},
		} {
			in := bytes.NewReader(b.Bytes())
			zr, err := open(in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(zr)
			if err != nil || !bytes.Equal(got, want) || in.Len() != 0 {
				t.Fatalf("%s, head of %d bytes: %v; decoded %d bytes, want %d; %d bytes after the member", name, len(head), err, len(got), len(want), in.Len())
			}
		}
		if len(head) > 0 && b.Len() >= len(want) {
			t.Errorf("head of %d bytes: member of %d bytes, not smaller than the record's %d", len(head), b.Len(), len(want))
		}
		if len(head) > maxHeadOnly {
			if w := gzipRecord(t, fields, head); !bytes.Equal(b.Bytes(), w) {
				t.Errorf("head of %d bytes, over maxHeadOnly: not the default level's member", len(head))
			}
		}
	}
}

// TestWriteRecordStored checks records whose body is written in stored
// blocks around the 64 KiB block size: one gzip member each, holding the
// record, for both gzip readers.
func TestWriteRecordStored(t *testing.T) {
	fields := []field{{"WARC-Type", typeResponse}}
	head := []byte("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n")
	var bodies [][]byte
	for _, n := range []int{1, 100, maxStored - 5, maxStored - 4, maxStored - 3, maxStored, maxStored + 1, 2*maxStored - 4, 2*maxStored - 3, 300_000} {
		bodies = append(bodies, benchHTML(n))
	}
	// Gzip magics in the body: at its start, at block ends, many; and the
	// block sizes whose headers would make one with the bytes around them
	// (the ones complement of 0x74e0 is 1f 8b; 0xe0xx's ends in 1f).
	gz := gzipped(t, benchHTML(200_000))
	bodies = append(bodies, gz, gz[:3], gz[:1], bytes.Repeat(gzipMagic, 50_000), bytes.Repeat([]byte{0x1f}, 70_000))
	for _, n := range []int{maxStored - 1, maxStored, maxStored + 1, maxStored + 2} {
		bodies = append(bodies, append(benchHTML(n), gzipMagic...))
	}
	bodies = append(bodies, append([]byte{8}, benchHTML(0x74e0-len(crlf+crlf)-1)...))
	bodies = append(bodies, append([]byte{8}, benchHTML(0x74e0-1)...))
	for _, size := range []int{0xe000, 0xe010, 0xe0ff} {
		b := append(benchHTML(1000), gzipMagic...)
		bodies = append(bodies, append(b, benchHTML(size-len(crlf+crlf)-2)...))
		bodies = append(bodies, append(b, benchHTML(size-2)...))
	}
	for _, body := range bodies {
		n := len(body)
		block := append(append([]byte(nil), head...), body...)
		want := append(appendHeader(nil, fields, len(block)), block...)
		want = append(want, crlf+crlf...)

		e := getEncoder()
		var b bytes.Buffer
		e.writeRecord(&b, fields, head, body, len(body))
		putEncoder(e)

		zr, err := gzip.NewReader(bytes.NewReader(b.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		zr.Multistream(false)
		got, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("body of %d bytes: %v; decoded %d bytes, want %d", n, err, len(got), len(want))
		}
		if err := zr.Reset(bytes.NewReader(nil)); err != io.EOF {
			t.Fatalf("body of %d bytes: more than one member", n)
		}
		in := bytes.NewReader(b.Bytes())
		sr, err := stdgzip.NewReader(in)
		if err != nil {
			t.Fatal(err)
		}
		sr.Multistream(false)
		got, err = io.ReadAll(sr)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("body of %d bytes, compress/gzip: %v; decoded %d bytes, want %d", n, err, len(got), len(want))
		}
		if in.Len() != 0 {
			t.Fatalf("body of %d bytes: %d bytes after the member", n, in.Len())
		}
		if i := bytes.Index(b.Bytes()[1:], gzipMagic); i >= 0 {
			t.Errorf("body of %d bytes: gzip magic at %d of the member's %d bytes", n, i+1, b.Len())
		}
	}
}

func TestCompressedBody(t *testing.T) {
	for _, c := range []struct {
		head string
		want bool
	}{
		{"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n", false},
		{"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n\r\n", true},
		{"HTTP/1.1 200 OK\r\ncontent-encoding:br\r\n\r\n", true},
		{"HTTP/1.1 200 OK\nContent-Encoding: zstd\n\n", true},
		{"HTTP/1.1 200 OK\r\nContent-Encoding: identity\r\n\r\n", false},
		{"HTTP/1.1 200 OK\r\nContent-Encoding: \r\n\r\n", false},
		{"HTTP/1.1 200 OK\r\nContent-Type: image/PNG\r\n\r\n", true},
		{"HTTP/1.1 200 OK\r\nContent-Type: application/zip; x=y\r\n\r\n", true},
		{"HTTP/1.1 200 OK\r\nContent-Type: image/svg+xml\r\n\r\n", false},
		{"HTTP/1.1 200 OK\r\nX-Content-Encoding: gzip\r\n\r\n", false},
		{"Content-Encoding: gzip\r\n\r\n", false}, // that is the status line
	} {
		if got := compressedBody([]byte(c.head)); got != c.want {
			t.Errorf("compressedBody(%q) = %v, want %v", c.head, got, c.want)
		}
	}
}

// TestEncodeExchangeAllocs checks that encoding an exchange allocates
// little beyond the fields and digests, whatever the size of the body: no
// compressor per record, no copy of the block.
func TestEncodeExchangeAllocs(t *testing.T) {
	for _, gz := range []bool{false, true} {
		ex := pageExchange(t, 200_000, gz)
		var buf bytes.Buffer
		allocs := testing.AllocsPerRun(20, func() {
			buf.Reset()
			encodeExchange(&buf, ex, ex.Date, "<urn:uuid:a>", "<urn:uuid:b>", "<urn:uuid:c>")
		})
		// About 25 today: field slices, digests, the date, the index entry.
		if allocs > 40 {
			t.Errorf("gzip %v: %v allocations per exchange, want at most 40", gz, allocs)
		}
	}
}

// BenchmarkEncodeExchange measures the encoding of one exchange (request
// and response record, digests, index entry) for pages sent with and
// without gzip. Run:
//
//	go test -tags pebblegozstd ./warc/ -run XXX -bench EncodeExchange -benchmem
func BenchmarkEncodeExchange(b *testing.B) {
	for _, n := range []int{5_000, 60_000, 500_000} {
		for _, gz := range []bool{false, true} {
			name := fmt.Sprintf("%dKB", n/1000)
			if gz {
				name += "-gzip"
			}
			ex := pageExchange(b, n, gz)
			b.Run(name, func(b *testing.B) {
				var buf bytes.Buffer
				b.ReportAllocs()
				b.SetBytes(int64(len(ex.Response)))
				for b.Loop() {
					buf.Reset()
					encodeExchange(&buf, ex, ex.Date, "<urn:uuid:a>", "<urn:uuid:b>", "<urn:uuid:c>")
				}
				b.ReportMetric(float64(buf.Len()), "warc-bytes")
			})
		}
	}
}

// TestResponseBody checks that an exchange whose response is given as head
// and ResponseBody is recorded byte for byte as the same exchange with the
// two joined in Response, index entry included.
func TestResponseBody(t *testing.T) {
	type split struct {
		name       string
		head, body string
		revisit    bool
	}
	page := string(benchHTML(100_000))
	gz := string(gzipped(t, benchHTML(100_000)))
	cases := []split{
		{"plain", "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n", page, false},
		{"gzip", "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n\r\n", gz, false},
		{"bare LF", "HTTP/1.1 200 OK\nContent-Encoding: gzip\n\n", gz, false},
		{"empty body", "HTTP/1.1 204 No Content\r\n\r\n", "", false},
		{"head without its end", "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n", "\r\n" + gz, false},
		{"head with part of the body", "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n" + gz[:10], gz[10:], false},
		{"no head at all", "HTTP/1.1 200 OK", "\r\nContent-Type: text/html", false},
		{"revisit", "HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n", "ignored", true},
	}
	for _, c := range cases {
		ex := pageExchange(t, 10, false)
		ex.Revisit = c.revisit
		joined := *ex
		joined.Response = []byte(c.head + c.body)
		if c.revisit {
			joined.Response = []byte(c.head)
		}
		parts := *ex
		parts.Response, parts.ResponseBody = []byte(c.head), []byte(c.body)
		var a, b bytes.Buffer
		lenA, entryA := encodeExchange(&a, &joined, ex.Date, "<urn:uuid:a>", "<urn:uuid:b>", "<urn:uuid:c>")
		lenB, entryB := encodeExchange(&b, &parts, ex.Date, "<urn:uuid:a>", "<urn:uuid:b>", "<urn:uuid:c>")
		if !bytes.Equal(a.Bytes(), b.Bytes()) || lenA != lenB || entryA != entryB {
			t.Errorf("%s: records differ (%d and %d bytes), or their index entries:\n%+v\n%+v", c.name, a.Len(), b.Len(), entryA, entryB)
		}
	}
}
