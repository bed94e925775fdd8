package textmerge

// MaxEdit bounds the number of differences LCS searches for (its memory
// grows with the square of it); beyond it the middle of the two texts,
// between their common prefix and suffix, counts as changed whole.
const MaxEdit = 2000

// LCS returns the index pairs of a longest common subsequence of the
// lines a and b, in increasing order: the common prefix, Myers' O(ND)
// pairing of the middle (none past MaxEdit differences), the common
// suffix.
func LCS[T string | []byte](a, b []T) [][2]int {
	x, y := intern(a, b)
	var pairs [][2]int
	pre := 0
	for pre < len(x) && pre < len(y) && x[pre] == y[pre] {
		pairs = append(pairs, [2]int{pre, pre})
		pre++
	}
	suf := 0
	for suf < len(x)-pre && suf < len(y)-pre && x[len(x)-1-suf] == y[len(y)-1-suf] {
		suf++
	}
	for _, p := range myers(x[pre:len(x)-suf], y[pre:len(y)-suf]) {
		pairs = append(pairs, [2]int{p[0] + pre, p[1] + pre})
	}
	for s := suf; s > 0; s-- {
		pairs = append(pairs, [2]int{len(x) - s, len(y) - s})
	}
	return pairs
}

// intern numbers the lines of a and b, equal lines alike, so that they
// compare as small integers.
func intern[T string | []byte](a, b []T) (x, y []int32) {
	ids := map[string]int32{}
	num := func(ls []T) []int32 {
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
	return num(a), num(b)
}

// myers pairs the lines of x and y along a shortest edit script, or not
// at all when it is longer than MaxEdit.
func myers(x, y []int32) [][2]int {
	if len(x) == 0 || len(y) == 0 {
		return nil
	}
	trace, d := myersForward(x, y)
	if d < 0 {
		return nil
	}
	return myersBack(trace, d, len(x), len(y))
}

// myersForward runs the forward search: for each number of differences
// d, how far along x each diagonal k = i - j reaches. It returns the
// reach as it was before each step d (over k in [-d-1, d+1]) and the d
// at which the end of both texts is reached (-1: not within MaxEdit).
func myersForward(x, y []int32) (trace [][]int32, found int) {
	n, m := len(x), len(y)
	limit := min(n+m, MaxEdit)
	off := limit + 1
	v := make([]int32, 2*limit+3)
	for d := 0; d <= limit; d++ {
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
				return trace, d
			}
		}
	}
	return trace, -1
}

// myersBack walks back from (n, m) through the reaches trace recorded
// and returns the pairs of the diagonal runs it crosses, in order.
func myersBack(trace [][]int32, found, n, m int) [][2]int {
	var rev [][2]int
	i, j := n, m
	diagonal := func(si, sj int) {
		for i > si && j > sj {
			i, j = i-1, j-1
			rev = append(rev, [2]int{i, j})
		}
	}
	for d := found; d > 0; d-- {
		snap := trace[d] // the reach before step d, over k in [-d-1, d+1]
		at := func(k int) int { return int(snap[k+d+1]) }
		k := i - j
		pk := k - 1
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		}
		pi := at(pk)
		pj := pi - pk
		// The diagonal run after the edit at step d.
		if pk == k+1 {
			diagonal(pi, pj+1) // an insertion from y
		} else {
			diagonal(pi+1, pj) // a deletion from x
		}
		i, j = pi, pj
	}
	diagonal(0, 0)
	out := make([][2]int, len(rev))
	for p := range rev {
		out[p] = rev[len(rev)-1-p]
	}
	return out
}

// An Op is one line of a line diff: a line both texts have (' '), one
// only a has ('-') or one only b has ('+'). A and B are the line's index
// in a and in b; for a line one text lacks, the index it would have
// there.
type Op struct {
	Kind byte
	A, B int
}

// Diff returns the ops that take the lines a to the lines b, in order:
// between two lines LCS pairs, a's other lines are deleted, then b's
// added.
func Diff[T string | []byte](a, b []T) []Op {
	var ops []Op
	i, j := 0, 0
	for _, p := range append(LCS(a, b), [2]int{len(a), len(b)}) {
		for ; i < p[0]; i++ {
			ops = append(ops, Op{'-', i, j})
		}
		for ; j < p[1]; j++ {
			ops = append(ops, Op{'+', i, j})
		}
		if i < len(a) && j < len(b) {
			ops = append(ops, Op{' ', i, j})
			i, j = i+1, j+1
		}
	}
	return ops
}

// A Hunk is a run of a diff's ops with the unchanged lines around its
// changes, as a unified diff writes it ("@@ -OldStart,OldLines
// +NewStart,NewLines @@"): a start is the 1-based number of the hunk's
// first line in its text, or, for a side the hunk has no line of, the
// number of the line before it (0 at the top), as diff -u and git write
// it.
type Hunk struct {
	OldStart, OldLines int
	NewStart, NewLines int
	Ops                []Op
}

// Hunks groups a diff's changes into hunks with context unchanged lines
// before and after each; changes at most 2*context unchanged lines apart
// share a hunk.
func Hunks(ops []Op, context int) []Hunk {
	var changed []int
	for i, o := range ops {
		if o.Kind != ' ' {
			changed = append(changed, i)
		}
	}
	var hunks []Hunk
	for k := 0; k < len(changed); {
		start := max(changed[k]-context, 0)
		last := changed[k]
		for k++; k < len(changed) && changed[k] <= last+2*context+1; k++ {
			last = changed[k]
		}
		end := min(last+context+1, len(ops))
		hunks = append(hunks, newHunk(ops[start:end]))
	}
	return hunks
}

func newHunk(ops []Op) Hunk {
	h := Hunk{OldStart: ops[0].A, NewStart: ops[0].B, Ops: ops}
	for _, o := range ops {
		if o.Kind != '+' {
			h.OldLines++
		}
		if o.Kind != '-' {
			h.NewLines++
		}
	}
	if h.OldLines > 0 {
		h.OldStart++
	}
	if h.NewLines > 0 {
		h.NewStart++
	}
	return h
}
