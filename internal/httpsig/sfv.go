package httpsig

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file is a strict parser and serializer of Structured Field Values
// (RFC 9651, which obsoletes RFC 8941), enough of it for HTTP Message
// Signatures: Dictionaries, Inner Lists, Items and Parameters, with every
// bare item type (Integer, Decimal, String, Token, Byte Sequence, Boolean,
// Date, Display String). It follows the parsing algorithms of RFC 9651
// §4.2 step by step, and bounds what one field may hold (Limits), since
// its input comes from strangers.

// Token is a bare item of type Token (RFC 9651 §3.3.4).
type Token string

// Decimal is a bare item of type Decimal (RFC 9651 §3.3.2), kept exactly as
// thousandths: at most 12 integer and 3 fractional digits.
type Decimal int64

// Date is a bare item of type Date (RFC 9651 §3.3.7): seconds since 1970.
type Date int64

// DisplayString is a bare item of type Display String (RFC 9651 §3.3.8).
type DisplayString string

// A bare item is one of: int64, Decimal, string, Token, []byte, bool, Date,
// DisplayString.
type BareItem any

// Param is one parameter of an item or inner list.
type Param struct {
	Key   string
	Value BareItem
}

// Params are parameters in the order received (RFC 9651 §3.1.2); a key
// given twice keeps its first place and its last value.
type Params []Param

// Get returns the value of key, if present.
func (ps Params) Get(key string) (BareItem, bool) {
	for _, p := range ps {
		if p.Key == key {
			return p.Value, true
		}
	}
	return nil, false
}

func (ps Params) set(key string, v BareItem) Params {
	for i := range ps {
		if ps[i].Key == key {
			ps[i].Value = v
			return ps
		}
	}
	return append(ps, Param{key, v})
}

// Item is a bare item with parameters.
type Item struct {
	Value  BareItem
	Params Params
}

// InnerList is a list of items with parameters of its own.
type InnerList struct {
	Items  []Item
	Params Params
}

// Member is a Dictionary member: an Item or an InnerList.
type Member struct {
	Key  string
	Item *Item      // one of Item and List is set
	List *InnerList // one of Item and List is set
}

// Dictionary is an ordered map of members (RFC 9651 §3.2); a key given
// twice keeps its first place and its last value.
type Dictionary []Member

// Get returns the member key, if present.
func (d Dictionary) Get(key string) (Member, bool) {
	for _, m := range d {
		if m.Key == key {
			return m, true
		}
	}
	return Member{}, false
}

// Limits bound what one parsed field may hold.
type Limits struct {
	// MaxLen is the most bytes of field value parsed.
	MaxLen int
	// MaxMembers bounds the members of a dictionary, MaxItems the items
	// of an inner list, MaxParams the parameters of an item or list.
	MaxMembers, MaxItems, MaxParams int
}

// DefaultLimits are generous for signatures and small for an attacker: a
// Signature-Input of a few signatures over a few dozen components.
var DefaultLimits = Limits{MaxLen: 8 << 10, MaxMembers: 16, MaxItems: 32, MaxParams: 16}

// ErrTooLarge is wrapped by parse errors caused by a Limits bound.
var ErrTooLarge = errors.New("structured field too large")

// SyntaxError is a field that is not a valid structured field.
type SyntaxError struct {
	Off int    // byte offset in the input
	Msg string // what was wrong
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("structured field: %s at offset %d", e.Msg, e.Off)
}

type parser struct {
	s   string
	i   int
	lim Limits
}

func (p *parser) fail(msg string) error { return &SyntaxError{Off: p.i, Msg: msg} }

func (p *parser) tooLarge(what string, n int) error {
	return fmt.Errorf("%w: more than %d %s", ErrTooLarge, n, what)
}

func (p *parser) eof() bool { return p.i >= len(p.s) }

func (p *parser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *parser) skipSP() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *parser) skipOWS() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func newParser(s string, lim Limits) (*parser, error) {
	if lim.MaxLen <= 0 {
		lim = DefaultLimits
	}
	if len(s) > lim.MaxLen {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, len(s), lim.MaxLen)
	}
	p := &parser{s: s, lim: lim}
	p.skipSP()
	return p, nil
}

// ParseDictionary parses a field value as a Dictionary (RFC 9651 §4.2,
// §4.2.2). Several field lines must first be joined with ", ".
func ParseDictionary(s string, lim Limits) (Dictionary, error) {
	p, err := newParser(s, lim)
	if err != nil {
		return nil, err
	}
	var d Dictionary
	for !p.eof() {
		key, err := p.key()
		if err != nil {
			return nil, err
		}
		var m Member
		if p.peek() == '=' {
			p.i++
			m, err = p.itemOrList()
		} else {
			var params Params
			params, err = p.params()
			m = Member{Item: &Item{Value: true, Params: params}}
		}
		if err != nil {
			return nil, err
		}
		m.Key = key
		replaced := false
		for i := range d {
			if d[i].Key == key {
				d[i], replaced = m, true
				break
			}
		}
		if !replaced {
			if len(d) == p.lim.MaxMembers {
				return nil, p.tooLarge("dictionary members", p.lim.MaxMembers)
			}
			d = append(d, m)
		}
		p.skipOWS()
		if p.eof() {
			break
		}
		if p.s[p.i] != ',' {
			return nil, p.fail("expected a comma between members")
		}
		p.i++
		p.skipOWS()
		if p.eof() {
			return nil, p.fail("trailing comma")
		}
	}
	return d, nil
}

// ParseItem parses a field value as an Item (RFC 9651 §4.2, §4.2.3).
func ParseItem(s string, lim Limits) (Item, error) {
	p, err := newParser(s, lim)
	if err != nil {
		return Item{}, err
	}
	it, err := p.item()
	if err != nil {
		return Item{}, err
	}
	p.skipSP()
	if !p.eof() {
		return Item{}, p.fail("unexpected characters after the item")
	}
	return it, nil
}

func (p *parser) itemOrList() (Member, error) {
	if p.peek() == '(' {
		l, err := p.innerList()
		return Member{List: &l}, err
	}
	it, err := p.item()
	return Member{Item: &it}, err
}

func (p *parser) innerList() (InnerList, error) {
	p.i++ // '('
	var l InnerList
	for !p.eof() {
		p.skipSP()
		if p.peek() == ')' {
			p.i++
			params, err := p.params()
			l.Params = params
			return l, err
		}
		it, err := p.item()
		if err != nil {
			return l, err
		}
		if len(l.Items) == p.lim.MaxItems {
			return l, p.tooLarge("inner list items", p.lim.MaxItems)
		}
		l.Items = append(l.Items, it)
		if c := p.peek(); c != ' ' && c != ')' {
			return l, p.fail("expected a space or ')' in an inner list")
		}
	}
	return l, p.fail("inner list not closed")
}

func (p *parser) item() (Item, error) {
	v, err := p.bareItem()
	if err != nil {
		return Item{}, err
	}
	params, err := p.params()
	return Item{Value: v, Params: params}, err
}

func (p *parser) params() (Params, error) {
	var ps Params
	for p.peek() == ';' {
		p.i++
		p.skipSP()
		key, err := p.key()
		if err != nil {
			return nil, err
		}
		var v BareItem = true
		if p.peek() == '=' {
			p.i++
			if v, err = p.bareItem(); err != nil {
				return nil, err
			}
		}
		if _, dup := ps.Get(key); !dup && len(ps) == p.lim.MaxParams {
			return nil, p.tooLarge("parameters", p.lim.MaxParams)
		}
		ps = ps.set(key, v)
	}
	return ps, nil
}

func isLCAlpha(c byte) bool { return c >= 'a' && c <= 'z' }
func isAlpha(c byte) bool   { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool   { return c >= '0' && c <= '9' }

func (p *parser) key() (string, error) {
	if c := p.peek(); p.eof() || !isLCAlpha(c) && c != '*' {
		return "", p.fail("a key must start with a lower-case letter or '*'")
	}
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if !isLCAlpha(c) && !isDigit(c) && c != '_' && c != '-' && c != '.' && c != '*' {
			break
		}
		p.i++
	}
	return p.s[start:p.i], nil
}

func (p *parser) bareItem() (BareItem, error) {
	if p.eof() {
		return nil, p.fail("missing value")
	}
	switch c := p.s[p.i]; {
	case c == '-' || isDigit(c):
		return p.number()
	case c == '"':
		return p.str()
	case c == '*' || isAlpha(c):
		return p.token(), nil
	case c == ':':
		return p.byteSeq()
	case c == '?':
		return p.boolean()
	case c == '@':
		p.i++
		n, err := p.number()
		if err != nil {
			return nil, err
		}
		i, ok := n.(int64)
		if !ok {
			return nil, p.fail("a date must be an integer")
		}
		return Date(i), nil
	case c == '%':
		return p.displayString()
	default:
		return nil, p.fail(fmt.Sprintf("unexpected character %q", c))
	}
}

func (p *parser) number() (BareItem, error) {
	start := p.i
	neg := false
	if p.peek() == '-' {
		neg = true
		p.i++
	}
	if p.eof() || !isDigit(p.s[p.i]) {
		return nil, p.fail("a number must have a digit")
	}
	digits := p.i
	dot := -1
	for p.i < len(p.s) {
		c := p.s[p.i]
		if isDigit(c) {
			p.i++
		} else if c == '.' && dot < 0 {
			if p.i-digits > 12 {
				return nil, p.fail("a decimal has at most 12 integer digits")
			}
			dot = p.i
			p.i++
		} else {
			break
		}
		if dot < 0 && p.i-digits > 15 {
			return nil, p.fail("an integer has at most 15 digits")
		}
		if dot >= 0 && p.i-digits > 16 {
			return nil, p.fail("a decimal has at most 16 characters")
		}
	}
	if dot < 0 {
		n, err := strconv.ParseInt(p.s[digits:p.i], 10, 64)
		if err != nil {
			return nil, &SyntaxError{Off: start, Msg: "bad integer"}
		}
		if neg {
			n = -n
		}
		return n, nil
	}
	frac := p.s[dot+1 : p.i]
	if len(frac) == 0 {
		return nil, p.fail("a decimal must not end with '.'")
	}
	if len(frac) > 3 {
		return nil, p.fail("a decimal has at most 3 fractional digits")
	}
	ip, err := strconv.ParseInt(p.s[digits:dot], 10, 64)
	if err != nil {
		return nil, &SyntaxError{Off: start, Msg: "bad decimal"}
	}
	fp, _ := strconv.ParseInt((frac + "00")[:3], 10, 64)
	n := ip*1000 + fp
	if neg {
		n = -n
	}
	return Decimal(n), nil
}

func (p *parser) str() (BareItem, error) {
	p.i++ // '"'
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '\\':
			if p.eof() {
				return nil, p.fail("string ends in a backslash")
			}
			n := p.s[p.i]
			if n != '"' && n != '\\' {
				return nil, p.fail("only '\"' and '\\' may be escaped in a string")
			}
			b.WriteByte(n)
			p.i++
		case c == '"':
			return b.String(), nil
		case c < 0x20 || c > 0x7e:
			p.i--
			return nil, p.fail("a string holds visible ASCII only")
		default:
			b.WriteByte(c)
		}
	}
	return nil, p.fail("string not closed")
}

func isTchar(c byte) bool {
	if isAlpha(c) || isDigit(c) {
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func (p *parser) token() BareItem {
	start := p.i
	p.i++
	for p.i < len(p.s) && (isTchar(p.s[p.i]) || p.s[p.i] == ':' || p.s[p.i] == '/') {
		p.i++
	}
	return Token(p.s[start:p.i])
}

func (p *parser) byteSeq() (BareItem, error) {
	p.i++ // ':'
	end := strings.IndexByte(p.s[p.i:], ':')
	if end < 0 {
		return nil, p.fail("byte sequence not closed")
	}
	b64 := p.s[p.i : p.i+end]
	for j := 0; j < len(b64); j++ {
		c := b64[j]
		if !isAlpha(c) && !isDigit(c) && c != '+' && c != '/' && c != '=' {
			p.i += j
			return nil, p.fail("not base64 in a byte sequence")
		}
	}
	// RFC 9651 §4.2.7: parsers should not fail on missing '=' padding or
	// non-zero pad bits, which the standard decoder (not Strict) allows.
	enc := base64.StdEncoding
	if strings.IndexByte(b64, '=') < 0 && len(b64)%4 != 0 {
		enc = base64.RawStdEncoding
	}
	out, err := enc.DecodeString(b64)
	if err != nil {
		return nil, p.fail("bad base64 in a byte sequence")
	}
	p.i += end + 1
	return out, nil
}

func (p *parser) boolean() (BareItem, error) {
	p.i++ // '?'
	switch p.peek() {
	case '1':
		p.i++
		return true, nil
	case '0':
		p.i++
		return false, nil
	}
	return nil, p.fail("a boolean is ?0 or ?1")
}

func (p *parser) displayString() (BareItem, error) {
	p.i++ // '%'
	if p.peek() != '"' {
		return nil, p.fail("a display string starts with %\"")
	}
	p.i++
	var b []byte
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c < 0x20 || c > 0x7e:
			return nil, p.fail("a display string holds visible ASCII only")
		case c == '%':
			if p.i+2 >= len(p.s) {
				return nil, p.fail("truncated percent-encoding")
			}
			h, ok1 := unhexLower(p.s[p.i+1])
			l, ok2 := unhexLower(p.s[p.i+2])
			if !ok1 || !ok2 {
				return nil, p.fail("bad percent-encoding (lower-case hex only)")
			}
			b = append(b, h<<4|l)
			p.i += 3
		case c == '"':
			p.i++
			if !utf8.Valid(b) {
				return nil, p.fail("a display string must be UTF-8")
			}
			return DisplayString(b), nil
		default:
			b = append(b, c)
			p.i++
		}
	}
	return nil, p.fail("display string not closed")
}

func unhexLower(c byte) (byte, bool) {
	switch {
	case isDigit(c):
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// Serialization (RFC 9651 §4.1). A value that cannot be serialized (an
// integer out of range, a string with a control character, a key not in
// the key alphabet) is an error.

// SerializeItem serializes an item with its parameters.
func SerializeItem(it Item) (string, error) {
	var b strings.Builder
	err := writeItem(&b, it)
	return b.String(), err
}

// SerializeInnerList serializes an inner list with its parameters.
func SerializeInnerList(l InnerList) (string, error) {
	var b strings.Builder
	err := writeInnerList(&b, l)
	return b.String(), err
}

// SerializeDictionary serializes a dictionary.
func SerializeDictionary(d Dictionary) (string, error) {
	var b strings.Builder
	for i, m := range d {
		if i > 0 {
			b.WriteString(", ")
		}
		if err := writeKey(&b, m.Key); err != nil {
			return "", err
		}
		switch {
		case m.List != nil:
			b.WriteByte('=')
			if err := writeInnerList(&b, *m.List); err != nil {
				return "", err
			}
		case m.Item != nil:
			if v, ok := m.Item.Value.(bool); ok && v {
				if err := writeParams(&b, m.Item.Params); err != nil {
					return "", err
				}
				continue
			}
			b.WriteByte('=')
			if err := writeItem(&b, *m.Item); err != nil {
				return "", err
			}
		default:
			return "", errors.New("structured field: empty dictionary member")
		}
	}
	return b.String(), nil
}

// SerializeMember serializes a dictionary member's value (an item or an
// inner list), as a component with the key parameter covers it (RFC 9421
// §2.1.2).
func SerializeMember(m Member) (string, error) {
	if m.List != nil {
		return SerializeInnerList(*m.List)
	}
	if m.Item != nil {
		return SerializeItem(*m.Item)
	}
	return "", errors.New("structured field: empty dictionary member")
}

func writeInnerList(b *strings.Builder, l InnerList) error {
	b.WriteByte('(')
	for i, it := range l.Items {
		if i > 0 {
			b.WriteByte(' ')
		}
		if err := writeItem(b, it); err != nil {
			return err
		}
	}
	b.WriteByte(')')
	return writeParams(b, l.Params)
}

func writeItem(b *strings.Builder, it Item) error {
	if err := writeBare(b, it.Value); err != nil {
		return err
	}
	return writeParams(b, it.Params)
}

func writeParams(b *strings.Builder, ps Params) error {
	for _, p := range ps {
		b.WriteByte(';')
		if err := writeKey(b, p.Key); err != nil {
			return err
		}
		if v, ok := p.Value.(bool); ok && v {
			continue
		}
		b.WriteByte('=')
		if err := writeBare(b, p.Value); err != nil {
			return err
		}
	}
	return nil
}

func writeKey(b *strings.Builder, k string) error {
	if k == "" || !isLCAlpha(k[0]) && k[0] != '*' {
		return fmt.Errorf("structured field: bad key %q", k)
	}
	for i := 1; i < len(k); i++ {
		c := k[i]
		if !isLCAlpha(c) && !isDigit(c) && c != '_' && c != '-' && c != '.' && c != '*' {
			return fmt.Errorf("structured field: bad key %q", k)
		}
	}
	b.WriteString(k)
	return nil
}

const maxInt = 999_999_999_999_999

func writeBare(b *strings.Builder, v BareItem) error {
	switch v := v.(type) {
	case int64:
		if v > maxInt || v < -maxInt {
			return fmt.Errorf("structured field: integer %d out of range", v)
		}
		b.WriteString(strconv.FormatInt(v, 10))
	case int:
		return writeBare(b, int64(v))
	case Decimal:
		n := int64(v)
		if n < 0 {
			b.WriteByte('-')
			n = -n
		}
		ip, fp := n/1000, n%1000
		if ip > 999_999_999_999 {
			return fmt.Errorf("structured field: decimal %d.%03d out of range", ip, fp)
		}
		b.WriteString(strconv.FormatInt(ip, 10))
		b.WriteByte('.')
		frac := fmt.Sprintf("%03d", fp)
		frac = strings.TrimRight(frac, "0")
		if frac == "" {
			frac = "0"
		}
		b.WriteString(frac)
	case string:
		b.WriteByte('"')
		for i := 0; i < len(v); i++ {
			c := v[i]
			if c < 0x20 || c > 0x7e {
				return fmt.Errorf("structured field: a string holds visible ASCII only (%q)", v)
			}
			if c == '"' || c == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
		}
		b.WriteByte('"')
	case Token:
		if v == "" || !isAlpha(v[0]) && v[0] != '*' {
			return fmt.Errorf("structured field: bad token %q", string(v))
		}
		for i := 1; i < len(v); i++ {
			if c := v[i]; !isTchar(c) && c != ':' && c != '/' {
				return fmt.Errorf("structured field: bad token %q", string(v))
			}
		}
		b.WriteString(string(v))
	case []byte:
		b.WriteByte(':')
		b.WriteString(base64.StdEncoding.EncodeToString(v))
		b.WriteByte(':')
	case bool:
		if v {
			b.WriteString("?1")
		} else {
			b.WriteString("?0")
		}
	case Date:
		if v > maxInt || v < -maxInt {
			return fmt.Errorf("structured field: date %d out of range", int64(v))
		}
		b.WriteByte('@')
		b.WriteString(strconv.FormatInt(int64(v), 10))
	case DisplayString:
		b.WriteString(`%"`)
		for i := 0; i < len(v); i++ {
			c := v[i]
			if c == '%' || c == '"' || c < 0x20 || c > 0x7e {
				fmt.Fprintf(b, "%%%02x", c)
			} else {
				b.WriteByte(c)
			}
		}
		b.WriteByte('"')
	default:
		return fmt.Errorf("structured field: cannot serialize a %T", v)
	}
	return nil
}
