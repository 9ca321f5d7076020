package fetch

import (
	"bytes"
	"errors"
	"net/http"
	"runtime"
	"testing"
)

// TestDecodeBody: a recorded body decodes as Do decodes it off the wire,
// for every coding (deflate as zlib and raw), two codings in order, and
// none; the caps hold (size, ratio, number of codings); a coding without a
// decoder and damaged data are errors that keep what decoded.
func TestDecodeBody(t *testing.T) {
	plain := bytes.Repeat([]byte("<p>a polite crawler asks for compression</p>\n"), 400)
	hdr := func(coding string) http.Header { return http.Header{"Content-Encoding": {coding}} }
	for _, tc := range []struct {
		name, header string
		raw          []byte
	}{
		{"gzip", "gzip", encode(t, "gzip", plain)},
		{"x-gzip", "x-gzip", encode(t, "gzip", plain)},
		{"zlib", "deflate", encode(t, "deflate", plain)},
		{"rawdeflate", "deflate", encode(t, "rawdeflate", plain)},
		{"br", "br", encode(t, "br", plain)},
		{"zstd", "zstd", encode(t, "zstd", plain)},
		{"gzip, br", "gzip, br", encode(t, "br", encode(t, "gzip", plain))},
		{"identity", "identity", plain},
		{"none", "", plain},
	} {
		got, err := DecodeBody(nil, hdr(tc.header), tc.raw, 0)
		if err != nil || !bytes.Equal(got, plain) {
			t.Errorf("%s: %d bytes, err %v; want the %d bytes encoded", tc.name, len(got), err, len(plain))
		}
	}

	// dst is reused.
	dst := make([]byte, 0, 2*len(plain))
	if got, _ := DecodeBody(dst, hdr("gzip"), encode(t, "gzip", plain), 0); &got[0] != &dst[:1][0] {
		t.Error("DecodeBody did not decode into dst, which had room")
	}

	// An empty body that names a coding (a 304, a HEAD) is empty, not an error.
	if got, err := DecodeBody(nil, hdr("gzip"), nil, 0); err != nil || len(got) != 0 {
		t.Errorf("empty gzip body: %q, %v", got, err)
	}

	if got, err := DecodeBody(nil, hdr("gzip"), encode(t, "gzip", plain), 1000); !errors.Is(err, ErrBodyTooLarge) || len(got) != 1000 {
		t.Errorf("over maxSize: %d bytes, %v; want 1000 and ErrBodyTooLarge", len(got), err)
	}
	if got, err := DecodeBody(nil, nil, plain, 1000); !errors.Is(err, ErrBodyTooLarge) || len(got) != 1000 {
		t.Errorf("unencoded over maxSize: %d bytes, %v; want 1000 and ErrBodyTooLarge", len(got), err)
	}
	if _, err := DecodeBody(nil, hdr("gzip, gzip, gzip"), plain, 0); !errors.Is(err, ErrTooManyEncodings) {
		t.Errorf("three codings: %v, want ErrTooManyEncodings", err)
	}
	if _, err := DecodeBody(nil, hdr("compress"), plain, 0); err == nil {
		t.Error("a coding without a decoder: no error")
	}
	damaged := encode(t, "gzip", plain)
	damaged = damaged[:len(damaged)/2]
	if got, err := DecodeBody(nil, hdr("gzip"), damaged, 0); err == nil || len(got) == 0 || !bytes.HasPrefix(plain, got) {
		t.Errorf("cut gzip stream: %d bytes, err %v; want a prefix of the page and an error", len(got), err)
	}
}

// TestDecodeBodyBombs: a bomb of every coding is cut, at the ratio or at
// maxSize (the ratio is taken against the whole recorded body, so a gzip
// bomb of 130 KB may reach 4 MiB first), and what decoding it allocates
// stays near maxSize.
func TestDecodeBodyBombs(t *testing.T) {
	const maxBody = 4 << 20
	for coding, raw := range bombBodies(t) {
		header := coding
		if coding == "rawdeflate" {
			header = "deflate"
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got, err := DecodeBody(nil, http.Header{"Content-Encoding": {header}}, raw, maxBody)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrDecompressionBomb) && !errors.Is(err, ErrBodyTooLarge) || len(got) == 0 || len(got) > maxBody {
			t.Errorf("%s: %d bytes, %v; want at most %d and ErrDecompressionBomb or ErrBodyTooLarge", coding, len(got), err, maxBody)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2*maxBody+16<<20+8<<20 {
			t.Errorf("%s: allocated %d MiB", coding, alloc>>20)
		}
	}
}

func TestMediaType(t *testing.T) {
	for _, tc := range []struct{ ct, head, want string }{
		{"text/html; charset=utf-8", "", "text/html"},
		{"", "<!DOCTYPE html><title>x</title>", "text/html"},
		{"application/octet-stream", "<html><body>", "text/html"},
		{"text/plain", "<html><body>", "text/plain"},
		{"text/html", "MZ\x90\x00", "application/x-msdownload"},
	} {
		if got := MediaType(tc.ct, []byte(tc.head)); got != tc.want {
			t.Errorf("MediaType(%q, %q) = %q, want %q", tc.ct, tc.head, got, tc.want)
		}
	}
}
