package txn

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/internal/fsmonitor/watchmantest"
)

// shapes are repositories whose work tree git does not hold byte for byte
// in its index, each clean (git status says nothing) and with its files
// older than the index, so that the index vouches for them by their stat
// as git does. edit changes a file whose bytes differ from its blob,
// deletes one, and creates one; touched is the touch set.
var shapes = []struct {
	name, setup, edit string
	touched           []string
}{
	{"autocrlf", `git config core.autocrlf true
printf 'a\r\nb\r\n' > a.txt; printf 'c\r\n' > c.txt; printf 'k\r\n' > keep.txt`,
		`printf 'a\r\nB\r\n' > a.txt; rm c.txt; printf 'n\r\n' > n.txt`, []string{"a.txt", "c.txt", "n.txt"}},
	{"eol-attribute", `mkdir sub; printf '*.txt text eol=crlf\n' > sub/.gitattributes
printf 'a\r\n' > sub/a.txt; printf 'c\r\n' > sub/c.txt; printf 'plain\n' > top.txt`,
		`printf 'A\r\n' > sub/a.txt; rm sub/c.txt; printf 'n\r\n' > sub/n.txt`, []string{"sub/a.txt", "sub/c.txt", "sub/n.txt"}},
	{"filter", `git config filter.up.clean 'tr a-z A-Z'; git config filter.up.smudge 'tr A-Z a-z'
printf '*.txt filter=up\n' > .gitattributes
printf 'lower\n' > a.txt; printf 'case\n' > c.txt`,
		`printf 'changed\n' > a.txt; rm c.txt; printf 'new\n' > n.txt`, []string{"a.txt", "c.txt", "n.txt"}},
	{"macro-ident", `printf '[attr]expand ident\n*.c expand\n' > .gitattributes
printf '$Id$\nint a;\n' > a.c; printf '$Id$\n' > c.c`,
		`printf '$Id$\nint b;\n' > a.c; rm c.c; printf 'n\n' > n.c`, []string{"a.c", "c.c", "n.c"}},
	{"filemode-false", `printf '#!/bin/sh\n' > run.sh; printf 'c\n' > c.txt`,
		`chmod -x run.sh; rm c.txt; printf 'n\n' > n.txt`, []string{"c.txt", "n.txt", "run.sh"}},
	{"sparse", `mkdir -p pkg docs; printf 'a\n' > pkg/a.txt; printf 'c\n' > pkg/c.txt; printf 'd\n' > docs/d.md`,
		`printf 'A\n' > pkg/a.txt; rm pkg/c.txt; mkdir docs; printf 'made\n' > docs/d.md`, []string{"docs/d.md", "pkg/a.txt", "pkg/c.txt"}},
	{"skip-worktree", `printf 'default\n' > conf.txt; printf 'c\n' > c.txt`,
		`printf 'edited\n' > conf.txt; rm c.txt; printf 'n\n' > n.txt`, []string{"c.txt", "conf.txt", "n.txt"}},
}

// after runs once the shape's files are committed.
var shapesAfter = map[string]string{
	"filemode-false": `git config core.fileMode false; chmod +x run.sh`,
	"sparse":         `git sparse-checkout set pkg`,
	"macro-ident":    `rm a.c c.c; git checkout -- a.c c.c; grep -q 'Id: ' a.c`,
	"skip-worktree":  `git update-index --skip-worktree conf.txt; printf 'local\n' > conf.txt`,
}

func shapeRepo(t *testing.T, setup, after string) string {
	t.Helper()
	gitEnv(t)
	dir := filepath.Join(t.TempDir(), "repo")
	sh(t, filepath.Dir(dir), "git init -q repo")
	sh(t, dir, setup+`
find . -path ./.git -prune -o -type f -exec touch -d 2020-01-01 {} +
git add -A
git commit -q -m init
`+after)
	if out, err := exec.Command("git", "-C", dir, "status", "--porcelain").Output(); err != nil || len(out) > 0 {
		t.Fatalf("the shape is not clean for git: %v\n%s", err, out)
	}
	if testFSMonitor {
		watchmantest.Use(t, dir)
	}
	return dir
}

// TestShapes runs each shape through a revert and a recovery: the tree is
// the same, bit for bit, with git status, after each; a clean tree is not
// dirty; the touch set is what the edit changed.
func TestShapes(t *testing.T) {
	withJournal(t, false, func(t *testing.T, _ func(int) bool) {
		for _, sp := range shapes {
			t.Run(sp.name, func(t *testing.T) {
				for _, recovered := range []bool{false, true} {
					dir := shapeRepo(t, sp.setup, shapesAfter[sp.name])
					before := fp(t, dir)
					// A first snapshot fills the scan cache: the second
					// starts from it (and, with a hook, asks it).
					primeHook(t, dir)
					r := open(t, dir)
					tx := begin(t, r, "shape")
					wantHook(t, "snapshot", tx.Snapshot().Scan)
					if tx.Snapshot().Dirty() {
						t.Error("a clean tree is dirty")
					}
					sh(t, dir, sp.edit)
					ch, err := tx.Measure()
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(sp.touched, ch.Paths, cmpEmpty); diff != "" {
						t.Errorf("touch set (-want +got):\n%s", diff)
					}
					if recovered {
						tx = resume(t, dir)
					}
					res, err := tx.Revert()
					if err != nil {
						t.Fatal(err)
					}
					if err := tx.End(); err != nil {
						t.Fatal(err)
					}
					if !res.Verified {
						t.Error("revert not verified")
					}
					if got := fp(t, dir); got != before {
						t.Errorf("recovered=%v: after the revert (-before +after):\n%s", recovered, cmp.Diff(before, got))
					}
				}
			})
		}
	})
}

// TestChangedSinceFileModeFalse: under core.fileMode=false the executable
// bit is not a change git reports, so a verify-only run's diff from a
// revision leaves it out; a content change is still one.
func TestChangedSinceFileModeFalse(t *testing.T) {
	dir := shapeRepo(t, `printf '#!/bin/sh\n' > run.sh; printf 'c\n' > c.txt`, shapesAfter["filemode-false"])
	r := open(t, dir)
	got, _, err := r.ChangedSince("")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("ChangedSince = %v, want nothing (only the executable bit differs)", got)
	}
	sh(t, dir, `printf 'd\n' > c.txt`)
	if got, _, err = r.ChangedSince(""); err != nil || !cmp.Equal(got, []string{"c.txt"}) {
		t.Errorf("ChangedSince = %v, %v, want [c.txt]", got, err)
	}
}
