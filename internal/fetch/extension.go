package fetch

import (
	"net/url"
	"strings"
)

// ExtensionPolicy decides from a URL alone, before anything is fetched,
// that the crawl does not want it: by the extension of the last path
// segment. It is the cheap first filter; TypePolicy is the second, on the
// Content-Type and the first bytes, for what the extension does not tell
// (an unknown extension is always fetched: "page1.LOL111" may be HTML).
//
// The zero value and nil skip nothing. Create one with
// NewExtensionPolicy or DefaultExtensionPolicy; it is immutable and safe
// for concurrent use.
type ExtensionPolicy struct {
	exts map[string]string // extension without the dot, lower case → category
}

// DefaultSkipExtensions are the extensions a web crawl skips, by category:
// audio, video, executables, archives and disk images.
var DefaultSkipExtensions = map[string][]string{
	"audio":      {"mp3", "m4a", "aac", "wav", "flac", "ogg", "oga", "opus", "wma", "aif", "aiff", "mid", "midi", "ra", "ape"},
	"video":      {"mp4", "m4v", "mkv", "webm", "avi", "mov", "wmv", "flv", "mpg", "mpeg", "3gp", "ogv", "m2ts", "vob", "rm", "rmvb", "asf"},
	"executable": {"exe", "msi", "dll", "bin", "scr", "apk", "deb", "rpm", "jar", "appimage", "pkg", "msix", "appx", "dylib"},
	"archive":    {"zip", "gz", "tgz", "bz2", "tbz", "tbz2", "xz", "txz", "zst", "7z", "rar", "tar", "lz", "lzma", "z", "cab", "arj"},
	"disk image": {"iso", "img", "dmg", "vhd", "vhdx", "vmdk", "qcow2", "vdi", "toast"},
}

// DefaultExtensionPolicy returns the policy of a web crawl: skip
// DefaultSkipExtensions. Sitemaps are often .xml.gz: the crawler should not
// apply the policy to URLs it knows to be sitemaps.
func DefaultExtensionPolicy() *ExtensionPolicy {
	p := &ExtensionPolicy{exts: map[string]string{}}
	for cat, exts := range DefaultSkipExtensions {
		for _, e := range exts {
			p.exts[e] = cat
		}
	}
	return p
}

// NewExtensionPolicy returns a policy that skips the given extensions (with
// or without the leading dot, any case), with category "configured".
func NewExtensionPolicy(exts ...string) *ExtensionPolicy {
	return (&ExtensionPolicy{}).With(exts...)
}

// With returns a copy of p that also skips exts.
func (p *ExtensionPolicy) With(exts ...string) *ExtensionPolicy {
	q := p.clone()
	for _, e := range exts {
		if e = normExt(e); e != "" {
			q.exts[e] = "configured"
		}
	}
	return q
}

// Without returns a copy of p that fetches exts.
func (p *ExtensionPolicy) Without(exts ...string) *ExtensionPolicy {
	q := p.clone()
	for _, e := range exts {
		delete(q.exts, normExt(e))
	}
	return q
}

func (p *ExtensionPolicy) clone() *ExtensionPolicy {
	q := &ExtensionPolicy{exts: map[string]string{}}
	if p != nil {
		for e, c := range p.exts {
			q.exts[e] = c
		}
	}
	return q
}

func normExt(e string) string {
	return strings.ToLower(strings.TrimPrefix(strings.TrimSpace(e), "."))
}

// Skip reports whether u should not be fetched, and why (for example
// "extension .mp3 (audio)"). Only the last path segment counts, without
// its ;parameters; the query does not (download.php?f=a.zip is fetched, and
// its Content-Type decides).
func (p *ExtensionPolicy) Skip(u *url.URL) (skip bool, reason string) {
	if p == nil || len(p.exts) == 0 || u == nil {
		return false, ""
	}
	ext := Extension(u)
	if ext == "" {
		return false, ""
	}
	if cat, ok := p.exts[ext]; ok {
		return true, "extension ." + ext + " (" + cat + ")"
	}
	return false, ""
}

// Extension returns the extension of u's last path segment, lower case and
// without the dot, or "".
func Extension(u *url.URL) string {
	path := u.Path
	if path == "" {
		path = u.Opaque
	}
	seg := path[strings.LastIndexByte(path, '/')+1:]
	if i := strings.IndexByte(seg, ';'); i >= 0 {
		seg = seg[:i] // /a.mp3;jsessionid=...
	}
	i := strings.LastIndexByte(seg, '.')
	if i < 0 || i == len(seg)-1 {
		return ""
	}
	return strings.ToLower(seg[i+1:])
}
