package redact

// The prefilter finds, in one pass over a line, which rules could match
// it: an Aho-Corasick automaton over the rules' keywords and the secret
// values, ASCII case folded. A line that holds no keyword is copied as it
// is without running a single regular expression, which is what keeps
// redaction of ordinary output at a few nanoseconds a byte.

// ruleSet is a set of rule indexes (at most 128 rules, the values counted
// as one rule).
type ruleSet [2]uint64

func (s *ruleSet) add(i int)       { s[i>>6] |= 1 << (uint(i) & 63) }
func (s ruleSet) has(i int) bool   { return s[i>>6]&(1<<(uint(i)&63)) != 0 }
func (s ruleSet) empty() bool      { return s[0]|s[1] == 0 }
func (s *ruleSet) union(t ruleSet) { s[0] |= t[0]; s[1] |= t[1] }

const maxRules = 128

// prefilter is a dense Aho-Corasick automaton over byte classes.
type prefilter struct {
	class  [256]uint16 // byte -> class; 0 is "in no keyword"
	nclass int
	// delta[state*nclass+class] is the next state, stored multiplied by
	// nclass (a row offset), and complemented (^x, negative) when the
	// next state ends a keyword.
	delta []int32
	out   []ruleSet // by state: the rules whose keywords end there (after failure links)
}

func lowerASCII(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

// newPrefilter builds the automaton; keywords[i] are the keywords of rule
// i. Keywords are matched case-insensitively (ASCII).
func newPrefilter(keywords [][]string) *prefilter {
	p := &prefilter{}
	p.classes(keywords)
	delta, outs := p.trie(keywords)
	link(delta, outs, p.nclass)
	p.delta, p.out = delta, outs
	// Pre-multiply and flag the states that end a keyword.
	n := int32(p.nclass)
	for i, t := range p.delta {
		if p.out[t].empty() {
			p.delta[i] = t * n
		} else {
			p.delta[i] = ^(t * n)
		}
	}
	return p
}

// classes sets the byte classes: one per distinct (folded) byte used by a
// keyword.
func (p *prefilter) classes(keywords [][]string) {
	var seen [256]uint16
	n := 1
	for _, kws := range keywords {
		for _, kw := range kws {
			for i := 0; i < len(kw); i++ {
				b := lowerASCII(kw[i])
				if seen[b] == 0 {
					seen[b] = uint16(n)
					n++
				}
			}
		}
	}
	for b := 0; b < 256; b++ {
		p.class[b] = seen[lowerASCII(byte(b))]
	}
	p.nclass = n
}

// trie returns the keywords' trie, as a dense table of transitions over
// classes (0: none; the root is no one's child), and the rules whose
// keywords end in each state. It has at most one state per keyword byte,
// plus the root: sized for that at once, the table is allocated once
// instead of being copied as it grows (that copying was most of the cost
// of building the prefilter, which every run pays).
func (p *prefilter) trie(keywords [][]string) ([]int32, []ruleSet) {
	n := p.nclass
	states := 1
	for _, kws := range keywords {
		for _, kw := range kws {
			states += len(kw)
		}
	}
	delta := make([]int32, n, states*n)
	outs := make([]ruleSet, 1, states)
	for rule, kws := range keywords {
		for _, kw := range kws {
			if kw == "" {
				continue
			}
			s := 0
			for i := 0; i < len(kw); i++ {
				c := int(p.class[kw[i]])
				t := int(delta[s*n+c])
				if t == 0 {
					t = len(outs)
					outs = append(outs, ruleSet{})
					delta = append(delta, make([]int32, n)...)
					delta[s*n+c] = int32(t)
				}
				s = t
			}
			outs[s].add(rule)
		}
	}
	return delta, outs
}

// link turns the trie into the automaton: breadth-first failure links,
// filled into the table in place (a row still holds the trie's children
// when its turn comes), each state's rules joined by those of its
// failure state.
func link(delta []int32, outs []ruleSet, n int) {
	fail := make([]int32, len(outs))
	queue := make([]int32, 0, len(outs))
	for c := 1; c < n; c++ {
		if t := delta[c]; t != 0 {
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := int(queue[0])
		queue = queue[1:]
		outs[s].union(outs[fail[s]])
		f := int(fail[s]) * n
		for c := 1; c < n; c++ {
			if t := delta[s*n+c]; t != 0 {
				fail[t] = delta[f+c]
				queue = append(queue, t)
			} else {
				delta[s*n+c] = delta[f+c]
			}
		}
	}
}

// scan returns the rules whose keywords occur in b.
func (p *prefilter) scan(b []byte) ruleSet {
	var set ruleSet
	s := int32(0)
	for _, c := range b {
		s = p.delta[s+int32(p.class[c])]
		if s < 0 {
			s = ^s
			set.union(p.out[int(s)/p.nclass])
		}
	}
	return set
}

// scanString is scan for a string, without copying it.
func (p *prefilter) scanString(b string) ruleSet {
	var set ruleSet
	s := int32(0)
	for i := 0; i < len(b); i++ {
		s = p.delta[s+int32(p.class[b[i]])]
		if s < 0 {
			s = ^s
			set.union(p.out[int(s)/p.nclass])
		}
	}
	return set
}
