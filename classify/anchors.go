package classify

import (
	"regexp/syntax"
	"strings"
)

// minAnchor is the shortest literal worth using as an anchor: shorter
// ones (":", "at") appear in nearly every output and say nothing.
const minAnchor = 3

// minNearMiss is the shortest anchor whose presence makes a rule a near
// miss in Explain: "error" or "not found" alone say too little.
const minNearMiss = 8

// Anchors returns the literals, in lower case, one of which every match
// of the expression expr must contain (compared case-insensitively), or
// nil when it has no such literal of at least three characters. The classifier skips a rule
// whose anchors are all absent from an output without running its
// pattern, and Explain reports a rule whose anchor is present but whose
// pattern did not match as a near miss.
func Anchors(expr string) []string {
	t, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	return anchorsOf(t)
}

// anchorsOf is Anchors of a parsed pattern.
func anchorsOf(t *syntax.Regexp) []string {
	alts := required(t.Simplify())
	for _, a := range alts {
		if len(a) < minAnchor {
			return nil
		}
	}
	return alts
}

// required returns a set of literals one of which every match of t
// contains, or nil when it cannot tell.
func required(t *syntax.Regexp) []string {
	switch t.Op {
	case syntax.OpLiteral:
		return []string{strings.ToLower(string(t.Rune))}
	case syntax.OpCapture, syntax.OpPlus:
		return required(t.Sub[0])
	case syntax.OpRepeat:
		if t.Min >= 1 {
			return required(t.Sub[0])
		}
	case syntax.OpConcat:
		// Adjacent literals form one longer literal; otherwise keep the
		// strongest single requirement (the longest shortest alternative).
		var best []string
		run := ""
		consider := func(alts []string) {
			if strength(alts) > strength(best) {
				best = alts
			}
		}
		for _, sub := range t.Sub {
			if sub.Op == syntax.OpLiteral {
				run += strings.ToLower(string(sub.Rune))
				continue
			}
			if run != "" {
				consider([]string{run})
				run = ""
			}
			if alts := required(sub); alts != nil {
				consider(alts)
			}
		}
		if run != "" {
			consider([]string{run})
		}
		return best
	case syntax.OpAlternate:
		var all []string
		for _, sub := range t.Sub {
			alts := required(sub)
			if alts == nil {
				return nil
			}
			all = append(all, alts...)
		}
		return all
	}
	return nil
}

// strength is the length of the shortest alternative: what every match
// is sure to contain.
func strength(alts []string) int {
	if len(alts) == 0 {
		return 0
	}
	n := len(alts[0])
	for _, a := range alts[1:] {
		n = min(n, len(a))
	}
	return n
}
