package extract

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"

	"golang.org/x/net/html"
	"golang.org/x/text/encoding"
)

// ErrTextTooLong is returned, wrapped, with the text so far when a page's
// visible text exceeds Options.MaxText.
var ErrTextTooLong = errors.New("extract: text exceeds limit")

// DefaultMaxText is the default Options.MaxText.
const DefaultMaxText = 1 << 20

// Text returns the visible text of an HTML page with the default Options.
func Text(body []byte) ([]byte, error) {
	return Options{}.Text(body)
}

// Text returns the visible text of an HTML page, as UTF-8, for
// near-duplicate detection: the text of the page without markup,
// entities decoded, runs of white space collapsed to one space, and
// nothing of <script>, <style>, <template>, <noscript>, <iframe>,
// <noembed>, <noframes> or <svg>, nor of <textarea>, a form's field (an
// edit form's copy of a page's source, in markup of its own, is no text
// of the page it is on); <title> counts. Block-level
// tags separate words with a newline instead, so that the text's lines
// are the page's blocks; inline ones (<b>, <a>, <span>, ...) do not
// separate words.
//
// The text is at most Options.MaxText bytes; past that, or when a token is
// longer than Options.MaxToken, the text so far is returned with an error
// wrapping ErrTextTooLong or ErrTokenTooLong.
func (o Options) Text(body []byte) ([]byte, error) {
	body = o.textBody(body)
	var s scanner
	s.reset(body, o.maxToken())
	t := o.newTextSink(len(body))
	for {
		k := s.next()
		if !t.token(&s, k) {
			return t.result()
		}
	}
}

// textBody returns the page as UTF-8 for Text.
func (o Options) textBody(body []byte) []byte {
	body, enc, _ := o.decodeUpfront(body)
	body, _ = o.textBodyFrom(body, enc)
	return body
}

// textBodyFrom returns the page as UTF-8 for Text, given what
// decodeUpfront returned; same is true when that is the page as it is.
// A page that declares nothing and is not valid UTF-8 is read as
// windows-1252, the web's default.
func (o Options) textBodyFrom(body []byte, enc encoding.Encoding) (out []byte, same bool) {
	if enc == nil && !bytes.HasPrefix(body, []byte("\xEF\xBB\xBF")) {
		if _, name, _ := charsetDetermine(body, o.ContentType); name != "utf-8" && name != "" {
			enc = charsetEncoding(name)
		}
	}
	if enc != nil {
		return transcode(body, enc), false
	}
	return body, true
}

func (o Options) maxToken() int {
	if o.MaxToken <= 0 {
		return DefaultMaxToken
	}
	return o.MaxToken
}

// textSink gathers the visible text of a page from its tokens.
type textSink struct {
	out      []byte
	max      int // MaxText
	maxToken int
	skip     int  // depth inside elements whose text is not shown
	space    bool // out ends in a space, or is empty
	err      error
	decoded  []byte // scratch for text with entities
	dst      []byte // where result puts the text: Options.TextBuf
}

func (o Options) newTextSink(bodyLen int) *textSink {
	maxText := o.MaxText
	if maxText <= 0 {
		maxText = DefaultMaxText
	}
	t := textSinks.Get().(*textSink)
	*t = textSink{out: t.out[:0], decoded: t.decoded[:0], max: maxText, maxToken: o.maxToken(), space: true, dst: o.TextBuf}
	return t
}

// textSinks keeps the buffers text is gathered in from page to page: the
// text returned is copied out at its size, where a buffer sized for the
// page was most of what reading a page allocated.
var textSinks = sync.Pool{New: func() any { return new(textSink) }}

// token takes the scanner's current token, of kind k, and reports
// whether to go on.
func (t *textSink) token(s *scanner, k tokenKind) bool {
	switch k {
	case tokEOF:
		return false
	case tokTooLong:
		t.err = fmt.Errorf("%w (%d bytes): %w", ErrTokenTooLong, t.maxToken, html.ErrBufferExceeded)
		return false
	case tokStart, tokEnd, tokSelfClosing:
		f := tagFlags[s.id]
		if f&tagHidden != 0 {
			switch k {
			case tokStart:
				t.skip++
			case tokEnd:
				if t.skip > 0 {
					t.skip--
				}
			}
			return true
		}
		if f&tagInline == 0 {
			// A block's end: a newline, so that a reader can tell the
			// page's blocks (paragraphs, list items, cells) apart.
			switch n := len(t.out); {
			case !t.space:
				t.out, t.space = append(t.out, '\n'), true
			case n > 0 && t.out[n-1] == ' ':
				t.out[n-1] = '\n'
			}
		}
	case tokText:
		if t.skip > 0 {
			return true
		}
		data := s.data()
		if !t.collapse(data, !s.textRaw, s.convertNUL) {
			// A character reference to decode or a NUL to replace.
			t.decoded = appendText(t.decoded[:0], data, s.textRaw, s.convertNUL)
			t.collapse(t.decoded, false, false)
		}
		if len(t.out) > t.max {
			t.out = t.out[:t.max]
			t.err = fmt.Errorf("%w (%d bytes)", ErrTextTooLong, t.max)
			return false
		}
	}
	return true
}

// collapse appends text to out with each run of white space made one
// space, and reports true. When refs is set and b holds a '&', or nul is
// set and it holds a NUL byte, it appends nothing and reports false: b
// has to be decoded first. The check costs nothing beside the look at
// each byte collapsing takes.
func (t *textSink) collapse(b []byte, refs, nul bool) bool {
	stop := uint8(textSpace) // the kinds of byte that end a run of plain bytes
	if refs {
		stop |= textAmp
	}
	if nul {
		stop |= textNUL
	}
	// The text only shrinks: made room for first, it is written byte by
	// byte, which for words of a few bytes beats a copy per word.
	out := slices.Grow(t.out, len(b))
	n, space := len(out), t.space
	out = out[:cap(out)]
	for _, c := range b {
		switch textByte[c] & stop {
		case 0:
			out[n] = c
			n++
			space = false
		case textSpace:
			if !space {
				out[n] = ' '
				n++
				space = true
			}
		default:
			return false
		}
	}
	t.out, t.space = out[:n], space
	return true
}

// textByte classifies the bytes collapse looks for.
var textByte = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case isSpace(byte(c)):
			t[c] = textSpace
		case c == '&':
			t[c] = textAmp
		case c == 0:
			t[c] = textNUL
		}
	}
	return t
}()

const (
	textSpace = 1 << iota
	textAmp
	textNUL
)

// result returns the text and the error that cut it short, and gives the
// sink back to the pool.
func (t *textSink) result() ([]byte, error) {
	var text []byte
	if t.dst != nil {
		text = append(t.dst[:0], bytes.TrimRight(t.out, " \n")...)
	} else if text = bytes.Clone(bytes.TrimRight(t.out, " \n")); text == nil {
		text = []byte{}
	}
	err := t.err
	if cap(t.out) > 4<<20 || cap(t.decoded) > 4<<20 {
		t.out, t.decoded = nil, nil // not the buffers of a huge page
	}
	t.err, t.dst = nil, nil
	textSinks.Put(t)
	return text, err
}

// appendText appends the text of a text token as the Tokenizer's Text
// gives it, carriage returns aside (white space to the text): NUL bytes
// made U+FFFD in raw text and RCDATA, and entities decoded unless the
// text is raw.
func appendText(dst, data []byte, textRaw, convertNUL bool) []byte {
	for i := 0; i < len(data); {
		c := data[i]
		switch {
		case c == 0 && convertNUL:
			dst = append(dst, "\uFFFD"...)
			i++
		case c == '&' && !textRaw:
			j := entityEnd(data, i)
			dst = appendEntity(dst, data[i:j])
			i = j
		default:
			dst = append(dst, c)
			i++
		}
	}
	return dst
}

// entityEnd returns the end of what a character reference starting at
// b[i] ('&') may span: "#", "x", letters and digits, and a ';'. The
// Tokenizer decides from those bytes alone (outside attributes).
func entityEnd(b []byte, i int) int {
	j := i + 1
	if j < len(b) && b[j] == '#' {
		j++
		if j < len(b) && (b[j] == 'x' || b[j] == 'X') {
			j++
		}
	}
	for j < len(b) && (isLetter(b[j]) || '0' <= b[j] && b[j] <= '9') {
		j++
	}
	if j < len(b) && b[j] == ';' {
		j++
	}
	return j
}

// appendEntity appends the decoding of ref, a character reference and
// what follows it up to entityEnd, in text.
func appendEntity(dst, ref []byte) []byte {
	switch string(ref) {
	case "&amp;":
		return append(dst, '&')
	case "&lt;":
		return append(dst, '<')
	case "&gt;":
		return append(dst, '>')
	case "&quot;":
		return append(dst, '"')
	case "&#39;", "&apos;", "&#x27;":
		return append(dst, '\'')
	case "&nbsp;":
		return append(dst, "\u00a0"...)
	case "&":
		return append(dst, '&')
	}
	return append(dst, html.UnescapeString(string(ref))...)
}

func hidden(name []byte) bool {
	switch string(name) {
	case "script", "style", "template", "noscript", "iframe", "noembed", "noframes", "svg", "textarea":
		return true
	}
	return false
}

func inline(name []byte) bool {
	switch string(name) {
	case "a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "dfn", "em", "font", "i", "kbd", "mark",
		"q", "s", "samp", "small", "span", "strong", "sub", "sup", "time", "u", "var", "wbr":
		return true
	}
	return false
}
