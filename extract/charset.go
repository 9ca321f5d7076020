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

func charsetDetermine(body []byte, contentType string) (encoding.Encoding, string, bool) {
	return charset.DetermineEncoding(body, contentType)
}

func charsetEncoding(name string) encoding.Encoding {
	e, _ := charset.Lookup(name)
	return e
}
