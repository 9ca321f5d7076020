package warc

import (
	"bytes"
	"compress/flate"
	"io"
	"math/rand/v2"
	"testing"

	kflate "github.com/klauspost/compress/flate"
)

// inflate decodes deflate data with the standard library's reader.
func inflate(t testing.TB, b []byte) []byte {
	t.Helper()
	out, err := io.ReadAll(flate.NewReader(bytes.NewReader(b)))
	if err != nil {
		t.Fatalf("inflate: %v", err)
	}
	return out
}

// checkHeadCode encodes parts with headCode, as a final block and as one
// followed by stored blocks, and decodes them back.
func checkHeadCode(t testing.TB, parts ...[]byte) {
	t.Helper()
	want := bytes.Join(parts, nil)
	var dst bytes.Buffer
	dst.WriteString("before")
	ok := headCode.encode(&dst, true, parts...)
	for _, c := range want {
		if !headByte(c) {
			if ok || dst.String() != "before" {
				t.Fatalf("%q holds %#x, which has no code: encode = %v, wrote %q", want, c, ok, dst.String()[6:])
			}
			return
		}
	}
	if !ok {
		t.Fatalf("%q: encode refused header text", want)
	}
	if got := inflate(t, dst.Bytes()[6:]); !bytes.Equal(got, want) {
		t.Fatalf("final block: got %q, want %q", got, want)
	}
	dst.Reset()
	if !headCode.encode(&dst, false, parts...) {
		t.Fatal("encode refused the same text not final")
	}
	appendStored(&dst, []byte("\x1f\x8b\x08 and a body"), "\r\n\r\n")
	if got, want := inflate(t, dst.Bytes()), append(want, "\x1f\x8b\x08 and a body\r\n\r\n"...); !bytes.Equal(got, want) {
		t.Fatalf("block then stored blocks: got %q, want %q", got, want)
	}
}

func TestHeadCode(t *testing.T) {
	checkHeadCode(t)
	checkHeadCode(t, []byte{})
	checkHeadCode(t, []byte(headSample))
	checkHeadCode(t, []byte("WARC/1.1\r\n"), nil, []byte("HTTP/1.1 200 OK\r\n\r\n"), []byte("\r\n\r\n"))
	var every []byte
	for c := range 256 {
		if headByte(byte(c)) {
			every = append(every, byte(c))
		}
	}
	checkHeadCode(t, every)
	for _, bad := range []string{"\x00", "caf\xc3\xa9", "\x7f", "ok\xff"} {
		checkHeadCode(t, []byte("Location: "), []byte(bad))
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 500 {
		b := make([]byte, r.IntN(20000))
		for i := range b {
			b[i] = every[r.IntN(len(every))]
		}
		checkHeadCode(t, b[:len(b)/3], b[len(b)/3:])
	}
}

// TestHeadCodeSize: one code for all headers costs little over a code
// built for each record.
func TestHeadCodeSize(t *testing.T) {
	var ours, built bytes.Buffer
	headCode.encode(&ours, true, []byte(headSample))
	fw, _ := kflate.NewWriter(&built, kflate.HuffmanOnly)
	fw.Write([]byte(headSample))
	fw.Close()
	if ours.Len() > built.Len()*11/10 {
		t.Errorf("headCode: %d bytes, a code for the text alone: %d", ours.Len(), built.Len())
	}
	t.Logf("%d bytes of headers: %d with headCode, %d with their own code", len(headSample), ours.Len(), built.Len())
}

func FuzzHeadCode(f *testing.F) {
	f.Add([]byte(headSample), []byte("x"))
	f.Add([]byte{}, []byte("\x00\xff"))
	f.Fuzz(func(t *testing.T, a, b []byte) { checkHeadCode(t, a, b) })
}

func BenchmarkHeadCode(b *testing.B) {
	var dst bytes.Buffer
	b.SetBytes(int64(len(headSample)))
	for b.Loop() {
		dst.Reset()
		headCode.encode(&dst, true, []byte(headSample))
	}
}
