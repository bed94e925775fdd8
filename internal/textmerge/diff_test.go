package textmerge

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestLCS: the pairs are increasing, pair equal lines, and are as many as
// a longest common subsequence has (by dynamic programming).
func TestLCS(t *testing.T) {
	split := func(s string) [][]byte { return SplitLines([]byte(s)) }
	for _, c := range [][2]string{{"a\nb\nc\n", "a\nc\n"}, {"x\na\nb\n", "a\nb\ny\n"}, {"", "a\n"}, {"a\nb\nc\nd\ne\n", "b\nx\nd\ny\n"}} {
		a, b := split(c[0]), split(c[1])
		ps := LCS(a, b)
		pi, pj := -1, -1
		for _, p := range ps {
			if p[0] <= pi || p[1] <= pj || !bytes.Equal(a[p[0]], b[p[1]]) {
				t.Fatalf("%q %q: bad pairs %v", c[0], c[1], ps)
			}
			pi, pj = p[0], p[1]
		}
		if want := lcsLength(a, b); len(ps) != want {
			t.Errorf("%q %q: %d pairs, want %d", c[0], c[1], len(ps), want)
		}
	}
}

// lcsLength is the length of a longest common subsequence, by dynamic
// programming.
func lcsLength[T string | []byte](a, b []T) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if string(a[i]) == string(b[j]) {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

// randomEdit returns base with a few lines deleted and added.
func randomEdit(rng *rand.Rand, base []string, side string) []string {
	out := append([]string(nil), base...)
	for e := 0; e < rng.IntN(8); e++ {
		if i := rng.IntN(len(out) + 1); rng.IntN(2) == 0 && i < len(out) {
			out = append(out[:i], out[i+1:]...)
		} else {
			out = append(out[:i], append([]string{fmt.Sprintf("%s %d", side, rng.IntN(5))}, out[i:]...)...)
		}
	}
	return out
}

// TestDiff: on random edits, the ops are minimal (as many kept lines as
// a longest common subsequence), and taking a's kept and deleted lines
// gives a, b's kept and added lines gives b.
func TestDiff(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 500; trial++ {
		var base []string
		for i := 0; i < rng.IntN(25); i++ {
			base = append(base, fmt.Sprintf("line %d", rng.IntN(10)))
		}
		a, b := randomEdit(rng, base, "a"), randomEdit(rng, base, "b")
		var gotA, gotB []string
		kept := 0
		for _, o := range Diff(a, b) {
			switch o.Kind {
			case ' ':
				if a[o.A] != b[o.B] {
					t.Fatalf("trial %d: kept %q as %q", trial, a[o.A], b[o.B])
				}
				gotA, gotB = append(gotA, a[o.A]), append(gotB, b[o.B])
				kept++
			case '-':
				gotA = append(gotA, a[o.A])
			case '+':
				gotB = append(gotB, b[o.B])
			}
		}
		if strings.Join(gotA, "\n") != strings.Join(a, "\n") || strings.Join(gotB, "\n") != strings.Join(b, "\n") {
			t.Fatalf("trial %d: the ops do not rebuild the texts", trial)
		}
		if want := lcsLength(a, b); kept != want {
			t.Fatalf("trial %d: %d lines kept, a longest common subsequence has %d", trial, kept, want)
		}
	}
}

// TestDiffBounded: past MaxEdit differences the middle is changed whole;
// the common prefix and suffix stay.
func TestDiffBounded(t *testing.T) {
	var a, b []string
	for i := 0; i < 3*MaxEdit; i++ {
		a = append(a, fmt.Sprint("a", i))
		b = append(b, fmt.Sprint("b", i))
	}
	a = append(append([]string{"top"}, a...), "end")
	b = append(append([]string{"top"}, b...), "end")
	if got := LCS(a, b); len(got) != 2 || got[0] != [2]int{0, 0} || got[1] != [2]int{len(a) - 1, len(b) - 1} {
		t.Errorf("pairs %v", got)
	}
}

// TestHunks: the hunks of a unified diff, three lines of context, as
// diff -u writes them.
func TestHunks(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{"a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n", "a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\n",
			"@@ -1,5 +1,5 @@\n a\n-b\n+B\n c\n d\n e\n@@ -8,3 +8,4 @@\n h\n i\n j\n+k\n"},
		{"", "x\ny\n", "@@ -0,0 +1,2 @@\n+x\n+y\n"},
		{"x\n", "", "@@ -1 +0,0 @@\n-x\n"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n", "1\n2\n3\n4\nnew\n5\n6\n7\n8\n", "@@ -2,6 +2,7 @@\n 2\n 3\n 4\n+new\n 5\n 6\n 7\n"},
		{"a\nb\nc\nd\ne\nf\ng\nh\n", "A\nb\nc\nd\ne\nf\ng\nH\n", "@@ -1,8 +1,8 @@\n-a\n+A\n b\n c\n d\n e\n f\n g\n-h\n+H\n"},
	} {
		a, b := SplitLines(c.a), SplitLines(c.b)
		var sb strings.Builder
		for _, h := range Hunks(Diff(a, b), 3) {
			fmt.Fprintf(&sb, "@@ -%s +%s @@\n", span(h.OldStart, h.OldLines), span(h.NewStart, h.NewLines))
			for _, o := range h.Ops {
				var l string
				if o.Kind == '+' {
					l = b[o.B]
				} else {
					l = a[o.A]
				}
				sb.WriteString(string(o.Kind) + l)
			}
		}
		if sb.String() != c.want {
			t.Errorf("%q -> %q:\n%s\nwant:\n%s", c.a, c.b, sb.String(), c.want)
		}
	}
}

func span(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

func TestSplitLines(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{{"", nil}, {"a", []string{"a"}}, {"a\n", []string{"a\n"}}, {"a\r\nb", []string{"a\r\n", "b"}}, {"\n\n", []string{"\n", "\n"}}} {
		got := SplitLines(c.in)
		gotB := SplitLines([]byte(c.in))
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", c.want) || len(gotB) != len(got) {
			t.Errorf("%q: %q (bytes %q), want %q", c.in, got, gotB, c.want)
		}
	}
}
