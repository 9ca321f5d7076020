package fetch

import (
	"net/url"
	"testing"
)

func TestExtensionPolicy(t *testing.T) {
	p := DefaultExtensionPolicy()
	for _, tt := range []struct {
		url    string
		skip   bool
		reason string
	}{
		{"http://e.com/song.mp3", true, "extension .mp3 (audio)"},
		{"http://e.com/Movie.MKV", true, "extension .mkv (video)"},
		{"http://e.com/setup.exe", true, "extension .exe (executable)"},
		{"http://e.com/src.tar.gz", true, "extension .gz (archive)"},
		{"http://e.com/disk.iso", true, "extension .iso (disk image)"},
		{"http://e.com/a.zip;jsessionid=123", true, "extension .zip (archive)"},
		{"http://e.com/page1.LOL111", false, ""}, // unknown: fetched, the type decides
		{"http://e.com/index.html", false, ""},
		{"http://e.com/download.php?f=a.zip", false, ""},
		{"http://e.com/dir.mp3/", false, ""},
		{"http://e.com/noext", false, ""},
		{"http://e.com/trailingdot.", false, ""},
		{"http://e.com/", false, ""},
	} {
		u, _ := url.Parse(tt.url)
		skip, reason := p.Skip(u)
		if skip != tt.skip || reason != tt.reason {
			t.Errorf("Skip(%s) = %v, %q; want %v, %q", tt.url, skip, reason, tt.skip, tt.reason)
		}
	}
	u, _ := url.Parse("http://e.com/a.pdf")
	if skip, _ := p.With(".PDF").Skip(u); !skip {
		t.Error("With(.PDF) does not skip a.pdf")
	}
	u, _ = url.Parse("http://e.com/a.zip")
	if skip, _ := p.Without("zip").Skip(u); skip {
		t.Error("Without(zip) still skips a.zip")
	}
	if skip, _ := p.Skip(u); !skip {
		t.Error("Without changed the original policy")
	}
	var none *ExtensionPolicy
	if skip, _ := none.Skip(u); skip {
		t.Error("a nil policy skips")
	}
}

func TestTypePolicy(t *testing.T) {
	d := DefaultTypePolicy()
	for mt, want := range map[string]bool{
		"text/html":                     true,
		"text/html; charset=utf-8":      true,
		"application/pdf":               true,
		"image/png":                     true,
		"application/xhtml+xml":         true,
		"audio/mpeg":                    false,
		"Video/MP4":                     false,
		"application/zip":               false,
		"application/x-msdownload":      false,
		"application/x-iso9660-image":   false,
		"application/octet-stream":      false,
		"application/gzip; charset=bin": false,
	} {
		if got := d.Wanted(mt); got != want {
			t.Errorf("default Wanted(%q) = %v, want %v", mt, got, want)
		}
	}
	only := &TypePolicy{Want: []string{" Text/* ", "application/XHTML+xml"}, Skip: []string{"TEXT/css"}}
	for mt, want := range map[string]bool{"text/html": true, "text/plain": true, "text/css": false, "application/pdf": false, "application/xhtml+xml": true} {
		if got := only.Wanted(mt); got != want {
			t.Errorf("Want/Skip Wanted(%q) = %v, want %v", mt, got, want)
		}
	}
	var none *TypePolicy
	if !none.Wanted("video/mp4") {
		t.Error("a nil TypePolicy refuses")
	}
}

func TestEffectiveType(t *testing.T) {
	for _, tt := range []struct {
		ct, head string
		want     string
		sniffed  bool
	}{
		{"text/html; charset=utf-8", "<p>hi", "text/html", false},
		{"", "<!DOCTYPE html><html>", "text/html", true},
		{"application/octet-stream", "  <html><body>", "text/html", true},
		{"application/octet-stream", "\xef\xbb\xbf<meta charset=utf-8><title>x</title>", "text/html", true},
		{"application/octet-stream", "plain words", "text/plain", true},
		{"", "MZ\x90\x00\x03\x00\x00\x00", "application/x-msdownload", true},
		{"", "\x7fELF\x02\x01\x01\x00", "application/x-executable", true},
		{"binary/octet-stream", "7z\xbc\xaf\x27\x1c\x00\x04", "application/x-7z-compressed", true},
		{"", "\xff\xfb\x90\x44\x00\x00", "audio/mpeg", true},
		{"", "\x00\x01\x02\x03", "application/octet-stream", true},
		{"text/html", "PK\x03\x04\x14\x00", "application/zip", true},
		{"text/plain", "\x1f\x8b\x08\x00\x00", "application/x-gzip", true},
		{"text/plain", "<html>", "text/plain", false}, // not promoted, as in browsers
		{"text/xml", "<?xml version='1.0'?><html xmlns='http://www.w3.org/1999/xhtml'>", "text/xml", false},
		{"", "<?xml version='1.0'?><rss><channel><title>t</title>", "text/xml", true},
		{"", "<?xml version='1.0'?><html xmlns='http://www.w3.org/1999/xhtml'>", "application/xhtml+xml", true},
		{"image/png", "<html>", "image/png", false},
		{"video/mp4", "", "video/mp4", false},
		{"", "", "", false},
		{"garbage", "<html>", "text/html", true},
		{"application/octet-stream", "<!-- a comment --><HTML><BODY>", "text/html", true},
		{"", "<?xml version='1.0'?><HTML xmlns='http://www.w3.org/1999/xhtml'>", "application/xhtml+xml", true},
		{"", "<?xml version='1.0'?><htm", "text/xml", true},
		{"application/octet-stream", "<!-- <Title> -->", "text/html", true},
		{"application/octet-stream", "a < b and <titl", "text/plain", true},
	} {
		got, sniffed := effectiveType(tt.ct, []byte(tt.head))
		if got != tt.want || sniffed != tt.sniffed {
			t.Errorf("effectiveType(%q, %q) = %q, %v; want %q, %v", tt.ct, tt.head, got, sniffed, tt.want, tt.sniffed)
		}
	}
	// tar's magic is at offset 257.
	tar := make([]byte, 512)
	copy(tar, "file.txt")
	copy(tar[257:], "ustar\x0000")
	tar[300] = 0x80 // a binary byte, as tar headers have
	if got, _ := effectiveType("", tar); got != "application/x-tar" {
		t.Errorf("tar: %q", got)
	}
}
