package fetch

import (
	"bytes"
	"net/http"
	"strings"
)

// TypePolicy says which media types a crawl wants downloaded. It is applied
// after the response head (and the first 512 decoded bytes) have arrived: a
// response whose type is not wanted is not read further (Result.Skipped).
// The zero value and nil want everything. A TypePolicy must not be changed
// while a Client uses it; reading it concurrently is safe.
//
// A pattern is a media type ("application/zip"), a type with any subtype
// ("video/*"), or "*/*". Matching ignores case and parameters.
type TypePolicy struct {
	// Want, when not empty, lists the only media types wanted.
	Want []string

	// Skip lists media types not wanted. It wins over Want.
	Skip []string
}

// DefaultSkipTypes are the media types a web crawl does not want: audio,
// video, executables, archives and disk images, and bytes nobody could
// identify (application/octet-stream after sniffing).
var DefaultSkipTypes = []string{
	"audio/*",
	"video/*",
	"application/ogg",
	// executables and installers
	"application/x-msdownload",
	"application/x-msdos-program",
	"application/x-dosexec",
	"application/vnd.microsoft.portable-executable",
	"application/x-executable",
	"application/x-elf",
	"application/x-sharedlib",
	"application/x-mach-binary",
	"application/x-msi",
	"application/x-ole-storage",
	"application/vnd.android.package-archive",
	"application/vnd.debian.binary-package",
	"application/x-debian-package",
	"application/x-rpm",
	"application/x-redhat-package-manager",
	"application/java-archive",
	"application/x-java-archive",
	// archives
	"application/zip",
	"application/x-zip-compressed",
	"application/gzip",
	"application/x-gzip",
	"application/x-tar",
	"application/x-gtar",
	"application/x-bzip2",
	"application/x-xz",
	"application/zstd",
	"application/x-7z-compressed",
	"application/x-rar-compressed",
	"application/vnd.rar",
	"application/x-lzip",
	"application/x-lzma",
	"application/x-compress",
	// disk images
	"application/x-iso9660-image",
	"application/x-cd-image",
	"application/x-apple-diskimage",
	"application/x-raw-disk-image",
	"application/vnd.efi.img",
	"application/x-virtualbox-vdi",
	"application/x-vhd",
	// unidentified bytes
	"application/octet-stream",
}

// DefaultTypePolicy returns the policy of a web crawl: everything but
// DefaultSkipTypes. robots.txt and sitemaps (which may be gzip files) should
// be fetched with Request.AllTypes instead.
func DefaultTypePolicy() *TypePolicy {
	return &TypePolicy{Skip: DefaultSkipTypes}
}

// Wanted reports whether a response of mediaType (parameters allowed) should
// be downloaded.
func (p *TypePolicy) Wanted(mediaType string) bool {
	if p == nil {
		return true
	}
	mt := mediaTypeOf(mediaType)
	if matchAny(p.Skip, mt) {
		return false
	}
	return len(p.Want) == 0 || matchAny(p.Want, mt)
}

// matchAny reports whether mt, lower case, matches one of patterns, in
// any case: a type, "type/*" or "*/*". It is asked for every response, of
// some forty patterns, and allocates nothing.
func matchAny(patterns []string, mt string) bool {
	for _, p := range patterns {
		p = strings.TrimSpace(p)
		switch {
		case p == "*/*" || strings.EqualFold(p, mt):
			return true
		case strings.HasSuffix(p, "/*") && len(mt) >= len(p)-1 && strings.EqualFold(mt[:len(p)-1], p[:len(p)-1]):
			return true
		}
	}
	return false
}

// mediaTypeOf returns the media type of a Content-Type value in lower case
// without parameters, or "" when there is none.
func mediaTypeOf(ct string) string {
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	if strings.Count(mt, "/") != 1 || strings.HasPrefix(mt, "/") || strings.HasSuffix(mt, "/") {
		return ""
	}
	return mt
}

// genericTypes say nothing about the content; the bytes are sniffed.
var genericTypes = map[string]bool{
	"":                           true,
	"*/*":                        true,
	"application/octet-stream":   true,
	"binary/octet-stream":        true,
	"application/binary":         true,
	"application/unknown":        true,
	"application/x-unknown":      true,
	"unknown/unknown":            true,
	"application/force-download": true,
	"application/download":       true,
	"application/x-download":     true,
}

// effectiveType returns the media type of a response: the declared one,
// unless it is missing or generic, or it claims text while the first bytes
// carry the signature of a binary format. sniffed reports that the bytes
// decided. head is the start of the decoded body; with none, the declared
// type stands.
//
// This is the seed's "page1.LOL111" case: a URL with an unknown extension
// served as application/octet-stream (or with no Content-Type) that is
// really HTML is recognised as text/html.
func effectiveType(contentType string, head []byte) (mt string, sniffed bool) {
	declared := mediaTypeOf(contentType)
	if len(head) == 0 {
		return declared, false
	}
	switch {
	case genericTypes[declared]:
		return sniff(head), true
	case strings.HasPrefix(declared, "text/") || declared == "application/xhtml+xml" || declared == "application/xml":
		// A text type whose bytes are a zip, an MP3 or an executable is
		// lying; a crawl that skips those must see through it. Sniffed text
		// never overrides the declared text type (text/plain is not
		// promoted to HTML, as in browsers).
		if s := sniff(head); !strings.HasPrefix(s, "text/") && s != "application/octet-stream" && s != "application/xhtml+xml" {
			return s, true
		}
	}
	return declared, false
}

// sniff identifies content from its first bytes: net/http's
// DetectContentType (the WHATWG algorithm) plus signatures it lacks.
func sniff(b []byte) string {
	mt := mediaTypeOf(http.DetectContentType(b))
	switch mt {
	case "application/octet-stream":
		for _, s := range signatures {
			if s.off+len(s.magic) <= len(b) && bytes.Equal(b[s.off:s.off+len(s.magic)], s.magic) {
				return s.mt
			}
		}
		if len(b) >= 2 && b[0] == 0xff && b[1]&0xe0 == 0xe0 && b[1]&0x06 != 0 {
			return "audio/mpeg" // an MPEG audio frame header without ID3
		}
	case "text/plain", "text/xml":
		// DetectContentType only sees markup at the very start (after
		// whitespace). A byte-order mark, a leading comment or a tag it
		// does not list (<meta>, <link>) hide HTML from it.
		// In XML only an <html> element makes it XHTML: feeds have
		// <title> too.
		if mt == "text/xml" {
			if containsFold(b, htmlHints[0]) {
				return "application/xhtml+xml"
			}
			return mt
		}
		for _, tag := range htmlHints {
			if containsFold(b, tag) {
				return "text/html"
			}
		}
	}
	return mt
}

// containsFold reports whether b holds sub, which is lower case and starts
// with '<', in any ASCII case. (Lowercasing a copy of b first cost a
// 512-byte allocation per XHTML page.)
func containsFold(b, sub []byte) bool {
	for i := 0; len(b)-i >= len(sub); {
		j := bytes.IndexByte(b[i:], '<')
		if j < 0 {
			return false
		}
		i += j
		if len(b)-i >= len(sub) && bytes.EqualFold(b[i:i+len(sub)], sub) {
			return true
		}
		i++
	}
	return false
}

// htmlHints are the markup that makes text HTML; "<html" first.
var htmlHints = [][]byte{[]byte("<html"), []byte("<head"), []byte("<body"), []byte("<!doctype html"), []byte("<meta "), []byte("<title>")}

// signatures DetectContentType does not know.
var signatures = []struct {
	off   int
	magic []byte
	mt    string
}{
	{0, []byte("MZ"), "application/x-msdownload"},
	{0, []byte("\x7fELF"), "application/x-executable"},
	{0, []byte("\xfe\xed\xfa\xce"), "application/x-mach-binary"},
	{0, []byte("\xfe\xed\xfa\xcf"), "application/x-mach-binary"},
	{0, []byte("\xce\xfa\xed\xfe"), "application/x-mach-binary"},
	{0, []byte("\xcf\xfa\xed\xfe"), "application/x-mach-binary"},
	{0, []byte("7z\xbc\xaf\x27\x1c"), "application/x-7z-compressed"},
	{0, []byte("\xfd7zXZ\x00"), "application/x-xz"},
	{0, []byte("BZh"), "application/x-bzip2"},
	{0, []byte("\x28\xb5\x2f\xfd"), "application/zstd"},
	{0, []byte("fLaC"), "audio/flac"},
	{0, []byte("\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"), "application/x-ole-storage"},
	{0, []byte("!<arch>\ndebian"), "application/vnd.debian.binary-package"},
	{0, []byte("\xed\xab\xee\xdb"), "application/x-rpm"},
	{0, []byte("FLV\x01"), "video/x-flv"},
	{0, []byte("\x30\x26\xb2\x75\x8e\x66\xcf\x11"), "video/x-ms-asf"},
	{0, []byte("\x00\x00\x01\xba"), "video/mpeg"},
	{0, []byte("\x00\x00\x01\xb3"), "video/mpeg"},
	{257, []byte("ustar"), "application/x-tar"},
}
