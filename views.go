package gentlecrawl

import (
	"bytes"
	"hash/maphash"
	"sync"

	"github.com/gentlecrawl/gentlecrawl/internal/simhash"
	"github.com/gentlecrawl/gentlecrawl/internal/urlspace"
)

// viewIndex finds pages that are another page in other chrome — a print
// view, an AMP or mobile page, a "highlight" link, a reply form around the
// same post — by their main text: the page's long blocks of text
// (paragraphs, posts), boilerplate aside. A block seen on two pages of a
// host is boilerplate (a footer's notice, a sidebar's blurb) and is left
// out of both's main text from then on; a page most of whose remaining
// long blocks are those of one page fetched before is a view of it.
//
// Memory is bounded: maxViewBlocks blocks (the oldest forgotten first)
// and the URLs of the last maxViewPages pages.
type viewIndex struct {
	mu     sync.Mutex
	blocks *urlspace.FIFOMap[uint64, uint32] // host ⊕ block → seq of the page it was first on, or common
	urls   []string                          // by seq % maxViewPages
	seq    uint32
}

const (
	maxViewBlocks = 1 << 17
	maxViewPages  = 1 << 15
	// A long block has minBlockWords words; a page is judged a view when
	// its long blocks not common to the host have minViewWords words and
	// one earlier page has viewShare of them.
	minBlockWords = 12
	// maxBlocksPerPage bounds the long blocks read of one page: its main
	// text is told by its first ones, and a long page costs no more.
	maxBlocksPerPage = 64
	minViewWords     = 40
	viewShareNum     = 4 // of 5
	common           = 0 // a block seen on two pages: boilerplate
)

// viewSeed seeds the hashes of blocks: the index lives in memory only.
var viewSeed = maphash.MakeSeed()

var spaceByte = []byte{' '}

type viewBlock struct {
	key   uint64
	words int
}

// viewOf records the page at own (of the host hashed as host) with its
// text (extract's, one block a line), and returns the URL of the page
// fetched before whose view it is, or "", and the words of the page's
// main text: its long blocks that are not the host's boilerplate.
func (v *viewIndex) viewOf(host uint64, own string, text []byte) (of string, mainWords int) {
	var blocks []viewBlock
	for len(text) > 0 && len(blocks) < maxBlocksPerPage {
		line := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		// extract's text has its white space collapsed: a line's words
		// are its spaces and one, and the line is hashed as it is.
		line = bytes.TrimSpace(line)
		if len(line) < 2*minBlockWords-1 {
			continue
		}
		if words := bytes.Count(line, spaceByte) + 1; words >= minBlockWords {
			blocks = append(blocks, viewBlock{key: simhash.Mix(maphash.Bytes(viewSeed, line) ^ host), words: words})
		}
	}
	if len(blocks) == 0 {
		return "", 0
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.blocks == nil {
		v.blocks = urlspace.NewFIFOMap[uint64, uint32](maxViewBlocks)
		v.urls = make([]string, maxViewPages)
	}
	v.seq++
	if v.seq == common {
		v.seq++
	}
	seq := v.seq
	v.urls[seq%maxViewPages] = own
	var main, best int
	var bestSeq uint32
	type count struct {
		seq   uint32
		words int
	}
	var tallyBuf [maxBlocksPerPage]count
	tally := tallyBuf[:0] // words shared with each earlier page

	for _, b := range blocks {
		e, ok := v.blocks.Get(b.key)
		switch {
		case !ok:
			v.blocks.Put(b.key, seq)
			main += b.words
		case e == common:
		case e == seq:
			main += b.words // the same block twice on the page
		default:
			main += b.words
			i := 0
			for i < len(tally) && tally[i].seq != e {
				i++
			}
			if i == len(tally) {
				tally = append(tally, count{seq: e})
			}
			tally[i].words += b.words
			if tally[i].words > best {
				best, bestSeq = tally[i].words, e
			}
			v.blocks.Put(b.key, common)
		}
	}
	if main < minViewWords || best*5 < main*viewShareNum || seq-bestSeq >= maxViewPages {
		return "", main
	}
	if of := v.urls[bestSeq%maxViewPages]; of != own {
		return of, main
	}
	return "", main
}
