package extract

import (
	"bytes"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// The tokenizer's TagName and TagAttr copy the name and every key and
// value they return. The few tags extraction reads are read here from
// z.Raw() instead, in the way the tokenizer reads them (readTagName,
// readTagAttrKey, readTagAttrVal of golang.org/x/net/html), so that the
// common tag allocates nothing. TestRawAttrsMatchTokenizer compares both.

// attrs returns the attributes of the current tag, whose raw bytes are
// raw, read from raw[i:]. Values with a NUL, a carriage return or a
// character reference attrRef does not know are rare, and left to the
// Tokenizer.
func (p *pass) attrs(raw []byte, i int) attrs {
	a, ok := p.rawAttrs(raw, i)
	if !ok {
		return readAttrs(tagTokenizer(raw))
	}
	return a
}

// tagTokenizer returns a Tokenizer positioned on the start tag raw.
func tagTokenizer(raw []byte) *html.Tokenizer {
	z := html.NewTokenizer(bytes.NewReader(raw))
	z.Next()
	return z
}

func (p *pass) rawAttrs(raw []byte, i int) (a attrs, ok bool) {
	p.s.attrs = p.s.attrs[:0]
	ok = true
	eachAttr(raw, i, func(key, val []byte) bool {
		// The tokenizer keeps the first of attributes of the same name.
		var dst *[]byte
		var has *bool
		switch {
		case asciiLowerEqual(key, "href"):
			dst, has = &a.href, &a.hasHref
		case asciiLowerEqual(key, "src"):
			dst, has = &a.src, &a.hasSrc
		case asciiLowerEqual(key, "srcset"):
			dst, has = &a.srcset, &a.hasSrcset
		case asciiLowerEqual(key, "rel"):
			dst, has = &a.rel, &a.hasRel
		case asciiLowerEqual(key, "hreflang"):
			dst, has = &a.hreflang, &a.hasHreflang
		default:
			return true
		}
		if *has {
			return true
		}
		v, simple := p.rawValue(val)
		if !simple {
			ok = false
			return false
		}
		*dst, *has = v, true
		return true
	})
	return a, ok
}

// metaAttrs holds the attributes of a <meta> that extraction reads.
type metaAttrs struct {
	name, content, httpEquiv, charset         []byte
	hasName, hasContent, hasEquiv, hasCharset bool
}

// metaAttrs returns the attributes of the <meta> tag raw, read from
// raw[i:], as attrs does. The content is decoded only when the tag is
// one extraction reads (robots, the agent's name, an encoding): the
// common <meta name="description"> with entities needs no Tokenizer.
func (p *pass) metaAttrs(raw []byte, i int) metaAttrs {
	var m metaAttrs
	p.s.attrs = p.s.attrs[:0]
	ok := true
	eachAttr(raw, i, func(key, val []byte) bool {
		var dst *[]byte
		var has *bool
		switch {
		case asciiLowerEqual(key, "name"):
			dst, has = &m.name, &m.hasName
		case asciiLowerEqual(key, "content"):
			if !m.hasContent {
				m.content, m.hasContent = val, true // decoded below, if read
			}
			return true
		case asciiLowerEqual(key, "http-equiv"):
			dst, has = &m.httpEquiv, &m.hasEquiv
		case asciiLowerEqual(key, "charset"):
			dst, has = &m.charset, &m.hasCharset
		default:
			return true
		}
		if *has {
			return true
		}
		v, simple := p.rawValue(val)
		if !simple {
			ok = false
			return false
		}
		*dst, *has = v, true
		return true
	})
	if ok && m.hasContent && p.readsContent(&m) {
		m.content, ok = p.rawValue(m.content)
	}
	if ok {
		return m
	}
	m = metaAttrs{}
	z := tagTokenizer(raw)
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr() // lowercase keys, decoded values
		switch string(k) {
		case "name":
			if !m.hasName {
				m.name, m.hasName = v, true
			}
		case "content":
			if !m.hasContent {
				m.content, m.hasContent = v, true
			}
		case "http-equiv":
			if !m.hasEquiv {
				m.httpEquiv, m.hasEquiv = v, true
			}
		case "charset":
			if !m.hasCharset {
				m.charset, m.hasCharset = v, true
			}
		}
	}
	return m
}

// readsContent reports whether meta reads the content of m.
func (p *pass) readsContent(m *metaAttrs) bool {
	if !m.hasCharset && m.hasEquiv && bytes.EqualFold(bytes.TrimSpace(m.httpEquiv), []byte("content-type")) {
		return true
	}
	if !m.hasName {
		return false
	}
	name := bytes.TrimSpace(m.name)
	return bytes.EqualFold(name, []byte("robots")) || p.o.Agent != "" && bytes.EqualFold(name, []byte(p.o.Agent))
}

// rawValue returns the value of an attribute as TagAttr would, or false
// when it is not simple enough to decode here.
func (p *pass) rawValue(v []byte) ([]byte, bool) {
	amp := false
	for _, c := range v {
		switch c {
		case 0, '\r':
			return nil, false
		case '&':
			amp = true
		}
	}
	if !amp {
		return v, true
	}
	b := p.s.attrs
	start := len(b)
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '&' {
			b = append(b, c)
			continue
		}
		r, n := attrRef(v[i:])
		if n == 0 {
			return nil, false
		}
		b = utf8.AppendRune(b, r)
		i += n - 1
	}
	p.s.attrs = b
	return b[start:len(b):len(b)], true
}

// attrRef decodes the character reference at the start of v ('&') when it
// is one of the common ones whose meaning in an attribute is plain: a
// named reference of the few below, or a numeric one ending in ';' for a
// character that needs no replacement. It returns the character and the
// reference's length, or 0 for anything else (left to the Tokenizer).
// Generated pages write URLs in attributes with numeric references
// (Sphinx's "&#64;"), thousands to a page.
func attrRef(v []byte) (rune, int) {
	end := bytes.IndexByte(v, ';')
	if end < 0 || end > len("&#x10FFFF") {
		return 0, 0
	}
	ref := v[1:end]
	switch string(ref) {
	case "amp":
		return '&', end + 1
	case "lt":
		return '<', end + 1
	case "gt":
		return '>', end + 1
	case "quot":
		return '"', end + 1
	case "apos":
		return '\'', end + 1
	case "nbsp":
		return '\u00a0', end + 1
	}
	if len(ref) < 2 || ref[0] != '#' {
		return 0, 0
	}
	digits, base := ref[1:], rune(10)
	if digits[0] == 'x' || digits[0] == 'X' {
		digits, base = digits[1:], 16
	}
	if len(digits) == 0 || len(digits) > 7 {
		return 0, 0
	}
	var r rune
	for _, c := range digits {
		var d rune
		switch {
		case '0' <= c && c <= '9':
			d = rune(c - '0')
		case base == 16 && 'a' <= lower(c) && lower(c) <= 'f':
			d = rune(lower(c)-'a') + 10
		default:
			return 0, 0
		}
		r = r*base + d
	}
	// NUL, the C1 controls (read as windows-1252), surrogates and what
	// lies past Unicode are replaced by the Tokenizer: left to it.
	if r == 0 || 0x80 <= r && r <= 0x9f || 0xd800 <= r && r <= 0xdfff || r > utf8.MaxRune {
		return 0, 0
	}
	return r, end + 1
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// asciiLowerEqual reports whether b lowercased (ASCII only, as the
// tokenizer does) is s, which is lowercase.
func asciiLowerEqual(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		if lower(b[i]) != s[i] {
			return false
		}
	}
	return true
}
