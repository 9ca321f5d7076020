package extract

// A tag's name is lowercased and looked up once, by the scanner, and what
// the link pass, the text sink and the raw-text rule need to know of the
// element is read from that one lookup. (Each lowercased and compared the
// name itself before: three looks at every tag of a page.)

// tagID numbers the elements that are read apart from others; tagOther
// is any other.
type tagID uint8

const tagOther tagID = 0

// tagNames holds the names with an ID, the ID being the index.
var tagNames = [...]string{"",
	// Read by the link pass.
	"a", "area", "frame", "iframe", "img", "script", "link", "base", "meta", "body", "form", "input",
	// Raw text or RCDATA, hidden, or inline (not read by the pass).
	"noembed", "noframes", "noscript", "plaintext", "style", "textarea", "title", "xmp", "template", "svg",
	"abbr", "b", "bdi", "bdo", "cite", "code", "data", "dfn", "em", "font", "i", "kbd", "mark",
	"q", "s", "samp", "small", "span", "strong", "sub", "sup", "time", "u", "var", "wbr",
}

// maxTagName is the length of the longest name in tagNames.
const maxTagName = len("plaintext")

const (
	tagLinks   = 1 << iota // the link pass reads it (pass.tag)
	tagRawText             // its content to its end tag is raw text or RCDATA
	tagHidden              // its text is not shown (hidden)
	tagInline              // it does not separate words (inline)
)

// tagTable finds a name's ID in one probe: the slot of a name is
// tagSlot of its length and of its first, second and last bytes, and
// init finds a multiplier under which the names of tagNames all have
// slots of their own. (A map lookup for every tag cost more than the
// three looks it replaced.)
var (
	tagTable [1 << tagBits]tagID
	tagMul   uint32
	tagFlags [len(tagNames)]uint8
)

const tagBits = 8

func tagSlot(name []byte, mul uint32) uint32 {
	n := len(name)
	key := uint32(n)<<24 | uint32(lower(name[0]))<<16 | uint32(lower(name[min(1, n-1)]))<<8 | uint32(lower(name[n-1]))
	return key * mul >> (32 - tagBits)
}

func init() {
	for mul := uint32(0x9e3779b1); ; mul += 2 {
		clear(tagTable[:])
		ok := true
		for i, n := range tagNames[1:] {
			slot := tagSlot([]byte(n), mul)
			if tagTable[slot] != tagOther {
				ok = false
				break
			}
			tagTable[slot] = tagID(i + 1)
		}
		if ok {
			tagMul = mul
			break
		}
	}
	for i, n := range tagNames[1:] {
		id := tagID(i + 1)
		switch n {
		case "a", "area", "frame", "iframe", "img", "script", "link", "base", "meta", "body", "form", "input":
			tagFlags[id] |= tagLinks
		}
		switch n {
		case "iframe", "noembed", "noframes", "noscript", "plaintext", "script", "style", "textarea", "title", "xmp":
			tagFlags[id] |= tagRawText
		}
		if hidden([]byte(n)) {
			tagFlags[id] |= tagHidden
		}
		if inline([]byte(n)) {
			tagFlags[id] |= tagInline
		}
	}
}

// lookupTag returns the ID of the tag named name, in any case.
func lookupTag(name []byte) tagID {
	if len(name) == 0 || len(name) > maxTagName {
		return tagOther
	}
	id := tagTable[tagSlot(name, tagMul)]
	if id == tagOther || !asciiLowerEqual(name, tagNames[id]) {
		return tagOther
	}
	return id
}
