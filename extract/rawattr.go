package extract

import (
	"bytes"

	"golang.org/x/net/html"
)

// The tokenizer's TagName and TagAttr copy the name and every key and
// value they return. The few tags extraction reads are read here from
// z.Raw() instead, in the way the tokenizer reads them (readTagName,
// readTagAttrKey, readTagAttrVal of golang.org/x/net/html), so that the
// common tag allocates nothing. TestRawAttrsMatchTokenizer compares both.

// maxName is the length of the longest tag name rawTagName returns.
const maxName = len("iframe")

// rawTagName returns the lowercased name of the raw start tag if it is
// one extraction reads, else "", and the index in raw after the name.
// The name is a constant, so that a Link's Tag costs nothing.
func rawTagName(raw []byte, buf *[maxName]byte) (string, int) {
	if len(raw) < 2 || raw[0] != '<' {
		return "", 0
	}
	// The first byte of the name is taken whatever it is; the name then
	// runs to white space, '/' or '>'.
	i := 2
	for i < len(raw) && !isSpace(raw[i]) && raw[i] != '/' && raw[i] != '>' {
		i++
	}
	n := raw[1:i]
	if len(n) > maxName {
		return "", i
	}
	for j, c := range n {
		buf[j] = lower(c)
	}
	switch string(buf[:len(n)]) {
	case "a":
		return "a", i
	case "area":
		return "area", i
	case "frame":
		return "frame", i
	case "iframe":
		return "iframe", i
	case "img":
		return "img", i
	case "script":
		return "script", i
	case "link":
		return "link", i
	case "base":
		return "base", i
	case "meta":
		return "meta", i
	case "body":
		return "body", i
	}
	return "", i
}

// attrs returns the attributes of the current tag, whose raw bytes are
// raw, read from raw[i:]. Values with a NUL, a carriage return or an
// entity other than "&amp;" are left to the tokenizer.
func (p *pass) attrs(z *html.Tokenizer, raw []byte, i int) attrs {
	a, ok := p.rawAttrs(raw, i)
	if !ok {
		return readAttrs(z)
	}
	return a
}

func (p *pass) rawAttrs(raw []byte, i int) (a attrs, ok bool) {
	p.s.attrs = p.s.attrs[:0]
	for {
		i = skipSpace(raw, i)
		if i >= len(raw) || raw[i] == '>' {
			return a, true
		}
		// The key runs to '=', white space, '/' or '>'; a leading '='
		// is part of it.
		ks := i
		for i < len(raw) {
			c := raw[i]
			if c == '=' && i == ks {
				i++
				continue
			}
			if c == '=' || isSpace(c) || c == '/' || c == '>' {
				break
			}
			i++
		}
		key := raw[ks:i]
		// The value, if any.
		vs, ve := i, i
		if i = skipSpace(raw, i); i < len(raw) {
			switch c := raw[i]; c {
			case '/':
				i++
			case '=':
				if i = skipSpace(raw, i+1); i < len(raw) {
					switch q := raw[i]; q {
					case '>':
					case '\'', '"':
						i++
						vs = i
						for i < len(raw) && raw[i] != q {
							i++
						}
						ve = i
						if i < len(raw) {
							i++
						}
					default:
						vs = i
						for i < len(raw) && !isSpace(raw[i]) && raw[i] != '>' {
							i++
						}
						ve = i
						if i < len(raw) && raw[i] != '>' {
							i++
						}
					}
				}
			}
		}
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
			continue
		}
		if *has {
			continue
		}
		v, ok := p.rawValue(raw[vs:ve])
		if !ok {
			return a, false
		}
		*dst, *has = v, true
	}
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
		if c == '&' {
			if !bytes.HasPrefix(v[i+1:], []byte("amp;")) {
				return nil, false
			}
			i += len("amp;")
		}
		b = append(b, c)
	}
	p.s.attrs = b
	return b[start:len(b):len(b)], true
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
