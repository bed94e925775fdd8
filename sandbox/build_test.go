package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Build directories: a missing one with Make is made and opened, one
// already there is opened, a missing one without Make is left alone, one
// inside the scope needs nothing, and a symbolic link is never followed
// (an earlier edit may have left one pointing out of the repository).
// Under the kernel, the edit writes in them and nowhere else.
func TestBuildDirs(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t)
	mustMkdir(t, filepath.Join(f.root, "build"))
	mustMkdir(t, filepath.Join(f.base, "elsewhere"))
	if err := os.Symlink(filepath.Join(f.base, "elsewhere"), filepath.Join(f.root, "out")); err != nil {
		t.Fatal(err)
	}
	s := f.sandbox(t, Policy{Scope: []string{"pkg/api"}, Build: []BuildDir{
		{Path: "target", Make: true, Why: "Cargo.toml"},
		{Path: "build", Why: "already there"},
		{Path: "dist", Why: "already there"},
		{Path: "pkg/api/__pycache__", Make: true, Why: "pyproject.toml"},
		{Path: "out", Make: true, Why: "a symlink"},
		{Path: "out/x", Make: true, Why: "through a symlink"},
	}})
	notes := map[string]string{}
	for _, g := range s.Report().Writable {
		if g.For == "build" {
			rel, _ := filepath.Rel(f.root, g.Path)
			notes[rel] = g.Note
		}
	}
	for p, want := range map[string]string{"target": "Cargo.toml; created", "build": "already there", "out": "not opened", "out/x": "not opened"} {
		if !strings.HasPrefix(notes[p], want) && !strings.Contains(notes[p], want) {
			t.Errorf("build grant %s: note %q, want %q", p, notes[p], want)
		}
	}
	for _, p := range []string{"dist", "pkg/api/__pycache__"} {
		if _, ok := notes[p]; ok {
			t.Errorf("build grant %s: %q, want none", p, notes[p])
		}
	}
	if exists(filepath.Join(f.root, "dist")) || exists(filepath.Join(f.root, "pkg/api/__pycache__")) || exists(filepath.Join(f.base, "elsewhere/x")) {
		t.Error("a directory was made that should not have been")
	}
	out, code := f.sh(t, s, `echo t > target/t && echo b > build/b && mkdir -p target/debug && echo d > target/debug/.lock &&
		! echo x > out/y 2>/dev/null && ! echo x > docs/z 2>/dev/null && ! mkdir dist 2>/dev/null`)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if read(filepath.Join(f.root, "target/debug/.lock")) != "d\n" || exists(filepath.Join(f.base, "elsewhere/y")) {
		t.Error("the writes did not land where they should")
	}
}
