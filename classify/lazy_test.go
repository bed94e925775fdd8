package classify

import "testing"

// TestAlternativesCompile: every alternative of the catalogue, compiled
// only when first used, compiles (a pattern that parsed but did not
// compile would fail in the middle of a classification instead), and
// numbers its groups as the whole pattern does.
func TestAlternativesCompile(t *testing.T) {
	for i, p := range builtinPrepared() {
		r := Builtin()[i]
		groups := 0
		for _, a := range p.alts {
			re := a.re()
			if a.first != 0 && a.first != groups+1 {
				t.Errorf("%s: an alternative's first group is %d, want %d", r.ID, a.first, groups+1)
			}
			groups += re.NumSubexp()
		}
		if len(p.alts) > 0 && groups != r.Pattern.NumSubexp() {
			t.Errorf("%s: the alternatives have %d groups, the pattern %d", r.ID, groups, r.Pattern.NumSubexp())
		}
	}
}
