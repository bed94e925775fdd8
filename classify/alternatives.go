package classify

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
)

// An alternative is one top-level alternative of a rule's pattern,
// compiled on its own: Go's regexp finds a pattern that starts with a
// literal by searching for the literal, but a pattern of several
// alternatives (most rules: one per tool's wording) it runs through its
// automaton at every byte. Split, each alternative with a literal prefix
// is searched for, and each runs only when a literal it requires (its
// anchors) is in the output.
type alternative struct {
	// re compiles the alternative on its first call: most alternatives
	// never run on a given output (their anchors are absent), and
	// compiling the catalogue's 324 of them cost every classifying
	// process 10-20 ms.
	re      func() *regexp.Regexp
	anchors []string
	// first is the number, in the whole pattern, of the alternative's
	// first capture group; its groups are first, first+1, ... in order
	// (groups of them).
	first, groups int
	span          span // where it lies in the pattern
}

// splitAlternatives returns the top-level alternatives of the pattern src
// (of groups capture groups), each compiled on its own when first used,
// or nil when src is not an alternation (or cannot be split: then the
// whole pattern runs, as before). The source is split at its top-level
// bars, each alternative prefixed with the flags set before it ("(?m)"
// at the start applies to every alternative): re-printing the parsed
// pattern instead costs far more than compiling it. Each alternative is
// parsed here (its anchors, its groups), which costs a fraction of
// compiling it.
func splitAlternatives(src string, groups int) []alternative {
	spans := splitTopLevel(src)
	if len(spans) < 2 {
		return nil
	}
	alts := make([]alternative, 0, len(spans))
	for _, sp := range spans {
		t, err := syntax.Parse(sp.of(src), syntax.Perl)
		if err != nil {
			return nil
		}
		alts = append(alts, alternative{span: sp, anchors: anchorsOf(t), groups: t.MaxCap()})
	}
	return numbered(src, alts, groups)
}

// numbered gives each alternative of the pattern src its compiler and the
// number of its first group in the whole pattern; nil when their groups
// do not add up to the pattern's.
func numbered(src string, alts []alternative, groups int) []alternative {
	next := 1 // the number of the next capture group in the whole pattern
	for i := range alts {
		a := &alts[i]
		alt := a.span.of(src)
		a.re = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(alt) })
		a.first = next // with no groups, first+groups still counts those before it
		next += a.groups
	}
	if next-1 != groups {
		return nil
	}
	return alts
}

// A span is a top-level alternative of a pattern: the flags set at top
// level before it ("(?m)", "(?i)"), and where its bytes lie in the pattern.
type span struct {
	flags      string
	start, end int
}

// of is the alternative's own pattern, in the pattern p it was split from.
func (s span) of(p string) string { return s.flags + p[s.start:s.end] }

// splitTopLevel splits a pattern at the bars outside any group or class,
// each part but the first prefixed with the flags set at top level before
// it. It returns nil for a pattern it does not follow.
func splitTopLevel(p string) []span {
	var parts []span
	depth, flags, start := 0, "", 0
	partFlags := ""
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '[':
			// A class: skip to its closing bracket (a ']' first is literal).
			j := i + 1
			if j < len(p) && p[j] == '^' {
				j++
			}
			if j < len(p) && p[j] == ']' {
				j++
			}
			for ; j < len(p) && p[j] != ']'; j++ {
				if p[j] == '\\' {
					j++
				} else if p[j] == '[' && j+1 < len(p) && p[j+1] == ':' {
					// [:alpha:]
					if k := strings.Index(p[j:], ":]"); k > 0 {
						j += k + 1
					}
				}
			}
			if j >= len(p) {
				return nil
			}
			i = j
		case '(':
			if depth == 0 && strings.HasPrefix(p[i:], "(?") {
				// A top-level flag group "(?flags)" sets flags from here on.
				if k := strings.IndexByte(p[i:], ')'); k > 0 {
					f := p[i+2 : i+k]
					if f != "" && strings.Trim(f, "imsU-") == "" {
						flags += "(?" + f + ")"
						i += k
						continue
					}
				}
			}
			depth++
		case ')':
			depth--
			if depth < 0 {
				return nil
			}
		case '|':
			if depth == 0 {
				parts = append(parts, span{partFlags, start, i})
				start = i + 1
				partFlags = flags
			}
		}
	}
	if depth != 0 {
		return nil
	}
	return append(parts, span{partFlags, start, len(p)})
}

// findAll is r.Pattern.FindAllStringSubmatchIndex(evidence, 16), from its
// alternatives when it has them: each alternative whose anchors are in
// lower (evidence in lower case) finds its matches, their groups are
// numbered as in the whole pattern, and of overlapping matches the one
// the whole pattern would take is kept (the leftmost; at one position,
// the earlier alternative). Each pattern runs only on the lines around
// the occurrences of its anchors (see lineIndex.windows).
func (c *Classifier) findAll(r *compiled, evidence, lower string, idx *lineIndex) [][]int {
	if c.noAnchors {
		return r.Pattern.Regexp().FindAllStringSubmatchIndex(evidence, 16)
	}
	if r.source == "user" {
		// A user's rule may span any number of lines: no windows.
		idx = wholeText
	}
	if len(r.alts) == 0 {
		return idx.find(r.Pattern.Regexp(), r.anchors, evidence, lower)
	}
	type found struct {
		m   []int
		alt int
	}
	var all []found
	last := r.alts[len(r.alts)-1]
	width := 2 * (last.first + last.groups) // the whole pattern's groups, and the match
	for i, a := range r.alts {
		if len(a.anchors) > 0 && !slices.ContainsFunc(a.anchors, func(s string) bool { return strings.Contains(lower, s) }) {
			continue
		}
		for _, m := range idx.find(a.re(), a.anchors, evidence, lower) {
			full := make([]int, width)
			for j := range full {
				full[j] = -1
			}
			full[0], full[1] = m[0], m[1]
			for g := 1; 2*g+1 < len(m); g++ {
				full[2*(a.first+g-1)], full[2*(a.first+g-1)+1] = m[2*g], m[2*g+1]
			}
			all = append(all, found{full, i})
		}
	}
	if len(all) == 0 {
		return nil
	}
	slices.SortStableFunc(all, func(x, y found) int {
		if x.m[0] != y.m[0] {
			return x.m[0] - y.m[0]
		}
		return x.alt - y.alt
	})
	var out [][]int
	end := -1
	for _, f := range all {
		if f.m[0] < end || (f.m[0] == end && f.m[1] == end && len(out) > 0) {
			continue
		}
		out = append(out, f.m)
		end = f.m[1]
		if len(out) == 16 {
			break
		}
	}
	return out
}

// windowLines is how many lines around an anchor a pattern reads: more
// than any rule's match spans (the longest read a traceback's few frames
// between the anchor and the error).
const windowLines = 40

// maxAnchorHits is how many occurrences of a rule's anchors make windows
// not worth their bookkeeping: the whole output is read instead.
const maxAnchorHits = 64

// A lineIndex knows where the lines of an output (and of its lower-case
// copy, which has the same lines) start.
type lineIndex struct {
	starts, lowerStarts []int
	n                   int // len of the evidence
}

// wholeText is a lineIndex that reads every output whole.
var wholeText = &lineIndex{}

func newLineIndex(evidence, lower string) *lineIndex {
	idx := &lineIndex{n: len(evidence), starts: lineStarts(evidence), lowerStarts: lineStarts(lower)}
	if len(idx.starts) != len(idx.lowerStarts) {
		idx.lowerStarts = nil // cannot happen ('\n' has no case); read whole
	}
	return idx
}

func lineStarts(s string) []int {
	starts := []int{0}
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// find runs re on the windows of evidence around its anchors' occurrences
// in lower, or on all of evidence when it has no anchors, they are too
// many, or the windows cover most of it. Any match holds an anchor, so it
// lies in a window unless it spans more than windowLines lines.
func (idx *lineIndex) find(re *regexp.Regexp, anchors []string, evidence, lower string) [][]int {
	wins := idx.windows(anchors, lower)
	if wins == nil {
		return re.FindAllStringSubmatchIndex(evidence, 16)
	}
	var out [][]int
	for _, w := range wins {
		for _, m := range re.FindAllStringSubmatchIndex(evidence[w[0]:w[1]], 16-len(out)) {
			for i := range m {
				if m[i] >= 0 {
					m[i] += w[0]
				}
			}
			out = append(out, m)
		}
		if len(out) >= 16 {
			break
		}
	}
	return out
}

// windows returns the byte ranges of evidence, in order and apart, of
// the lines within windowLines of an occurrence of an anchor, or nil to
// read all of it.
func (idx *lineIndex) windows(anchors []string, lower string) [][2]int {
	if len(anchors) == 0 || idx.lowerStarts == nil || len(idx.starts) <= 2*windowLines {
		// No anchors, no index (wholeText) or a short output: all of it.
		return nil
	}
	var lines []int
	for _, a := range anchors {
		for off := 0; ; {
			i := strings.Index(lower[off:], a)
			if i < 0 {
				break
			}
			if len(lines) == maxAnchorHits {
				return nil
			}
			off += i
			lines = append(lines, lineOf(idx.lowerStarts, off))
			off += len(a)
		}
	}
	slices.Sort(lines)
	var wins [][2]int
	covered := 0
	last := len(idx.starts) - 1
	for _, l := range lines {
		from, to := max(l-windowLines, 0), min(l+windowLines, last)
		start := idx.starts[from]
		end := idx.n
		if to < last {
			end = idx.starts[to+1]
		}
		if k := len(wins) - 1; k >= 0 && start <= wins[k][1] {
			covered += max(end-wins[k][1], 0)
			wins[k][1] = max(wins[k][1], end)
			continue
		}
		wins = append(wins, [2]int{start, end})
		covered += end - start
	}
	if covered*3 > idx.n*2 {
		return nil
	}
	return wins
}

// lineOf returns the number (0-based) of the line holding offset.
func lineOf(starts []int, offset int) int {
	i, found := slices.BinarySearch(starts, offset)
	if found {
		return i
	}
	return i - 1
}
