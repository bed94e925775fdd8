package memsync

// The agent memory is a person's file as much as orket's: people edit,
// reorder and delete its lines; orket only appends. Its merge is a
// three-way merge of lines against the version this clone last synced
// (the base), built so that no person's line is ever lost:
//
//   - a region only one side changed takes that side's lines (so a
//     deletion on one side, with the other side untouched, is kept);
//   - a region both sides changed the same way takes it once;
//   - a region both sides changed differently (both appended rows to the
//     rejection log, say) keeps the lines of both: first the side whose
//     lines sort first (so the result does not depend on which side is
//     local), then the other's lines that are not already there; a base
//     line one side deleted and the other left as it was goes.
//
// Without a base (the first sync of a clone that has a memory of its own)
// the base is taken as the lines both sides share, in order: nothing is
// deleted, each side's own lines are kept.

import (
	"bytes"
)

// splitLines cuts text into lines, each keeping its line ending.
func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, b)
			break
		}
		out = append(out, b[:i+1])
		b = b[i+1:]
	}
	return out
}

// Merge3 merges the lines of two versions of a text that both descend from
// base (nil: no known base). It is symmetric: Merge3(base, a, b) equals
// Merge3(base, b, a).
func Merge3(base, a, b []byte) []byte {
	la, lb := splitLines(a), splitLines(b)
	// A last line without its newline is the same line as with it: give
	// it one, so an append below it does not conflict with it.
	fixLast := func(ls [][]byte) {
		if n := len(ls); n > 0 && !bytes.HasSuffix(ls[n-1], []byte("\n")) {
			nl := "\n"
			if n > 1 && bytes.HasSuffix(ls[n-2], []byte("\r\n")) {
				nl = "\r\n"
			}
			ls[n-1] = append(append([]byte(nil), ls[n-1]...), nl...)
		}
	}
	fixLast(la)
	fixLast(lb)
	var lo [][]byte
	if base == nil {
		lo = common(la, lb)
	} else {
		lo = splitLines(base)
		fixLast(lo)
	}
	ma, mb := matches(lo, la), matches(lo, lb)
	var out [][]byte
	i, j, k := 0, 0, 0
	for {
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
	count := func(ls [][]byte) map[string]int {
		m := map[string]int{}
		for _, l := range ls {
			m[string(l)]++
		}
		return m
	}
	inO, inX, inY := count(o), count(x), count(y)
	// deleted reports a base line that one side kept as it was and the
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

// matches maps each line of o to the line of x it is paired with by a
// longest common subsequence (-1: none).
func matches(o, x [][]byte) []int {
	m := make([]int, len(o))
	for i := range m {
		m[i] = -1
	}
	for _, p := range lcs(o, x) {
		m[p[0]] = p[1]
	}
	return m
}

// common returns the lines of a longest common subsequence of a and b.
func common(a, b [][]byte) [][]byte {
	var out [][]byte
	for _, p := range lcs(a, b) {
		out = append(out, a[p[0]])
	}
	return out
}

// maxEdit bounds the edit distance lcs searches (its memory grows with
// its square); beyond it the middle of the two texts counts as changed
// whole, which the merge resolves by keeping both sides' lines.
const maxEdit = 2000

// lcs returns the index pairs of a longest common subsequence of a and b
// (Myers' O(ND) algorithm, after the common prefix and suffix).
func lcs(a, b [][]byte) [][2]int {
	var pairs [][2]int
	pre := 0
	for pre < len(a) && pre < len(b) && bytes.Equal(a[pre], b[pre]) {
		pairs = append(pairs, [2]int{pre, pre})
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && bytes.Equal(a[len(a)-1-suf], b[len(b)-1-suf]) {
		suf++
	}
	mid := myers(a[pre:len(a)-suf], b[pre:len(b)-suf])
	for _, p := range mid {
		pairs = append(pairs, [2]int{p[0] + pre, p[1] + pre})
	}
	for s := suf; s > 0; s-- {
		pairs = append(pairs, [2]int{len(a) - s, len(b) - s})
	}
	return pairs
}

func myers(a, b [][]byte) [][2]int {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return nil
	}
	// Lines as small integers, compared cheaply.
	ids := map[string]int32{}
	num := func(ls [][]byte) []int32 {
		out := make([]int32, len(ls))
		for i, l := range ls {
			id, ok := ids[string(l)]
			if !ok {
				id = int32(len(ids))
				ids[string(l)] = id
			}
			out[i] = id
		}
		return out
	}
	x, y := num(a), num(b)
	max := n + m
	if max > maxEdit {
		max = maxEdit
	}
	off := max + 1
	v := make([]int32, 2*max+3)
	var trace [][]int32
	found := -1
	for d := 0; d <= max && found < 0; d++ {
		snap := make([]int32, 2*d+3)
		copy(snap, v[off-d-1:off+d+2])
		trace = append(trace, snap)
		for k := -d; k <= d; k += 2 {
			var i int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				i = int(v[off+k+1])
			} else {
				i = int(v[off+k-1]) + 1
			}
			j := i - k
			for i < n && j < m && x[i] == y[j] {
				i, j = i+1, j+1
			}
			v[off+k] = int32(i)
			if i >= n && j >= m {
				found = d
				break
			}
		}
	}
	if found < 0 {
		return nil
	}
	// Walk back from (n, m) through the snapshots taken before each d.
	var rev [][2]int
	i, j := n, m
	for d := found; d > 0; d-- {
		snap := trace[d] // v as it was before step d, over k in [-d-1, d+1]
		at := func(k int) int { return int(snap[k+d+1]) }
		k := i - j
		var pk int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		pi := at(pk)
		pj := pi - pk
		// The diagonal run after the edit at step d.
		si, sj := pi, pj
		if pk == k+1 {
			sj++ // an insertion from b
		} else {
			si++ // a deletion from a
		}
		for i > si && j > sj {
			i, j = i-1, j-1
			rev = append(rev, [2]int{i, j})
		}
		i, j = pi, pj
	}
	for i > 0 && j > 0 {
		i, j = i-1, j-1
		rev = append(rev, [2]int{i, j})
	}
	out := make([][2]int, len(rev))
	for p := range rev {
		out[p] = rev[len(rev)-1-p]
	}
	return out
}
