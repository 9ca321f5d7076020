package extract

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"golang.org/x/net/html"
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
// <noembed>, <noframes> or <svg>; <title> counts. Block-level
// tags separate words; inline ones (<b>, <a>, <span>, ...) do not.
//
// The text is at most Options.MaxText bytes; past that, or when a token is
// longer than Options.MaxToken, the text so far is returned with an error
// wrapping ErrTextTooLong or ErrTokenTooLong.
func (o Options) Text(body []byte) ([]byte, error) {
	maxToken := o.MaxToken
	if maxToken <= 0 {
		maxToken = DefaultMaxToken
	}
	maxText := o.MaxText
	if maxText <= 0 {
		maxText = DefaultMaxText
	}
	body, enc, _ := o.decodeUpfront(body)
	if enc == nil && !bytes.HasPrefix(body, []byte("\xEF\xBB\xBF")) {
		if _, name, _ := charsetDetermine(body, o.ContentType); name != "utf-8" && name != "" {
			enc = charsetEncoding(name)
		}
	}
	if enc != nil {
		body = transcode(body, enc)
	}
	z := html.NewTokenizer(bytes.NewReader(body))
	z.SetMaxBuf(maxToken)
	out := make([]byte, 0, min(len(body)/2, maxText)+16)
	skip := 0 // depth inside elements whose text is not shown
	space := true
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if e := z.Err(); e != io.EOF {
				if errors.Is(e, html.ErrBufferExceeded) {
					return trimSpace(out), fmt.Errorf("%w (%d bytes): %w", ErrTokenTooLong, maxToken, e)
				}
				return trimSpace(out), fmt.Errorf("extract: %w", e)
			}
			return trimSpace(out), nil
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			if hidden(name) {
				switch tt {
				case html.StartTagToken:
					skip++
				case html.EndTagToken:
					if skip > 0 {
						skip--
					}
				}
				continue
			}
			if !inline(name) && !space {
				out, space = append(out, ' '), true
			}
		case html.TextToken:
			if skip > 0 {
				continue
			}
			for _, c := range z.Text() {
				if isSpace(c) {
					if !space {
						out, space = append(out, ' '), true
					}
					continue
				}
				out, space = append(out, c), false
			}
			if len(out) > maxText {
				return trimSpace(out[:maxText]), fmt.Errorf("%w (%d bytes)", ErrTextTooLong, maxText)
			}
		}
	}
}

func trimSpace(b []byte) []byte { return bytes.TrimRight(b, " ") }

func hidden(name []byte) bool {
	switch string(name) {
	case "script", "style", "template", "noscript", "iframe", "noembed", "noframes", "svg":
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
