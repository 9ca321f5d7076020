package extract

import "bytes"

// The scanner splits a page into the tokens of the HTML tokenization
// algorithm, as golang.org/x/net/html's Tokenizer does, from a byte slice.
// The Tokenizer reads through an io.Reader a byte at a time and copies
// every tag name and attribute it is asked for, which made it most of the
// crawler's CPU per page; this reads the page in place and jumps from '<'
// to '<'. Its token boundaries, tag names, raw-text elements, comments and
// script escapes are the Tokenizer's:
// TestScannerMatchesTokenizer compares both on random pages and on real
// documentation sites.

// tokenKind is the kind of a scanned token.
type tokenKind uint8

const (
	tokEOF         tokenKind = iota // the end of the page (or of a tag cut by it)
	tokText                         // text: data is the text's bytes
	tokStart                        // a start tag: data is its name
	tokSelfClosing                  // a start tag ending in "/>": data is its name
	tokEnd                          // an end tag: data is its name
	tokComment                      // a comment, doctype, bogus comment or "</>"
	tokTooLong                      // a token of at least max bytes: the page is not read further
)

// scanner reads the tokens of an HTML page.
type scanner struct {
	b       []byte
	pos     int
	max     int    // a token of this many bytes or more ends the scan (MaxToken)
	rawTag  string // the raw-text element whose content comes next ("" none)
	done    bool   // tokEOF or tokTooLong was returned
	tooLong bool   // the next token is tokTooLong

	// The current token.
	start, end int   // raw bytes: b[start:end]
	ds, de     int   // data: the text, or the tag name
	id         tagID // the tag's, for a tag
	textRaw    bool  // text whose entities are not decoded (script, style, ...)
	convertNUL bool  // text whose NUL bytes read as U+FFFD (raw text and RCDATA)
}

func (s *scanner) reset(b []byte, max int) {
	*s = scanner{b: b, max: max}
}

// raw returns the raw bytes of the current token.
func (s *scanner) raw() []byte { return s.b[s.start:s.end] }

// data returns the text or the tag name of the current token, undecoded.
func (s *scanner) data() []byte { return s.b[s.ds:s.de] }

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// next scans the next token.
func (s *scanner) next() tokenKind {
	if s.done {
		return tokEOF
	}
	if s.tooLong {
		s.done = true
		return tokTooLong
	}
	s.start, s.ds, s.de = s.pos, s.pos, s.pos
	s.textRaw, s.convertNUL = false, false
	if s.rawTag != "" {
		tag := s.rawTag
		s.rawTag = ""
		var end int
		switch tag {
		case "plaintext":
			end = len(s.b)
		case "script":
			end = scriptEnd(s.b, s.pos)
		default:
			end = rawTextEnd(s.b, s.pos, tag)
		}
		if end > s.pos {
			s.textRaw = tag != "textarea" && tag != "title"
			s.convertNUL = true
			return s.text(end)
		}
	}
	b := s.b
	for i := s.pos; ; {
		j := bytes.IndexByte(b[i:], '<')
		if j < 0 {
			return s.text(len(b))
		}
		i += j
		if i+1 >= len(b) {
			// A '<' that ends the page is text.
			return s.text(len(b))
		}
		c := b[i+1]
		if !isLetter(c) && c != '/' && c != '!' && c != '?' {
			i++
			continue
		}
		if i > s.pos {
			// The text before the tag comes first.
			return s.text(i)
		}
		switch {
		case isLetter(c):
			return s.startTag(i)
		case c == '/':
			return s.endTag(i)
		case c == '!':
			return s.markup(i)
		}
		// "<?": a bogus comment to the next '>'.
		return s.comment(untilClose(b, i+1))
	}
}

// text makes b[pos:end] a text token.
func (s *scanner) text(end int) tokenKind {
	if end <= s.pos {
		return s.eof()
	}
	s.ds, s.de = s.pos, end
	s.end, s.pos = end, end
	if end-s.start >= s.max {
		// The Tokenizer returns what it read of the run, then fails.
		s.de = s.start + s.max
		s.pos, s.end = s.de, s.de
		s.tooLong = true
	}
	return tokText
}

func (s *scanner) eof() tokenKind {
	s.done = true
	return tokEOF
}

// comment makes b[pos:end] a comment token.
func (s *scanner) comment(end int) tokenKind {
	if end-s.start >= s.max {
		s.done = true
		return tokTooLong
	}
	s.end, s.pos = end, end
	return tokComment
}

// untilClose returns the index after the first '>' from b[i:], or len(b).
func untilClose(b []byte, i int) int {
	if j := bytes.IndexByte(b[i:], '>'); j >= 0 {
		return i + j + 1
	}
	return len(b)
}

// markup reads a token starting "<!" at b[i:]: a comment, a doctype or a
// bogus comment, all of which end at the first '>' except a comment.
func (s *scanner) markup(i int) tokenKind {
	b := s.b
	if i+3 < len(b) && b[i+2] == '-' && b[i+3] == '-' {
		return s.comment(commentEnd(b, i+4))
	}
	return s.comment(untilClose(b, i+2))
}

// commentEnd returns the end of a comment whose data starts at b[i:],
// after "<!--": "-->", "--!>", or a '>' right at the start ("<!-->",
// "<!--->"); the end of the page if none.
func commentEnd(b []byte, i int) int {
	dashes := 0
	beginning := true
	for i < len(b) {
		c := b[i]
		i++
		switch c {
		case '-':
			dashes++
			continue
		case '>':
			if dashes >= 2 || beginning {
				return i
			}
		case '!':
			if dashes >= 2 {
				if i >= len(b) {
					return i
				}
				c = b[i]
				i++
				if c == '>' {
					return i
				}
				if c == '-' {
					dashes, beginning = 1, false
					continue
				}
			}
		default:
			// Skip to the next byte that can end the comment.
			if j := bytes.IndexAny(b[i:], "->!"); j > 0 {
				i += j
			} else if j < 0 {
				return len(b)
			}
		}
		dashes, beginning = 0, false
	}
	return len(b)
}

// endTag reads a token starting "</" at b[i:].
func (s *scanner) endTag(i int) tokenKind {
	b := s.b
	if i+2 >= len(b) {
		// "</" ends the page: text.
		return s.text(len(b))
	}
	switch c := b[i+2]; {
	case c == '>':
		return s.comment(i + 3)
	case isLetter(c):
		nameEnd, end, ok := s.tag(i + 2)
		if !ok {
			return s.cut(i)
		}
		if end-s.start >= s.max {
			s.done = true
			return tokTooLong
		}
		s.ds, s.de = i+2, nameEnd
		s.end, s.pos = end, end
		s.id = lookupTag(b[i+2 : nameEnd])
		return tokEnd
	}
	return s.comment(untilClose(b, i+2))
}

// cut ends the scan at a tag that the page's end cuts off: the Tokenizer
// reads no token from it.
func (s *scanner) cut(i int) tokenKind {
	s.done = true
	if len(s.b)-i >= s.max {
		return tokTooLong
	}
	return tokEOF
}

// startTag reads a start tag at b[i:], its name starting at b[i+1].
func (s *scanner) startTag(i int) tokenKind {
	nameEnd, end, ok := s.tag(i + 1)
	if !ok {
		return s.cut(i)
	}
	if end-s.start >= s.max {
		s.done = true
		return tokTooLong
	}
	s.ds, s.de = i+1, nameEnd
	s.end, s.pos = end, end
	s.id = lookupTag(s.b[i+1 : nameEnd])
	if tagFlags[s.id]&tagRawText != 0 {
		s.rawTag = tagNames[s.id]
	}
	if s.b[end-2] == '/' && !s.slashInLastValue(nameEnd, end) {
		return tokSelfClosing
	}
	return tokStart
}

// slashInLastValue reports whether the '/' before the '>' that ends the
// tag b[:end] is the last byte of the value of the tag's last attribute
// kept (the Tokenizer keeps the first of those of one name): <a href=/>
// is not self-closing. Rare: only tags ending "/>" ask.
func (s *scanner) slashInLastValue(nameEnd, end int) bool {
	type span struct{ key, val []byte }
	var buf [16]span
	kept := buf[:0]
	eachAttr(s.b[:end], nameEnd, func(k, v []byte) bool {
		if len(k) == 0 {
			return true
		}
		for _, a := range kept {
			if asciiFoldEqual(a.key, k) {
				return true
			}
		}
		kept = append(kept, span{k, v})
		return true
	})
	if len(kept) == 0 {
		return false
	}
	v := kept[len(kept)-1].val
	// The value's end, as an index into b.
	ve := cap(s.b[:end]) - cap(v) + len(v)
	return end-2 == ve-1
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f'
}

// tag reads a tag whose name starts at b[i] (its first byte already
// taken as the name's), and returns the end of the name and the index
// after the closing '>', as the Tokenizer's readTag reads it: a '>'
// inside a quoted attribute value does not end the tag. ok is false when
// the page ends first.
func (s *scanner) tag(i int) (nameEnd, end int, ok bool) {
	b := s.b
	p := i + 1
	for p < len(b) && !isSpaceByte(b[p]) && b[p] != '/' && b[p] != '>' {
		p++
	}
	if p >= len(b) {
		return 0, 0, false
	}
	nameEnd = p
	if isSpaceByte(b[p]) {
		p++
	}
	for {
		for p < len(b) && isSpaceByte(b[p]) {
			p++
		}
		if p >= len(b) {
			return 0, 0, false
		}
		if b[p] == '>' {
			return nameEnd, p + 1, true
		}
		// The key runs to '=', white space, '/' or '>'; an '=' first is
		// part of it.
		ks := p
		for p < len(b) {
			c := b[p]
			if c == '=' && p == ks {
				p++
				continue
			}
			if c == '=' || isSpaceByte(c) || c == '/' || c == '>' {
				break
			}
			p++
		}
		if p >= len(b) {
			return 0, 0, false
		}
		// The value.
		for p < len(b) && isSpaceByte(b[p]) {
			p++
		}
		if p >= len(b) {
			return 0, 0, false
		}
		switch b[p] {
		case '/':
			p++
		case '=':
			p++
			for p < len(b) && isSpaceByte(b[p]) {
				p++
			}
			if p >= len(b) {
				return 0, 0, false
			}
			switch q := b[p]; q {
			case '>':
			case '\'', '"':
				j := bytes.IndexByte(b[p+1:], q)
				if j < 0 {
					return 0, 0, false
				}
				p += j + 2
			default:
				p++
				for p < len(b) && !isSpaceByte(b[p]) && b[p] != '>' {
					p++
				}
				if p >= len(b) {
					return 0, 0, false
				}
				if b[p] != '>' {
					p++
				}
			}
		}
	}
}

// eachAttr calls f with the key and the raw (undecoded) value of each
// attribute of a tag from raw[i:], the index after the tag's name, until
// f returns false or the tag ends.
func eachAttr(raw []byte, i int, f func(key, val []byte) bool) {
	for {
		i = skipSpace(raw, i)
		if i >= len(raw) || raw[i] == '>' {
			return
		}
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
		vs, ve := i, i
		if i = skipSpace(raw, i); i < len(raw) {
			switch raw[i] {
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
		if !f(key, raw[vs:ve]) {
			return
		}
	}
}

// asciiFoldEqual reports whether a and b are equal with ASCII letters
// folded, as the Tokenizer compares attribute names.
func asciiFoldEqual(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

// rawTextEnd returns where the raw text or RCDATA content of the element
// tag (lowercase) that starts at b[i:] ends: before "</tag" followed by
// white space, '/' or '>', or at the end of the page.
func rawTextEnd(b []byte, i int, tag string) int {
	for {
		j := bytes.Index(b[i:], []byte("</"))
		if j < 0 {
			return len(b)
		}
		i += j
		if isRawEndTag(b, i, tag) {
			return i
		}
		i += 2
	}
}

// isRawEndTag reports whether b[i:] starts "</tag" (ASCII case folded)
// followed by white space, '/' or '>'.
func isRawEndTag(b []byte, i int, tag string) bool {
	k := i + 2
	if k+len(tag) >= len(b) {
		return false
	}
	for n := 0; n < len(tag); n++ {
		c := b[k+n]
		if c != tag[n] && c != tag[n]-('a'-'A') {
			return false
		}
	}
	switch b[k+len(tag)] {
	case ' ', '\n', '\r', '\t', '\f', '/', '>':
		return true
	}
	return false
}

// scriptEnd returns where the content of a <script> that starts at b[i:]
// ends, following HTML's script data states: a "</script" inside an
// escaped "<!-- <script> ... </script>" does not end it.
func scriptEnd(b []byte, i int) int {
	const (
		data = iota
		escaped
		escapedDash
		escapedDashDash
		double
		doubleDash
		doubleDashDash
	)
	state := data
	n := len(b)
	for i < n {
		switch state {
		case data:
			j := bytes.IndexByte(b[i:], '<')
			if j < 0 {
				return n
			}
			i += j + 1
			if i >= n {
				return n
			}
			switch b[i] {
			case '/':
				if isRawEndTag(b, i-1, "script") {
					return i - 1
				}
				i++
			case '!':
				// "<!--" starts the escaped state; "<!-" or "<!" and
				// anything else is data, read again.
				i++
				if i < n && b[i] == '-' {
					i++
					if i < n && b[i] == '-' {
						i++
						state = escapedDashDash
					}
				}
			}
		case escaped, escapedDash, escapedDashDash:
			c := b[i]
			i++
			switch c {
			case '-':
				if state == escaped {
					state = escapedDash
				} else {
					state = escapedDashDash
				}
				continue
			case '>':
				if state == escapedDashDash {
					state = data
					continue
				}
			case '<':
				if i >= n {
					return n
				}
				switch c := b[i]; {
				case c == '/':
					if isRawEndTag(b, i-1, "script") {
						return i - 1
					}
					i++
					state = escaped
					continue
				case isLetter(c):
					if i+len("script") < n && asciiLowerEqual(b[i:i+len("script")], "script") {
						switch b[i+len("script")] {
						case ' ', '\n', '\r', '\t', '\f', '/', '>':
							i += len("script") + 1
							state = double
							continue
						}
					}
					state = escaped
					continue
				}
				// Anything else is script data again, read anew (as
				// the Tokenizer does).
				state = data
				continue
			}
			state = escaped
		case double, doubleDash, doubleDashDash:
			c := b[i]
			i++
			switch c {
			case '-':
				if state == double {
					state = doubleDash
				} else {
					state = doubleDashDash
				}
				continue
			case '>':
				if state == doubleDashDash {
					state = data
					continue
				}
			case '<':
				if i < n && b[i] == '/' {
					if isRawEndTag(b, i-1, "script") {
						i += 1 + len("script") + 1
						state = escaped
						continue
					}
					i++
				}
			}
			state = double
		}
	}
	return n
}
