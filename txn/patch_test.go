package txn

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFormatPatchAppliesWithGit makes a change, formats it as a patch,
// reverts, and checks that git apply (the oracle) reproduces the change.
func TestFormatPatchAppliesWithGit(t *testing.T) {
	dir := dirtyRepo(t)
	sh(t, dir, `seq 1 40 > long.txt; git add long.txt; git commit -q -m long`)
	r, _ := Discover(dir)
	s, err := r.Snapshot("p")
	if err != nil {
		t.Fatal(err)
	}
	sh(t, dir, `
sed -i 's/^5$/five/; s/^30$/thirty/' long.txt
printf 'no newline' > nonl.txt
printf '\001\002\000bin' > docs/logo.bin
rm pkg/api/x.go
chmod +x notes.txt
mkdir -p "new dir"; printf 'ü\n' > "new dir/ü.txt"
rm link; ln -s run.sh link
`)
	after := fp(t, dir)
	ch, err := r.Measure(s)
	if err != nil {
		t.Fatal(err)
	}
	patch, err := r.FormatPatch(ch.Paths, s.Pre.Files)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Revert(s); err != nil {
		t.Fatal(err)
	}
	pf := filepath.Join(t.TempDir(), "change.patch")
	os.WriteFile(pf, []byte(patch), 0o644)
	cmd := exec.Command("git", "apply", pf)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git apply: %v\n%s\npatch:\n%s", err, out, patch)
	}
	// git apply leaves the index alone; compare the files only.
	files := func(s string) string { return strings.SplitN(s, "== git", 2)[0] }
	if diff := cmp.Diff(files(after), files(fp(t, dir))); diff != "" {
		t.Errorf("git apply of the patch (-change +applied):\n%s", diff)
	}
}

// TestApplyPatch applies a git-made patch with orket and compares with the
// tree git apply produces from the same patch.
func TestApplyPatch(t *testing.T) {
	dir := dirtyRepo(t)
	sh(t, dir, `seq 1 40 > long.txt; git add -A; git commit -q -m all
git checkout -q -b change
sed -i 's/^5$/five/' long.txt; printf 'n\n' > pkg/api/new.go; git rm -q pkg/api/x.go; git mv run.sh tools.sh
chmod -x tools.sh; printf '\377\000' > docs/logo.bin
git add -A; git commit -q -m change
git diff --binary main change > ../change.patch
git checkout -q main`)
	want := t.TempDir()
	sh(t, want, "git clone -q "+dir+" . && git checkout -q change")
	r, _ := Discover(dir)
	pf, _ := os.Open(filepath.Join(dir, "..", "change.patch"))
	defer pf.Close()
	p, err := ParsePatch(pf)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"docs/logo.bin", "long.txt", "pkg/api/new.go", "pkg/api/x.go", "run.sh", "tools.sh"}, p.Paths()); diff != "" {
		t.Errorf("planned touch set (-want +got):\n%s", diff)
	}
	if err := r.ApplyPatch(p); err != nil {
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
	// Applying again fails and writes nothing.
	before := fp(t, dir)
	if err := r.ApplyPatch(p); err == nil {
		t.Error("a patch applied twice")
	}
	if fp(t, dir) != before {
		t.Error("a failed patch wrote something")
	}
}

func TestPatchRefusesUnsafePaths(t *testing.T) {
	for name, patch := range map[string]string{
		"dotdot":   "diff --git a/../x b/../x\nnew file mode 100644\n--- /dev/null\n+++ b/../x\n@@ -0,0 +1 @@\n+x\n",
		"absolute": "--- /dev/null\n+++ /etc/x\n@@ -0,0 +1 @@\n+x\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParsePatch(strings.NewReader(patch))
			var ue *UnsafePathError
			if !errorsAs(err, &ue) {
				t.Fatalf("ParsePatch: %v, want UnsafePathError", err)
			}
		})
	}
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
