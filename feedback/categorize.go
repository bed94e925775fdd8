package feedback

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// A Category is what a reviewer's reason is about.
type Category string

// The categories, in priority order: when a reason matches keywords of
// several, the first wins.
const (
	Examples     Category = "examples"
	Specificity  Category = "specificity"
	Clarity      Category = "clarity"
	Completeness Category = "completeness"
	Relevance    Category = "relevance"
	Other        Category = "other" // no keyword matched
)

// Categories lists the categories in priority order, Other last.
var Categories = []Category{Examples, Specificity, Clarity, Completeness, Relevance, Other}

// Keywords are the built-in keyword lists (the table of
// docs/feedback.md), Portuguese then English. Matching normalises
// both sides (see Normalize), so "não funciona" and "doesn't work" in a
// reason match "nao funciona" and "doesn't work" here.
var Keywords = map[Category]Lists{
	Examples: {
		PT: []string{"exemplo", "errado", "nao funciona", "incorreto", "falha", "quebrado"},
		EN: []string{"example", "wrong", "doesn't work", "incorrect", "fails", "broken", "error", "bug"},
	},
	Specificity: {
		PT: []string{"generico", "vago", "superficial", "raso", "amplo"},
		EN: []string{"generic", "vague", "shallow", "broad", "too general", "not specific"},
	},
	Clarity: {
		PT: []string{"confuso", "nao entendi", "ambiguo", "complicado", "dificil de entender"},
		EN: []string{"confusing", "unclear", "ambiguous", "complicated", "hard to understand", "convoluted"},
	},
	Completeness: {
		PT: []string{"falta", "incompleto", "ausente", "faltando", "nao tem"},
		EN: []string{"missing", "incomplete", "absent", "lacks", "doesn't have", "not present"},
	},
	Relevance: {
		PT: []string{"nao aplica", "fora do escopo", "irrelevante", "nao relacionado"},
		EN: []string{"not applicable", "out of scope", "irrelevant", "unrelated", "doesn't apply"},
	},
}

// Lists are one category's keywords in Portuguese and English.
type Lists struct {
	PT []string
	EN []string
}

// A Match is the category of a reason and the keyword that decided it.
type Match struct {
	Category Category `json:"category"`
	// Keyword is the keyword as listed (in Keywords or in the extra
	// keywords given to NewCategorizer); empty for Other.
	Keyword string `json:"keyword,omitempty"`
}

// A Categorizer matches reasons against the keyword lists. It is safe for
// concurrent use.
type Categorizer struct {
	// index maps a phrase's first word (each of its forms) to the
	// phrases starting with it.
	index map[string][]*phrase
}

type phrase struct {
	words   []string // normalised; the last may be any of its forms
	rank    int      // the category's place in Categories
	keyword string   // as listed
}

var defaultCategorizer = sync.OnceValue(func() *Categorizer {
	c, err := NewCategorizer(nil)
	if err != nil {
		panic(err)
	}
	return c
})

// Default returns the categorizer of the built-in lists alone.
func Default() *Categorizer { return defaultCategorizer() }

// Categorize categorises reason with the built-in lists.
func Categorize(reason string) Match { return Default().Categorize(reason) }

// NewCategorizer returns a categorizer of the built-in lists plus extra
// keywords per category (orket.yaml's feedback.keywords), which rank
// after the listed ones of their category. A category name that is not
// one of the five, or a keyword that normalises to nothing, is an error.
func NewCategorizer(extra map[string][]string) (*Categorizer, error) {
	c := &Categorizer{index: map[string][]*phrase{}}
	for rank, cat := range Categories[:len(Categories)-1] {
		l := Keywords[cat]
		for _, k := range l.PT {
			c.add(k, rank, true)
		}
		for _, k := range l.EN {
			c.add(k, rank, false)
		}
	}
	names := make([]string, 0, len(extra))
	for name := range extra {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		rank := -1
		for i, cat := range Categories[:len(Categories)-1] {
			if string(cat) == strings.ToLower(strings.TrimSpace(name)) {
				rank = i
			}
		}
		if rank < 0 {
			return nil, fmt.Errorf("feedback.keywords: %q is not a category (examples, specificity, clarity, completeness, relevance)", name)
		}
		for _, k := range extra[name] {
			if len(Words(k)) == 0 {
				return nil, fmt.Errorf("feedback.keywords.%s: %q has no word in it", name, k)
			}
			// Extra keywords may be either language: both kinds of
			// plural apply.
			c.add(k, rank, true)
		}
	}
	return c, nil
}

// add indexes keyword under every form of its words: its last word may
// be plural (and, for a Portuguese adjective in -o, feminine).
func (c *Categorizer) add(keyword string, rank int, portuguese bool) {
	words := Words(keyword)
	if len(words) == 0 {
		return
	}
	last := len(words) - 1
	for _, form := range forms(words[last], portuguese) {
		w := append(append([]string(nil), words[:last]...), form)
		p := &phrase{words: w, rank: rank, keyword: keyword}
		c.index[w[0]] = append(c.index[w[0]], p)
	}
}

// forms returns a keyword's last word and the plurals it also matches:
// +s and +es; -y to -ies (English), -al to -ais (Portuguese); and for a
// Portuguese word in -o its feminine forms (errado: errada, erradas),
// since Portuguese adjectives agree with their noun ("a documentação
// está incompleta").
func forms(w string, portuguese bool) []string {
	out := []string{w, w + "s", w + "es"}
	if strings.HasSuffix(w, "y") && len(w) > 1 {
		out = append(out, w[:len(w)-1]+"ies")
	}
	if portuguese && strings.HasSuffix(w, "al") {
		out = append(out, w[:len(w)-1]+"is")
	}
	if portuguese && strings.HasSuffix(w, "o") && len(w) > 2 {
		out = append(out, w[:len(w)-1]+"a", w[:len(w)-1]+"as")
	}
	return out
}

// Categorize returns the category of reason: of all the keywords found
// in it, the one of the highest-priority category, and of those the one
// found first. An empty reason, or one that matches nothing, is Other.
// A keyword that only labels the reason ("wrong: the API team owns
// api/openapi.yaml") is not its subject: what follows the colon is
// categorised.
func (c *Categorizer) Categorize(reason string) Match {
	if head, rest, ok := strings.Cut(reason, ":"); ok && len(Words(head)) <= 2 && len(Words(rest)) > 0 &&
		c.match(Words(head)).Category != Other {
		return c.match(Words(rest))
	}
	return c.match(Words(reason))
}

func (c *Categorizer) match(words []string) Match {
	best := Match{Category: Other}
	bestRank := len(Categories)
	for i, w := range words {
		for _, p := range c.index[w] {
			if p.rank >= bestRank || len(p.words) > len(words)-i {
				continue
			}
			if equalWords(words[i:i+len(p.words)], p.words) {
				best, bestRank = Match{Category: Categories[p.rank], Keyword: p.keyword}, p.rank
			}
		}
		if bestRank == 0 {
			break // nothing outranks the first category
		}
	}
	return best
}

func equalWords(a, b []string) bool {
	for i := range b {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Normalize returns text as keywords are matched: lower case, accents
// removed (ã to a, ç to c), apostrophes removed (doesn't to doesnt), any
// other punctuation or symbol a word break, and words joined by single
// spaces. "Não funciona!" and "nao   funciona" both give "nao funciona".
func Normalize(text string) string { return strings.Join(Words(text), " ") }

// Words returns the normalised words of text (see Normalize).
func Words(text string) []string {
	toks := tokenize(text)
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = t.w
	}
	return out
}

// A token is a normalised word with what its original looked like.
type token struct {
	w     string
	upper bool // its first letter was a capital
	start bool // it begins the text or a sentence
}

func tokenize(text string) []token {
	var toks []token
	var b strings.Builder
	upper, start, sentence := false, true, true
	flush := func() {
		if b.Len() > 0 {
			toks = append(toks, token{w: b.String(), upper: upper, start: start})
			b.Reset()
		}
	}
	for i := 0; i < len(text); {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		i += size
		switch {
		case r < utf8.RuneSelf && ('a' <= r && r <= 'z' || '0' <= r && r <= '9'):
			if b.Len() == 0 {
				upper, start, sentence = false, sentence, false
			}
			b.WriteRune(r)
		case r < utf8.RuneSelf && 'A' <= r && r <= 'Z':
			if b.Len() == 0 {
				upper, start, sentence = true, sentence, false
			}
			b.WriteRune(r + 'a' - 'A')
		case isApostrophe(r):
			// doesn't: one word, doesnt
		case r == '.' || r == '!' || r == '?' || r == '\n':
			flush()
			if r != '.' || i >= len(text) || text[i] == ' ' || text[i] == '\n' {
				sentence = true // not the dot of node.js or 1.5
			}
		case r < utf8.RuneSelf:
			flush()
		case unicode.Is(unicode.Mn, r):
			// a combining accent (decomposed text): dropped
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if b.Len() == 0 {
				upper, start, sentence = unicode.IsUpper(r), sentence, false
			}
			lr := unicode.ToLower(r)
			if f, ok := fold()[lr]; ok {
				b.WriteString(f)
			} else {
				b.WriteRune(lr)
			}
		default:
			flush()
		}
	}
	flush()
	return toks
}

func isApostrophe(r rune) bool {
	switch r {
	case '\'', '`', '\u2018', '\u2019', '\u00b4', '\u02bc', '\u02b9':
		return true
	}
	return false
}

// fold maps the lower-case accented Latin letters to plain ASCII; the map
// is built on first use.
var fold = sync.OnceValue(func() map[rune]string {
	m := map[rune]string{}
	for _, g := range []struct{ to, from string }{
		{"a", "àáâãäåāăąǎȁȃȧạảấầẩẫậắằẳẵặ"},
		{"c", "çćĉċč"},
		{"d", "ďđð"},
		{"e", "èéêëēĕėęěȅȇẹẻẽếềểễệ"},
		{"g", "ĝğġģ"},
		{"h", "ĥħ"},
		{"i", "ìíîïĩīĭįıǐȉȋịỉ"},
		{"j", "ĵ"},
		{"k", "ķ"},
		{"l", "ĺļľŀł"},
		{"n", "ñńņňŉ"},
		{"o", "òóôõöøōŏőǒȍȏọỏốồổỗộớờởỡợ"},
		{"r", "ŕŗř"},
		{"s", "śŝşšș"},
		{"t", "ţťŧț"},
		{"u", "ùúûüũūŭůűųǔưụủứừửữự"},
		{"w", "ŵ"},
		{"y", "ýÿŷỳỵỷỹ"},
		{"z", "źżž"},
		{"ss", "ß"},
		{"ae", "æ"},
		{"oe", "œ"},
		{"th", "þ"},
	} {
		for _, r := range g.from {
			m[r] = g.to
		}
	}
	return m
})
