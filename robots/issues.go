package robots

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Issue is a line of a robots.txt file that was ignored, or used but read
// leniently, and why. Tools such as a robots.txt tester show them.
type Issue struct {
	Line    int    `json:"line"`    // 1-based; 0 for the file as a whole
	Text    string `json:"text"`    // the line as read (at most 200 bytes; "" for Line 0)
	Reason  string `json:"reason"`  // why, in a few words
	Ignored bool   `json:"ignored"` // the line was ignored; false when it was used
}

// maxIssueText bounds the text kept of each line with an issue.
const maxIssueText = 200

type issueKind uint8

const (
	_ issueKind = iota
	issueTooLarge
	issueUTF16LE
	issueUTF16BE
	issueUTF16LENoBOM
	issueUTF16BENoBOM
	issueLongLine
	issueNotRecord
	issueUnknown
	issueUnsupportedHost
	issueUnsupportedNoindex
	issueUnsupportedOther
	issueTypo
	issueNoColon
	issueOutsideGroup
	issueBadDelay
	issueSecondDelay
	issueEmpty
	issueSitemapRelative
	issueEmptyAgent
	issueBadAgent
	issueAgentCut
	issueCleanParamEmpty
	issueCleanParamSyntax
	issueCleanParamLong
)

var issueReasons = [...]struct {
	reason  string
	ignored bool
}{
	issueTooLarge:           {"file larger than " + strconv.Itoa(MaxSize) + " bytes: the rest was ignored (RFC 9309 §2.5)", false},
	issueUTF16LE:            {"file is UTF-16 (little-endian, with byte order mark): read after converting to UTF-8", false},
	issueUTF16BE:            {"file is UTF-16 (big-endian, with byte order mark): read after converting to UTF-8", false},
	issueUTF16LENoBOM:       {"file looks like UTF-16 (little-endian, no byte order mark): read after converting to UTF-8", false},
	issueUTF16BENoBOM:       {"file looks like UTF-16 (big-endian, no byte order mark): read after converting to UTF-8", false},
	issueLongLine:           {"line longer than " + strconv.Itoa(maxLineLen) + " bytes: cut", false},
	issueNotRecord:          {"not a record (no \"name: value\")", true},
	issueUnknown:            {"unknown directive", true},
	issueUnsupportedHost:    {"Host is Yandex's and obsolete", true},
	issueUnsupportedNoindex: {"Noindex/Nofollow are not robots.txt rules (Google dropped them in 2019)", true},
	issueUnsupportedOther:   {"Request-rate and Visit-time are not supported", true},
	issueTypo:               {"misspelled directive name, read as the directive it resembles", false},
	issueNoColon:            {"no colon after the directive name, read anyway", false},
	issueOutsideGroup:       {"record before the first User-agent line (RFC 9309 §2.1)", true},
	issueBadDelay:           {"Crawl-delay is not a number of seconds", true},
	issueSecondDelay:        {"second Crawl-delay in the group (the first counts)", true},
	issueEmpty:              {"empty value", true},
	issueSitemapRelative:    {"Sitemap is not a fully qualified URL (RFC 9309 §2.2.4)", false},
	issueEmptyAgent:         {"empty User-agent names no crawler", true},
	issueBadAgent:           {"User-agent is not a product token (letters, \"-\", \"_\"): names no crawler", true},
	issueAgentCut:           {"only the product token before the first other character counts", false},
	issueCleanParamEmpty:    {"Clean-param without parameters", true},
	issueCleanParamSyntax:   {"Clean-param is not \"p1&p2 [path-prefix]\"", true},
	issueCleanParamLong:     {"Clean-param longer than 500 characters (Yandex's limit)", true},
}

type issue struct {
	line      uint32
	kind      issueKind
	text, len uint32 // the line in Robots.text
}

// Issues returns the lines that were ignored or read leniently, in line
// order, after the issues of the file as a whole (Line 0). A nil Robots
// has none.
func (r *Robots) Issues() []Issue {
	if r == nil || len(r.issues) == 0 {
		return nil
	}
	out := make([]Issue, len(r.issues))
	for i, is := range r.issues {
		why := issueReasons[is.kind]
		out[i] = Issue{Line: int(is.line), Text: r.text[is.text : is.text+is.len], Reason: why.reason, Ignored: why.ignored}
	}
	return out
}

func (p *parser) issue(num int, line []byte, kind issueKind) {
	if len(line) > maxIssueText {
		line = cutLine(line, maxIssueText)
	}
	is := issue{line: uint32(num), kind: kind}
	if len(line) > 0 {
		is.text, is.len = p.off(line), uint32(len(line))
	}
	p.issues = append(p.issues, is)
}

func (p *parser) fileIssue(kind issueKind) { p.issue(0, nil, kind) }

// unknownKind names the directives that are known but not robots.txt
// rules, for a better reason than "unknown".
func unknownKind(key []byte) issueKind {
	var buf [16]byte
	if len(key) > len(buf) {
		return issueUnknown
	}
	switch string(lowerBytes(buf[:0], key)) {
	case "host":
		return issueUnsupportedHost
	case "noindex", "nofollow":
		return issueUnsupportedNoindex
	case "request-rate", "visit-time":
		return issueUnsupportedOther
	}
	return issueUnknown
}

// fromUTF16 returns body converted to UTF-8 when it is UTF-16: it starts
// with a UTF-16 byte order mark, or (without one) its first bytes are ASCII
// characters alternating with NUL bytes. Otherwise it returns kind 0.
func fromUTF16(body []byte) ([]byte, issueKind) {
	var bigEndian bool
	var kind issueKind
	switch {
	case len(body) >= 2 && body[0] == 0xFF && body[1] == 0xFE:
		kind, body = issueUTF16LE, body[2:]
	case len(body) >= 2 && body[0] == 0xFE && body[1] == 0xFF:
		kind, body, bigEndian = issueUTF16BE, body[2:], true
	case looksUTF16(body, 1):
		kind = issueUTF16LENoBOM
	case looksUTF16(body, 0):
		kind, bigEndian = issueUTF16BENoBOM, true
	default:
		return nil, 0
	}
	units := make([]uint16, len(body)/2) // an odd last byte is dropped
	for i := range units {
		a, b := uint16(body[2*i]), uint16(body[2*i+1])
		if bigEndian {
			units[i] = a<<8 | b
		} else {
			units[i] = b<<8 | a
		}
	}
	out := make([]byte, 0, len(units)+len(units)/4)
	for _, r := range utf16.Decode(units) {
		out = utf8.AppendRune(out, r)
	}
	return out, kind
}

// looksUTF16 reports whether body starts with at least 8 characters of
// UTF-16 ASCII: every byte at an index with parity zeroAt a NUL, every
// other byte printable ASCII or a line break. A robots.txt in UTF-8 never
// has NUL bytes in its first line, so this does not misfire on real files.
func looksUTF16(body []byte, zeroAt int) bool {
	n := min(len(body), 64) &^ 1
	if n < 16 {
		return false
	}
	for i := 0; i < n; i++ {
		c := body[i]
		if i&1 == zeroAt {
			if c != 0 {
				return false
			}
		} else if c != '\n' && c != '\r' && c != '\t' && (c < ' ' || c > '~') {
			return false
		}
	}
	return true
}
