package gitignore

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var (
	randomSeed = flag.Uint64("gitignore.seed", 1, "seed of TestRandomWorlds")
	randomSets = flag.Int("gitignore.sets", 300, "number of random pattern sets in TestRandomWorlds")
)

// setsPerTree is how many pattern sets each random tree is judged with:
// creating files is the slow part of a case, so a tree is reused.
const setsPerTree = 5

// TestRandomWorlds builds random trees and, for each, several random sets
// of ignore files at every level (core.excludesFile, info/exclude, the
// root and nested .gitignore), and checks that the scanner's walk with
// this package and git agree on every path. Each tree is reproducible
// alone: -run 'TestRandomWorlds/group/tree_17$' with the same
// -gitignore.seed.
func TestRandomWorlds(t *testing.T) {
	var paths, ignored, untracked atomic.Int64
	trees := (*randomSets + setsPerTree - 1) / setsPerTree
	t.Run("group", func(t *testing.T) {
		for i := range trees {
			t.Run(fmt.Sprintf("tree_%d", i), func(t *testing.T) {
				t.Parallel()
				ws := randomWorlds(rand.New(rand.NewPCG(*randomSeed, uint64(i))), setsPerTree)
				b := build(t, ws[0])
				for j, w := range ws {
					if j > 0 {
						b.setIgnores(t, w)
					}
					want, got := gitVerdict(t, b), ourVerdict(t, b)
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("set %d: git and this package disagree (-git +ours):\n%s\n%s", j, diff, describe(w))
					}
					paths.Add(int64(len(b.paths)))
					ignored.Add(int64(len(want.Ignored)))
					untracked.Add(int64(len(want.Untracked)))
				}
			})
		}
	})
	t.Logf("%d trees × %d pattern sets: %d paths compared with git check-ignore (%d ignored), %d untracked files compared with git ls-files",
		trees, setsPerTree, paths.Load(), ignored.Load(), untracked.Load())
}

func describe(w world) string {
	var b strings.Builder
	fmt.Fprintf(&b, "entries: %q\n", w.entries)
	if w.global != "" {
		fmt.Fprintf(&b, "core.excludesFile (xdg=%v): %q\n", w.globalXDG, w.global)
	}
	if w.exclude != "" {
		fmt.Fprintf(&b, "info/exclude: %q\n", w.exclude)
	}
	dirs := make([]string, 0, len(w.ignore))
	for d := range w.ignore {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	for _, d := range dirs {
		fmt.Fprintf(&b, "%s/.gitignore: %q\n", d, w.ignore[d])
	}
	return b.String()
}

var (
	fileNames = []string{
		"a", "b", "c", "x", "1", "b.o", "b.c", "a.o", "x.txt", "keep.txt", "y.log", "keep.log",
		"[x]", "a b", "trail ", " lead", "#c", "!n", "*", "?", "f\\g", "ü", "caf\xe9", "-", "]",
		"[", "a[b", "foo**bar", "Makefile", "MAKEFILE", ".hidden", "x.tar.gz", "tab\tx", "nl\nx",
		"data", "build", "foo", "~x", "x~", "A1", "v\vx", "f\fx", "bar", "foobar",
	}
	dirNames = []string{
		"a", "b", "data", "build", "src", "logs", "node_modules", "deep", "[x]", "sub dir",
		"x.o", "keep.txt", "doc", "foo", "bar", "1", ".cache", "B",
	}
	trickyPatterns = []string{
		"*.[!o]", "*.[^c]", "*.[oc]", "[[:alpha:]]*", "[[:digit:]]", "[[:upper:]]*", "[[:punct:]]*",
		"[[:space:]]*", "*[[:space:]]", "[!a-m]*", "?", "??", "*", "**", "*/", "*/*", "**/", "/*", "/*/",
		"*/**", "**/*", "\\#c", "\\!n", "\\[x\\]", "[[]x]", "\\*", "[*]", "\\?", "trail\\ ",
		"[]]", "[]-a]*", "[a-]*", "*[", "[[:foo:]]", "foo**bar", "foo**", "**foo", "data/**",
		"!data/keep.txt", "**\\/*", ".*", "*~", "[[:graph:]]*", "[[:print:]]", "[[:cntrl:]]*",
		"[[:xdigit:]]*", "[[:lower:]]*", "[[:alnum:]]", "[[:blank:]]*", "[0- ]", "[--0]*",
		"*/data/**", "**/data", "**/build/", "a/**/b", "**/**/x", "a/**/**", "[\\]]", "[\\\\]*",
		"*.o", "!*.o", "!keep.*", "*.log", "!keep.log", "node_modules/", "/build/", "src/**/*.o",
		"foo**/bar", "fo**/*", "a**/b", "**a/*", "foo/**bar", "*/**/bar", "**/", "**\\/bar", "*\\/*",
		"*[[:space:]]x", "*[[:cntrl:]]x", "*/b**/*", "?/d**/*", "**/a**/b", "*/da**", "x\x00junk", "/x\x00", "foo**/", "\\**/a",
	}
)

// randomWorlds makes a tree of up to five levels and n sets of ignore
// files for it, in the same directories, whose patterns are mostly built
// from the tree's own names and paths, so that they match often, mixed
// with hand-picked tricky ones.
func randomWorlds(r *rand.Rand, n int) []world {
	var entries []string
	dirs := []string{""}
	var gen func(dir string, depth int)
	gen = func(dir string, depth int) {
		used := map[string]bool{}
		pick := func(pool []string) string {
			for {
				if n := pool[r.IntN(len(pool))]; !used[n] {
					used[n] = true
					return path.Join(dir, n)
				}
			}
		}
		for range 1 + r.IntN(5) {
			entries = append(entries, pick(fileNames))
		}
		if r.IntN(10) == 0 {
			entries = append(entries, pick(dirNames)+"@")
		}
		if depth >= 4 {
			return
		}
		nd := r.IntN(4)
		if depth == 0 {
			nd = 2 + r.IntN(3)
		}
		for range nd {
			p := pick(dirNames)
			if r.IntN(10) == 0 {
				entries = append(entries, p+"/")
				continue
			}
			dirs = append(dirs, p)
			gen(p, depth+1)
		}
	}
	gen("", 0)
	var ignoreDirs []string
	for _, d := range dirs {
		if r.IntN(3) == 0 || (d == "" && r.IntN(10) != 0) {
			ignoreDirs = append(ignoreDirs, d)
		}
	}
	ws := make([]world, n)
	for i := range ws {
		w := world{entries: entries, ignore: map[string]string{}}
		for _, d := range ignoreDirs {
			w.ignore[d] = ""
			if r.IntN(8) != 0 {
				w.ignore[d] = randomIgnoreFile(r, d, entries)
			}
		}
		if r.IntN(5) < 2 {
			w.exclude = randomIgnoreFile(r, "", entries)
		}
		if r.IntN(5) < 2 {
			w.global = randomIgnoreFile(r, "", entries)
			w.globalXDG = r.IntN(2) == 0
		}
		ws[i] = w
	}
	return ws
}

func randomIgnoreFile(r *rand.Rand, base string, targets []string) string {
	eol := "\n"
	if r.IntN(10) == 0 {
		eol = "\r\n"
	}
	var b strings.Builder
	if r.IntN(20) == 0 {
		b.WriteString(bom)
	}
	n := 1 + r.IntN(8)
	for i := range n {
		switch r.IntN(12) {
		case 0:
			b.WriteString(eol) // a blank line
		case 1:
			b.WriteString("# a comment" + eol)
		}
		b.WriteString(randomPattern(r, base, targets))
		if i < n-1 || r.IntN(5) != 0 {
			b.WriteString(eol)
		}
	}
	return b.String()
}

func randomPattern(r *rand.Rand, base string, targets []string) string {
	// A target below base, relative to it, if one is found quickly.
	t := strings.TrimRight(targets[r.IntN(len(targets))], "/@")
	for range 5 {
		if base == "" || strings.HasPrefix(t, base+"/") {
			break
		}
		t = strings.TrimRight(targets[r.IntN(len(targets))], "/@")
	}
	rel := t
	if base != "" && strings.HasPrefix(t, base+"/") {
		rel = t[len(base)+1:]
	}
	name := path.Base(rel)
	dir := path.Dir(rel)
	var p string
	switch r.IntN(12) {
	case 0, 1:
		p = name
	case 2:
		p = "/" + strings.SplitN(rel, "/", 2)[0]
	case 3:
		p = rel
	case 4:
		p = "**/" + name
	case 5:
		if dir == "." {
			p = name + "/**"
		} else {
			p = dir + "/**"
		}
	case 6:
		p = strings.SplitN(rel, "/", 2)[0] + "/**/" + name
	case 7:
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			p = "*" + name[i:]
		} else {
			p = "*" + name[len(name)/2:]
		}
	case 8:
		p = name[:(len(name)+1)/2] + "*"
	case 9, 10:
		p = trickyPatterns[r.IntN(len(trickyPatterns))]
	case 11:
		p = mutate(r, rel)
	}
	if r.IntN(4) == 0 {
		p = "!" + p
	}
	switch r.IntN(20) {
	case 0, 1, 2:
		p += "/"
	case 3, 4:
		p = "/" + p
	case 5:
		p += "  "
	case 6:
		p += "\\ "
	}
	return p
}

// mutate turns some bytes of a path into wildcards, classes or escapes,
// or a component into * or **.
func mutate(r *rand.Rand, rel string) string {
	comps := strings.Split(rel, "/")
	for i, c := range comps {
		switch r.IntN(10) {
		case 0:
			comps[i] = "*"
			continue
		case 1:
			comps[i] = "**"
			continue
		case 2: // "**" inside a component: git's literal-prefix quirk
			k := r.IntN(len(c) + 1)
			comps[i] = c[:k] + "**"
			continue
		case 3:
			k := r.IntN(len(c) + 1)
			comps[i] = "**" + c[k:]
			continue
		}
		var b strings.Builder
		for j := 0; j < len(c); j++ {
			switch r.IntN(12) {
			case 0:
				b.WriteByte('?')
			case 1:
				b.WriteByte('*')
			case 2:
				b.WriteString("[" + c[j:j+1] + "]")
			case 3:
				b.WriteString("[!" + c[j:j+1] + "]")
			case 4:
				b.WriteString("\\" + c[j:j+1])
			case 5:
				lo, hi := c[j]-1, c[j]+1
				b.WriteString("[" + string([]byte{lo}) + "-" + string([]byte{hi}) + "]")
			default:
				b.WriteByte(c[j])
			}
		}
		comps[i] = b.String()
	}
	sep := "/"
	if r.IntN(10) == 0 {
		sep = "\\/" // an escaped slash
	}
	return strings.Join(comps, sep)
}
