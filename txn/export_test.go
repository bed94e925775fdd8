package txn

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Export writes HEAD's tree as git archive does: git is the oracle.
func TestExportLikeGitArchive(t *testing.T) {
	dir := t.TempDir()
	run := func(dir, script string) {
		t.Helper()
		cmd := exec.Command("sh", "-ec", script)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
	}
	run(dir, `git init -q
git config user.email t@example.com; git config user.name T
mkdir -p a/b
printf 'one\n' > a/b/one.txt
printf '#!/bin/sh\necho hi\n' > run.sh; chmod +x run.sh
ln -s a/b/one.txt link
printf 'x' > 'sp ace'
git add -A; git commit -qm init
printf 'dirty\n' >> a/b/one.txt; printf 'untracked\n' > u.txt`)
	r, err := Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, want := t.TempDir(), t.TempDir()
	if err := r.Export("", got); err != nil {
		t.Fatal(err)
	}
	run(dir, "git archive HEAD | tar -x -C "+want)
	// Each copy's files as git would index them: path, mode, content.
	index := func(d string) string {
		run(d, "git init -q; git add -A")
		out, err := exec.Command("git", "-C", d, "ls-files", "-s").Output()
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	if g, w := index(got), index(want); g != w || g == "" {
		t.Errorf("Export differs from git archive:\n%s---\n%s", g, w)
	}
	if _, err := os.Stat(filepath.Join(got, "u.txt")); err == nil {
		t.Error("an untracked file was exported")
	}
}
