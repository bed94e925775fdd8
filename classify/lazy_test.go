package classify

import "testing"

// TestCatalogueCompiles: every expression of the catalogue, compiled
// only when first used, compiles (one that did not would fail in the
// middle of a classification), and each alternative of a pattern numbers
// its groups as the whole pattern does.
func TestCatalogueCompiles(t *testing.T) {
	for i, p := range builtinPrepared() {
		r := Builtin()[i]
		for _, e := range []*Expr{r.Pattern, r.Requires, r.Reject, r.Unless, r.Command} {
			if e != nil && e.Regexp().String() != e.String() {
				t.Errorf("%s: %s compiled as %s", r.ID, e, e.Regexp())
			}
		}
		groups := 0
		for _, a := range p.alts {
			if a.first != groups+1 {
				t.Errorf("%s: an alternative's first group is %d, want %d", r.ID, a.first, groups+1)
			}
			if n := a.re().NumSubexp(); n != a.groups {
				t.Errorf("%s: an alternative has %d groups, parsed %d", r.ID, n, a.groups)
			}
			groups += a.groups
		}
		if len(p.alts) > 0 && groups != r.Pattern.Regexp().NumSubexp() {
			t.Errorf("%s: the alternatives have %d groups, the pattern %d", r.ID, groups, r.Pattern.Regexp().NumSubexp())
		}
	}
}
