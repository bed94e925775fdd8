package textmerge

import "bytes"

// Merge3 merges the lines of two versions of a text, a and b, that both
// descend from base (nil: no known base), losing no line either side
// added:
//
//   - a region only one side changed takes that side's lines (so a
//     deletion on one side, with the other side untouched, is kept);
//   - a region both sides changed the same way takes it once;
//   - a region both sides changed differently keeps the lines of both:
//     first the side whose lines sort first (so the result does not
//     depend on which side is which), then the other's lines that are
//     not already there; a base line one side deleted and the other
//     left as it was goes.
//
// Without a base the base is taken as the lines both sides share, in
// order: nothing is deleted, each side's own lines are kept. Merge3 is
// symmetric: Merge3(base, a, b) equals Merge3(base, b, a).
func Merge3(base, a, b []byte) []byte {
	la, lb := withLastNewline(SplitLines(a)), withLastNewline(SplitLines(b))
	var lo [][]byte
	if base == nil {
		lo = common(la, lb)
	} else {
		lo = withLastNewline(SplitLines(base))
	}
	ma, mb := matches(lo, la), matches(lo, lb)
	var out [][]byte
	i, j, k := 0, 0, 0
	for {
		// The next base line both sides kept (m), and where it is in each.
		m := i
		for m < len(lo) && (ma[m] < 0 || mb[m] < 0) {
			m++
		}
		ae, be := len(la), len(lb)
		if m < len(lo) {
			ae, be = ma[m], mb[m]
		}
		out = append(out, resolve(lo[i:m], la[j:ae], lb[k:be])...)
		if m == len(lo) {
			break
		}
		out = append(out, lo[m])
		i, j, k = m+1, ae+1, be+1
	}
	return bytes.Join(out, nil)
}

// withLastNewline gives a last line without its newline one (CRLF when
// the line before ends so): it is the same line as with it, and an
// append below it must not conflict with it.
func withLastNewline(ls [][]byte) [][]byte {
	if n := len(ls); n > 0 && !bytes.HasSuffix(ls[n-1], []byte("\n")) {
		nl := "\n"
		if n > 1 && bytes.HasSuffix(ls[n-2], []byte("\r\n")) {
			nl = "\r\n"
		}
		ls[n-1] = append(append([]byte(nil), ls[n-1]...), nl...)
	}
	return ls
}

func equalLines(x, y [][]byte) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if !bytes.Equal(x[i], y[i]) {
			return false
		}
	}
	return true
}

// resolve merges one unstable region: o from the base, x and y from the
// two sides.
func resolve(o, x, y [][]byte) [][]byte {
	switch {
	case equalLines(x, o):
		return y
	case equalLines(y, o), equalLines(x, y):
		return x
	}
	if bytes.Compare(bytes.Join(y, nil), bytes.Join(x, nil)) < 0 {
		x, y = y, x
	}
	inO, inX, inY := countLines(o), countLines(x), countLines(y)
	// deletedBy reports a base line that one side kept as it was and the
	// other took out.
	deletedBy := func(l []byte, other map[string]int) bool {
		return inO[string(l)] > 0 && other[string(l)] == 0
	}
	var out [][]byte
	have := map[string]int{}
	for _, l := range x {
		if deletedBy(l, inY) {
			continue
		}
		out = append(out, l)
		have[string(l)]++
	}
	for _, l := range y {
		if deletedBy(l, inX) {
			continue
		}
		if len(bytes.TrimSpace(l)) > 0 && have[string(l)] > 0 {
			have[string(l)]--
			continue
		}
		out = append(out, l)
	}
	return out
}

func countLines(ls [][]byte) map[string]int {
	m := map[string]int{}
	for _, l := range ls {
		m[string(l)]++
	}
	return m
}

// matches maps each line of o to the line of x it is paired with by a
// longest common subsequence (-1: none).
func matches(o, x [][]byte) []int {
	m := make([]int, len(o))
	for i := range m {
		m[i] = -1
	}
	for _, p := range LCS(o, x) {
		m[p[0]] = p[1]
	}
	return m
}

// common returns the lines of a longest common subsequence of a and b.
func common(a, b [][]byte) [][]byte {
	var out [][]byte
	for _, p := range LCS(a, b) {
		out = append(out, a[p[0]])
	}
	return out
}
