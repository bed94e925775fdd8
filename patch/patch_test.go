package patch

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/internal/fingerprint"
	"github.com/orket/orket/internal/fsroot"
)

func gitEnv(t *testing.T) {
	t.Helper()
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[init]\n\tdefaultBranch = main\n"), 0o644)
	for k, v := range map[string]string{
		"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
		"GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com",
	} {
		t.Setenv(k, v)
	}
}

func sh(t *testing.T, dir, script string) string {
	t.Helper()
	cmd := exec.Command("sh", "-ec", script)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	return string(out)
}

// repo makes a repository with text, binary, executable and symlinked
// files, all committed.
func repo(t *testing.T) string {
	t.Helper()
	gitEnv(t)
	dir := t.TempDir()
	sh(t, dir, `
git init -q
mkdir -p pkg/api docs
printf 'package api\n\nfunc X() {}\n' > pkg/api/x.go
printf 'package api\n' > pkg/api/server.go
printf '#!/bin/sh\necho hi\n' > run.sh; chmod +x run.sh
printf '\000\001\002binary\377' > docs/logo.bin
seq 1 40 > long.txt
ln -s pkg/api/x.go link
git add -A
git commit -q -m init`)
	return dir
}

func root(t *testing.T, dir string) *fsroot.Root {
	t.Helper()
	r, err := fsroot.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// gitBefore reads a path's state at HEAD with the git CLI.
func gitBefore(dir string) Before {
	return func(p string) (*Side, error) {
		out, err := exec.Command("git", "-C", dir, "ls-tree", "HEAD", "--", p).Output()
		if err != nil {
			return nil, err
		}
		fields := strings.Fields(string(out))
		if len(fields) < 3 {
			return nil, nil
		}
		content, err := exec.Command("git", "-C", dir, "cat-file", "blob", fields[2]).Output()
		if err != nil {
			return nil, err
		}
		m, _ := filemode.New(fields[0])
		return &Side{Mode: m, OID: plumbing.NewHash(fields[2]), Content: content}, nil
	}
}

// TestFormatAppliesWithGit makes a change, formats it as a patch, undoes
// it, and checks that git apply (the oracle) reproduces the change.
func TestFormatAppliesWithGit(t *testing.T) {
	dir := repo(t)
	sh(t, dir, `
sed -i 's/^5$/five/; s/^30$/thirty/' long.txt
printf 'no newline' > nonl.txt
printf '\001\002\000bin' > docs/logo.bin
rm pkg/api/x.go
chmod -x run.sh
mkdir -p "new dir"; printf 'ü\n' > "new dir/ü.txt"
rm link; ln -s run.sh link
`)
	after, err := fingerprint.Of(dir)
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{"docs/logo.bin", "link", "long.txt", "new dir/ü.txt", "nonl.txt", "pkg/api/x.go", "run.sh"}
	var buf bytes.Buffer
	if err := Format(&buf, root(t, dir), paths, gitBefore(dir), nil); err != nil {
		t.Fatal(err)
	}
	sh(t, dir, `git checkout -q -- . && git clean -fdq`)
	pf := filepath.Join(t.TempDir(), "change.patch")
	os.WriteFile(pf, buf.Bytes(), 0o644)
	sh(t, dir, "git apply "+pf)
	got, err := fingerprint.Of(dir)
	if err != nil {
		t.Fatal(err)
	}
	// git apply leaves the index alone; compare the files only.
	files := func(s string) string { return strings.SplitN(s, "== git", 2)[0] }
	if diff := cmp.Diff(files(after), files(got)); diff != "" {
		t.Errorf("git apply of the patch (-change +applied):\n%s\npatch:\n%s", diff, buf.String())
	}
}

// TestApply applies a git-made patch and compares with the tree git apply
// produces from the same patch.
func TestApply(t *testing.T) {
	dir := repo(t)
	sh(t, dir, `git checkout -q -b change
sed -i 's/^5$/five/' long.txt; printf 'n\n' > pkg/api/new.go; git rm -q pkg/api/x.go; git mv run.sh tools.sh
chmod -x tools.sh; printf '\377\000' > docs/logo.bin
git add -A; git commit -q -m change
git diff --binary main change > ../change.patch
git checkout -q main`)
	want := t.TempDir()
	sh(t, want, "git clone -q "+dir+" . && git checkout -q change")
	pf, _ := os.Open(filepath.Join(dir, "..", "change.patch"))
	defer pf.Close()
	p, err := Parse(pf)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"docs/logo.bin", "long.txt", "pkg/api/new.go", "pkg/api/x.go", "run.sh", "tools.sh"}, p.Paths()); diff != "" {
		t.Errorf("planned touch set (-want +got):\n%s", diff)
	}
	rt := root(t, dir)
	plan, err := p.Plan(rt)
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Apply(rt); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"long.txt", "pkg/api/new.go", "tools.sh", "docs/logo.bin"} {
		a, _ := os.ReadFile(filepath.Join(dir, f))
		b, _ := os.ReadFile(filepath.Join(want, f))
		if string(a) != string(b) {
			t.Errorf("%s differs from git's result", f)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "pkg/api/x.go")); !os.IsNotExist(err) {
		t.Error("deleted file still there")
	}
	if fi, _ := os.Stat(filepath.Join(dir, "tools.sh")); fi == nil || fi.Mode()&0o100 != 0 {
		t.Error("tools.sh should exist without its exec bit")
	}
	// Planning again fails: the patch no longer applies.
	if _, err := p.Plan(rt); err == nil {
		t.Error("a patch planned twice")
	}
}

func TestRefusesUnsafePaths(t *testing.T) {
	for name, patch := range map[string]string{
		"dotdot":   "diff --git a/../x b/../x\nnew file mode 100644\n--- /dev/null\n+++ b/../x\n@@ -0,0 +1 @@\n+x\n",
		"absolute": "--- /dev/null\n+++ /etc/x\n@@ -0,0 +1 @@\n+x\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(patch))
			var ue *UnsafePathError
			if !errors.As(err, &ue) {
				t.Fatalf("Parse: %v, want UnsafePathError", err)
			}
		})
	}
}

// TestRefusesWritesThroughSymlinks: a patch may not write below a symlink,
// whether the link is on disk or made by the patch itself (a link to
// outside the repository, then a file "inside" it).
func TestRefusesWritesThroughSymlinks(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "victim.txt"), []byte("precious\n"), 0o644)
	for name, tc := range map[string]struct{ setup, patch string }{
		"link-made-by-patch": {"", "diff --git a/pkg/out b/pkg/out\nnew file mode 120000\n--- /dev/null\n+++ b/pkg/out\n@@ -0,0 +1 @@\n+" + outside + "\n\\ No newline at end of file\n" +
			"diff --git a/pkg/out/victim.txt b/pkg/out/victim.txt\nnew file mode 100644\n--- /dev/null\n+++ b/pkg/out/victim.txt\n@@ -0,0 +1 @@\n+overwritten\n"},
		"link-on-disk":             {"ln -s " + outside + " pkg/out", "diff --git a/pkg/out/new.txt b/pkg/out/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/pkg/out/new.txt\n@@ -0,0 +1 @@\n+x\n"},
		"link-on-disk, plain diff": {"ln -s " + outside + " pkg/out", "--- /dev/null\n+++ b/pkg/out/new.txt\n@@ -0,0 +1 @@\n+x\n"},
		"link on disk, plain diff changing a file through it": {"ln -s " + outside + " pkg/out", "--- a/pkg/out/victim.txt\n+++ b/pkg/out/victim.txt\n@@ -1 +1 @@\n-precious\n+overwritten\n"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := repo(t)
			if tc.setup != "" {
				sh(t, dir, tc.setup)
			}
			p, err := Parse(strings.NewReader(tc.patch))
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Plan(root(t, dir))
			var se *SymlinkPathError
			if !errors.As(err, &se) {
				t.Fatalf("Plan: %v, want SymlinkPathError", err)
			}
			if b, _ := os.ReadFile(filepath.Join(outside, "victim.txt")); string(b) != "precious\n" {
				t.Errorf("the file outside was overwritten: %q", b)
			}
			if _, err := os.Stat(filepath.Join(outside, "new.txt")); err == nil {
				t.Error("a file was created outside the repository")
			}
		})
	}
}

// TestWriterRefusesUnplannedPaths: even a plan altered after planning
// writes nothing it did not name.
func TestWriterRefusesUnplannedPaths(t *testing.T) {
	dir := repo(t)
	rt := root(t, dir)
	w := newPlannedWriter(rt, &Plan{writes: []write{{path: "a.txt", content: []byte("a\n"), mode: 0o644}}})
	err := w.write(write{path: "b.txt", content: []byte("b\n"), mode: 0o644})
	var pe *Error
	if !errors.As(err, &pe) || !errors.Is(err, errNotPlanned) {
		t.Fatalf("write of an unplanned path: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "b.txt")); err == nil {
		t.Error("an unplanned path was written")
	}
	if err := w.remove("run.sh"); !errors.Is(err, errNotPlanned) {
		t.Fatalf("remove of an unplanned path: %v", err)
	}
}
