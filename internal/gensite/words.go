package gensite

import (
	"strings"
)

// vocab is a site's language: pseudo-words built from syllables drawn per
// seed, so that every seed reads differently and no crawler heuristic can
// key on a fixed word list. Content words are sampled with a skewed
// frequency, as in natural text; names are handed out once each so that
// entity slugs never collide.
type vocab struct {
	onsets, nuclei, codas []string
	words                 []string // content words, most frequent first
	fn                    []string // short function words
	used                  map[string]bool
}

var (
	allOnsets = []string{"b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z",
		"br", "tr", "st", "ch", "sh", "th", "gr", "pl", "kr", "dr", "fl", "sk", "sl", "qu", "gl", "sp"}
	allNuclei = []string{"a", "e", "i", "o", "u", "a", "e", "o", "ai", "ea", "ou", "y", "ie", "oa", "au", "ei"}
	allCodas  = []string{"n", "r", "s", "l", "m", "nd", "st", "rk", "th", "x", "t", "ng", "ll", "sh", "ck", "rt"}
)

// reservedWords are route words of some drawn surface; generated names
// avoid them so that a slug never reads as a path keyword.
var reservedWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`page pages p pg tag tags t topic topics amp print view
		sort order feed about contact privacy terms help faq shop store catalog products product item
		news archive archives author authors by section category search index sitemap wiki w doc
		edit raw history diff rev info source backlinks backlink members member forum threads thread
		posts post print unread all new c s f d a r v x y q u e i o lo hi asc desc kb
		shipping returns imprint advertise newsletter corrections jobs rules cookies legal team
		browse collections story stories articles tagged robots admin login logout reply quote`) {
		reservedWords[w] = true
	}
}

func newVocab(r *rng) *vocab {
	v := &vocab{used: map[string]bool{}}
	v.onsets = sample(r, allOnsets, r.between(9, 15))
	v.nuclei = sample(r, allNuclei, r.between(4, 7))
	v.codas = sample(r, allCodas, r.between(3, 6))
	seen := map[string]bool{}
	nfn := r.between(14, 20)
	for len(v.fn) < nfn {
		w := v.syllable(r, false)
		if len(w) < 2 || len(w) > 4 || seen[w] {
			continue
		}
		seen[w] = true
		v.fn = append(v.fn, w)
	}
	for len(v.words) < 2400 {
		n := 1 + r.skewed(3, 1.2)
		w := v.make(r, n)
		if len(w) < 3 || seen[w] {
			continue
		}
		seen[w] = true
		v.words = append(v.words, w)
	}
	return v
}

func (v *vocab) syllable(r *rng, coda bool) string {
	s := ""
	if r.chance(0.85) {
		s = pick(r, v.onsets)
	}
	s += pick(r, v.nuclei)
	if coda && r.chance(0.45) {
		s += pick(r, v.codas)
	}
	return s
}

func (v *vocab) make(r *rng, syl int) string {
	var b strings.Builder
	for i := 0; i < syl; i++ {
		b.WriteString(v.syllable(r, i == syl-1 || r.chance(0.2)))
	}
	return b.String()
}

// word returns a content word, frequent words more often.
func (v *vocab) word(r *rng) string { return v.words[r.skewed(len(v.words), 2.2)] }

// name returns a fresh word of 2–3 syllables never handed out before and
// not a route keyword.
func (v *vocab) name(r *rng) string {
	for {
		w := v.make(r, r.between(2, 3))
		if len(w) < 4 || len(w) > 11 || v.used[w] || reservedWords[w] {
			continue
		}
		v.used[w] = true
		return w
	}
}

// claim marks w as handed out; it reports false if it already was.
func (v *vocab) claim(w string) bool {
	if v.used[w] {
		return false
	}
	v.used[w] = true
	return true
}

func title(w string) string {
	if w == "" {
		return w
	}
	return strings.ToUpper(w[:1]) + w[1:]
}

// titleWords capitalises every word of s.
func titleWords(s string) string {
	f := strings.Fields(s)
	for i, w := range f {
		f[i] = title(w)
	}
	return strings.Join(f, " ")
}

// phrase returns n content words, the first capitalised.
func (v *vocab) phrase(r *rng, n int) string {
	ws := make([]string, n)
	for i := range ws {
		if i > 0 && i < n-1 && r.chance(0.25) {
			ws[i] = pick(r, v.fn)
		} else {
			ws[i] = v.words[r.skewed(len(v.words)/2, 1.3)]
		}
	}
	ws[0] = title(ws[0])
	return strings.Join(ws, " ")
}

// sentenceWords returns the words of one sentence (without punctuation).
func (v *vocab) sentenceWords(r *rng) []string {
	n := r.between(7, 18)
	ws := make([]string, n)
	for i := range ws {
		ws[i] = v.pickWord(r)
	}
	return ws
}

// pickWord returns a function word about a third of the time, else a
// content word.
func (v *vocab) pickWord(r *rng) string {
	if r.chance(0.32) {
		return pick(r, v.fn)
	}
	return v.word(r)
}

// appendSentence appends words as a sentence: capitalised, a comma in the
// middle of long ones, a full stop.
func appendSentence(b []byte, ws []string) []byte {
	for i, w := range ws {
		if i > 0 {
			b = append(b, ' ')
		}
		if i == 0 && w != "" && w[0] >= 'a' && w[0] <= 'z' {
			b = append(b, w[0]-'a'+'A')
			b = append(b, w[1:]...)
		} else {
			b = append(b, w...)
		}
		if i == len(ws)/2 && len(ws) > 10 {
			b = append(b, ',')
		}
	}
	return append(b, '.')
}

func joinSentence(ws []string) string { return string(appendSentence(nil, ws)) }

func (v *vocab) sentence(r *rng) string { return joinSentence(v.sentenceWords(r)) }

// appendRandomSentence appends a drawn sentence without building a slice.
func (v *vocab) appendRandomSentence(b []byte, r *rng) []byte {
	n := r.between(7, 18)
	for i := 0; i < n; i++ {
		w := v.pickWord(r)
		if i > 0 {
			b = append(b, ' ')
			b = append(b, w...)
		} else {
			b = append(b, w[0]-'a'+'A')
			b = append(b, w[1:]...)
		}
		if i == n/2 && n > 10 {
			b = append(b, ',')
		}
	}
	return append(b, '.')
}

// paragraph returns 3–6 sentences; lead, when not empty, opens it so that a
// page's text mentions its own subject.
func (v *vocab) paragraph(r *rng, lead string) string {
	n := r.between(3, 6)
	b := make([]byte, 0, 512)
	if lead != "" {
		ws := v.sentenceWords(r)
		b = appendSentence(b, append(strings.Fields(strings.ToLower(lead)), ws[:len(ws)/2+1]...))
		n--
	}
	for i := 0; i < n; i++ {
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = v.appendRandomSentence(b, r)
	}
	return string(b)
}

// prose returns n paragraphs; the first opens with subject.
func (v *vocab) prose(r *rng, n int, subject string) []string {
	ps := make([]string, n)
	for i := range ps {
		lead := ""
		if i == 0 {
			lead = subject
		}
		ps[i] = v.paragraph(r, lead)
	}
	return ps
}

// snippet is a one-line teaser of about a dozen words.
func (v *vocab) snippet(r *rng) string {
	ws := v.sentenceWords(r)
	if len(ws) > 12 {
		ws = ws[:12]
	}
	return joinSentence(ws)
}

// slug lowercases s and joins its words with '-'.
func slug(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), "-") }
