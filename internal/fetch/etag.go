package fetch

import "strings"

// etagCodingSuffixes are what compressing modules append to an ETag inside
// its quotes when they compress the body (Apache's mod_deflate appends
// "-gzip"; its mod_brotli "-br").
var etagCodingSuffixes = []string{"-gzip", "-br", "-deflate", "-zstd"}

// StripETagCoding returns etag without a content-coding suffix inside its
// quotes (W/"abc-gzip" → W/"abc"), and whether it had one. Such a server
// answers If-None-Match with the suffixed tag by a full 200, and often the
// tag without the suffix by a 304.
func StripETagCoding(etag string) (string, bool) {
	if !strings.HasSuffix(etag, `"`) {
		return etag, false
	}
	body := etag[:len(etag)-1]
	for _, s := range etagCodingSuffixes {
		if rest, ok := strings.CutSuffix(body, s); ok && strings.Contains(rest, `"`) && !strings.HasSuffix(rest, `"`) {
			return rest + `"`, true
		}
	}
	return etag, false
}
