package extract

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

// decodeUpfront finds the encoding known before the page is read: a byte
// order mark, then the Content-Type charset parameter (HTML, "encoding
// sniffing algorithm"). Encodings in which ASCII bytes do not stand for
// ASCII characters (UTF-16, ISO-2022-JP) are converted to UTF-8 here, the
// whole body at once; the others are decoded href by href. enc is nil for
// UTF-8 and when nothing is declared (name is then "").
func (o Options) decodeUpfront(body []byte) (out []byte, enc encoding.Encoding, name string) {
	switch {
	case bytes.HasPrefix(body, []byte("\xEF\xBB\xBF")):
		return body[3:], nil, "utf-8"
	case bytes.HasPrefix(body, []byte("\xFE\xFF")):
		return transcode(body, unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM)), nil, "utf-16be"
	case bytes.HasPrefix(body, []byte("\xFF\xFE")):
		return transcode(body, unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM)), nil, "utf-16le"
	}
	label, ok := charsetParam(o.ContentType)
	if !ok {
		return body, nil, ""
	}
	e, name := charset.Lookup(label)
	if e == nil {
		return body, nil, ""
	}
	switch name {
	case "utf-8":
		return body, nil, name
	case "utf-16be", "utf-16le", "iso-2022-jp", "replacement":
		return transcode(body, e), nil, name
	}
	return body, e, name
}

// transcode converts body to UTF-8; undecodable bytes become U+FFFD.
func transcode(body []byte, e encoding.Encoding) []byte {
	out, err := e.NewDecoder().Bytes(body)
	if err != nil {
		return body
	}
	return out
}

// declare applies a <meta> encoding declaration: the first one counts,
// and only when the BOM and Content-Type said nothing.
func (p *pass) declare(label string) {
	if p.declared {
		return
	}
	e, name := charset.Lookup(label)
	if e == nil {
		return
	}
	p.declared = true
	switch name {
	case "utf-16be", "utf-16le":
		// HTML: a meta declaring UTF-16 means UTF-8 (the page was
		// readable as ASCII, so it is not UTF-16).
		e, name = nil, "utf-8"
	case "utf-8":
		e = nil
	}
	p.enc, p.charset = e, name
	if p.nonASCII {
		// Hrefs with non-ASCII bytes were read before the declaration.
		p.rerun = true
	}
}

// toUTF8 converts an href with non-ASCII bytes to UTF-8.
func (p *pass) toUTF8(v []byte) []byte {
	e := p.enc
	if e == nil {
		if p.declared || utf8.Valid(v) {
			return v
		}
		// Undeclared and not UTF-8: the web's default legacy encoding.
		e = charmap.Windows1252
	}
	out, err := e.NewDecoder().Bytes(v)
	if err != nil {
		return v
	}
	p.decoded = out
	return out
}

// charsetParam returns the charset parameter of a Content-Type value (or
// of the content of <meta http-equiv="Content-Type">).
func charsetParam(ct string) (string, bool) {
	for {
		i := strings.IndexByte(ct, ';')
		if i < 0 {
			return "", false
		}
		ct = ct[i+1:]
		param := strings.TrimLeft(ct, " \t")
		if len(param) < 8 || !strings.EqualFold(param[:7], "charset") {
			continue
		}
		v := strings.TrimLeft(param[7:], " \t")
		if !strings.HasPrefix(v, "=") {
			continue
		}
		v = strings.TrimLeft(v[1:], " \t")
		if strings.HasPrefix(v, `"`) || strings.HasPrefix(v, `'`) {
			q := v[0]
			v = v[1:]
			if j := strings.IndexByte(v, q); j >= 0 {
				v = v[:j]
			}
		} else if j := strings.IndexAny(v, "; \t"); j >= 0 {
			v = v[:j]
		}
		if v == "" {
			return "", false
		}
		return v, true
	}
}

// charsetDetermine is charset.DetermineEncoding: the encoding of a page
// from its byte order mark, its Content-Type, a <meta> in its first 1024
// bytes, or whether those bytes are UTF-8. DetermineEncoding looks for the
// <meta> with a Tokenizer, which cost as much as reading the whole page;
// prescan does it with the scanner, and leaves to DetermineEncoding the
// rare <meta> whose attributes hold entities or NUL bytes.
// TestCharsetDetermineMatches compares both.
func charsetDetermine(body []byte, contentType string) (encoding.Encoding, string, bool) {
	content := body[:min(len(body), 1024)]
	if bytes.HasPrefix(content, []byte("\xFE\xFF")) || bytes.HasPrefix(content, []byte("\xFF\xFE")) ||
		bytes.HasPrefix(content, []byte("\xEF\xBB\xBF")) || containsFold(contentType, "charset") {
		return charset.DetermineEncoding(body, contentType)
	}
	if len(content) > 0 {
		e, name, ok := prescan(content)
		if !ok {
			return charset.DetermineEncoding(body, contentType)
		}
		if e != nil {
			return e, name, false
		}
	}
	// Leave out a last rune that may be cut short, as DetermineEncoding
	// does (it leaves out the last rune even when it is whole).
	for i := len(content) - 1; i >= 0 && i > len(content)-4; i-- {
		c := content[i]
		if c < 0x80 {
			break
		}
		if utf8.RuneStart(c) {
			content = content[:i]
			break
		}
	}
	high := false
	for _, c := range content {
		if c >= 0x80 {
			high = true
			break
		}
	}
	if high && utf8.Valid(content) {
		return encoding.Nop, "utf-8", false
	}
	return charmap.Windows1252, "windows-1252", false
}

// containsFold reports whether s contains sub (lowercase ASCII), ASCII
// case folded.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

// prescan finds the encoding a <meta> declares in content, as
// golang.org/x/net/html/charset's prescan does; ok is false when a <meta>
// has an attribute this does not decode (entities, NUL, CR).
func prescan(content []byte) (e encoding.Encoding, name string, ok bool) {
	var s scanner
	s.reset(content, len(content)+1)
	for {
		switch s.next() {
		case tokEOF, tokTooLong:
			return nil, "", true
		case tokStart, tokSelfClosing:
			if !asciiLowerEqual(s.data(), "meta") {
				continue
			}
			e, name, ok := prescanMeta(s.raw(), s.de-s.start)
			if !ok || e != nil {
				return e, name, ok
			}
		}
	}
}

// prescanMeta reads the encoding a <meta> tag declares, if it does.
func prescanMeta(raw []byte, i int) (e encoding.Encoding, name string, ok bool) {
	const (
		dontKnow = iota
		needPragma
		noPragma
	)
	need, pragma := dontKnow, false
	var seen [4]bool // http-equiv, content, charset, and whether one was not simple
	eachAttr(raw, i, func(key, val []byte) bool {
		var k int
		switch {
		case asciiLowerEqual(key, "http-equiv"):
			k = 0
		case asciiLowerEqual(key, "content"):
			k = 1
		case asciiLowerEqual(key, "charset"):
			k = 2
		default:
			return true
		}
		if seen[k] {
			return true
		}
		seen[k] = true
		if bytes.IndexByte(val, '&') >= 0 || bytes.IndexByte(val, 0) >= 0 || bytes.IndexByte(val, '\r') >= 0 {
			seen[3] = true
			return false
		}
		v := strings.Map(func(r rune) rune {
			if 'A' <= r && r <= 'Z' {
				return r + 0x20
			}
			return r
		}, string(val))
		switch k {
		case 0:
			pragma = pragma || v == "content-type"
		case 1:
			if e == nil {
				if name = metaCharset(v); name != "" {
					if e, name = charset.Lookup(name); e != nil {
						need = needPragma
					}
				}
			}
		case 2:
			e, name = charset.Lookup(v)
			need = noPragma
		}
		return true
	})
	if seen[3] {
		return nil, "", false
	}
	if need == dontKnow || need == needPragma && !pragma {
		return nil, "", true
	}
	if strings.HasPrefix(name, "utf-16") {
		return encoding.Nop, "utf-8", true
	}
	return e, name, true
}

// metaCharset returns the charset a <meta content> names, as HTML's
// "algorithm for extracting a character encoding from a meta element".
func metaCharset(s string) string {
	for s != "" {
		i := strings.Index(s, "charset")
		if i < 0 {
			return ""
		}
		s = strings.TrimLeft(s[i+len("charset"):], " \t\n\f\r")
		if !strings.HasPrefix(s, "=") {
			continue
		}
		s = strings.TrimLeft(s[1:], " \t\n\f\r")
		if s == "" {
			return ""
		}
		if q := s[0]; q == '"' || q == '\'' {
			s = s[1:]
			j := strings.IndexByte(s, q)
			if j < 0 {
				return ""
			}
			return s[:j]
		}
		if j := strings.IndexAny(s, "; \t\n\f\r"); j >= 0 {
			return s[:j]
		}
		return s
	}
	return ""
}

func charsetEncoding(name string) encoding.Encoding {
	e, _ := charset.Lookup(name)
	return e
}
