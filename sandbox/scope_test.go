package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/scope"
)

func TestBases(t *testing.T) {
	for _, c := range []struct {
		pattern   string
		wantBases []string
		wantExact bool
	}{
		{"pkg/api", []string{"pkg/api"}, true},
		{"go.mod", []string{"go.mod"}, true},
		{"**", []string{""}, true},
		{"pkg/**", []string{"pkg"}, true},
		{"pkg/**/*.go", []string{"pkg"}, false},
		{"*.go", []string{""}, false},
		{"pkg/api/*_test.go", []string{"pkg/api"}, false},
		{"pkg/a?i/x", []string{"pkg"}, false},
		{"pkg/[ab]pi/**", []string{"pkg"}, false},
		{"{cmd,internal}/**", []string{"cmd", "internal"}, true},
		{"{cmd,internal/{a,b}}/**/*.go", []string{"cmd", "internal/a", "internal/b"}, false},
		{"pkg/{a,b}", []string{"pkg/a", "pkg/b"}, false},
		{"pkg/{,x}y/**", []string{"pkg/y", "pkg/xy"}, true},
		{"{a,[b]}/x", []string{""}, false}, // a class inside braces: not expanded
		{`a\*b/**`, []string{"a*b"}, true},
		{`a\/b*`, []string{"a"}, false},
		{`pkg/\{x\}/**`, []string{"pkg/{x}"}, true},
	} {
		t.Run(c.pattern, func(t *testing.T) {
			bases, exact := Bases(c.pattern)
			if diff := cmp.Diff(c.wantBases, bases); diff != "" || exact != c.wantExact {
				t.Errorf("Bases(%q) = %q, %v; want %q, %v", c.pattern, bases, exact, c.wantBases, c.wantExact)
			}
		})
	}
}

func TestScopeDirs(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"pkg/api", "cmd/orket", ".git/hooks", "outside"} {
		mustMkdir(t, filepath.Join(root, d))
	}
	mustWrite(t, filepath.Join(root, "go.mod"), "module x\n")
	mustWrite(t, filepath.Join(root, "pkg/file"), "x\n")
	if err := os.Symlink(filepath.Join(root, "outside"), filepath.Join(root, "pkg/link")); err != nil {
		t.Fatal(err)
	}
	rootNote := "the repository root: .git and .orket are within reach; measurement guards them"
	for _, c := range []struct {
		pattern string
		want    ScopeDir
	}{
		{"pkg/api", ScopeDir{Dirs: []string{"pkg/api"}}},
		{"pkg/**/*.go", ScopeDir{Dirs: []string{"pkg"}, Widened: true}},
		{"{pkg/api,cmd}/**", ScopeDir{Dirs: []string{"pkg/api", "cmd"}}},
		{"pkg/new/sub", ScopeDir{Dirs: []string{"pkg"}, Widened: true, Notes: []string{"pkg/new/sub does not exist yet: opened pkg"}}},
		{"pkg/link/**", ScopeDir{Dirs: []string{"pkg"}, Widened: true, Notes: []string{"pkg/link goes through the symbolic link pkg/link: opened pkg"}}},
		{"pkg/file/x", ScopeDir{Dirs: []string{"pkg"}, Widened: true, Notes: []string{"pkg/file/x goes through the file pkg/file: opened pkg"}}},
		{"go.mod", ScopeDir{Dirs: []string{"."}, Widened: true, Notes: []string{"go.mod is a file: opened .", rootNote}}},
		{"*.go", ScopeDir{Dirs: []string{"."}, Widened: true, Notes: []string{rootNote}}},
		{"**", ScopeDir{Dirs: []string{"."}, Notes: []string{rootNote}}},
		{".git/hooks/**", ScopeDir{Dirs: []string{}, Notes: []string{"names only .git paths, which no edit may write: nothing opened"}}},
		{"{.orket,docs}/**", ScopeDir{Dirs: []string{"."}, Notes: []string{"names only .orket paths, which no edit may write: nothing opened", "docs does not exist yet: opened .", rootNote}, Widened: true}},
	} {
		t.Run(c.pattern, func(t *testing.T) {
			c.want.Pattern = c.pattern
			got := ScopeDirs(root, []string{c.pattern})
			if diff := cmp.Diff([]ScopeDir{c.want}, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// covered reports whether p is at or below one of bases.
func covered(bases []string, p string) bool {
	for _, b := range bases {
		if b == "" || p == b || strings.HasPrefix(p, b+"/") {
			return true
		}
	}
	return false
}

// checkSound fails when a path the scope allows lies outside every base
// of its pattern: the sandbox would then be narrower than the scope. It
// reports whether the scope allows p.
func checkSound(t *testing.T, pattern, p string) bool {
	sc, err := scope.Parse([]string{pattern})
	if err != nil {
		return false
	}
	pat := sc.Patterns()[0]
	if !sc.Contains(p) {
		return false
	}
	if bases, _ := Bases(pat); !covered(bases, p) {
		t.Fatalf("scope %q allows %q, but its bases %q do not cover it", pat, p, bases)
	}
	return true
}

// TestBasesCoverScope checks soundness on every path of a small universe
// against patterns of every shape.
func TestBasesCoverScope(t *testing.T) {
	names := []string{"a", "b", "x.go", "a.go", "{a}", "*", "ab"}
	var paths []string
	var walk func(prefix string, depth int)
	walk = func(prefix string, depth int) {
		for _, n := range names {
			p := strings.TrimPrefix(prefix+"/"+n, "/")
			paths = append(paths, p)
			if depth < 3 {
				walk(p, depth+1)
			}
		}
	}
	walk("", 1)
	patterns := []string{"a", "a/b", "**", "a/**", "*.go", "a/*.go", "**/*.go", "a/**/b", "{a,b}/**", "{a,b/{a,b}}/*.go",
		"a?", "[ab]/x.go", "a/{,b}", `\{a\}/**`, `\*`, "{a,[b]}/x.go", "a/**/", "./a", "a//b", "{a/b,b}/**/x.go", "*/b/**"}
	allowed := 0
	for _, pat := range patterns {
		for _, p := range paths {
			if checkSound(t, pat, p) {
				allowed++
			}
		}
	}
	if allowed < 500 {
		t.Errorf("only %d (pattern, path) pairs allowed: the universe tests too little", allowed)
	}
}

// FuzzBases: whatever the pattern, every path its scope allows is
// covered by its bases.
func FuzzBases(f *testing.F) {
	for _, s := range [][2]string{
		{"pkg/**/*.go", "pkg/a/b.go"}, {"{cmd,internal}/**", "internal/x"}, {"a/{b,c/{d,e}}/*", "a/c/e/f"},
		{`a\*b/**`, "a*b/c"}, {"*.go", "x.go"}, {"a/[bc]/d", "a/b/d"}, {"a/{,b}x", "a/x"}, {"go.mod", "go.mod"},
		{"a/?/**", "a/b/c"}, {"{a,b}{c,d}/**", "bd/x"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, p string) {
		if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "//") || strings.HasSuffix(p, "/") {
			return
		}
		for _, seg := range strings.Split(p, "/") {
			if seg == "." || seg == ".." {
				return
			}
		}
		checkSound(t, pattern, p)
		Bases(pattern) // never panics, whatever the pattern
	})
}

// TestWriteMissingFile: a sandbox.write entry naming a file that does not
// exist is not made a directory (the tool that writes it would break); a
// missing directory is made.
func TestWriteMissingFile(t *testing.T) {
	home := t.TempDir()
	for w, dir := range map[string]bool{"~/.claude.json": false, "~/.cache/go-build": true, "~/.npm": true, "~/data/": true} {
		g, err := writeGrant(w, t.TempDir(), home)
		if err != nil {
			t.Fatal(err)
		}
		_, statErr := os.Stat(g.Path)
		if made := statErr == nil; made != dir {
			t.Errorf("%s: made a directory = %v, want %v (grant %+v)", w, made, dir, g)
		}
		if !dir && (g.mask != 0 || g.Note == "") {
			t.Errorf("%s: a missing file must be reported, not opened: %+v", w, g)
		}
	}
}
