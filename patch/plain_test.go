package patch

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/internal/fingerprint"
	"github.com/orket/orket/internal/fsroot"
)

// plainRepo is repo with a SQL file whose lines look like patch headers
// once diffed ("-- x" removed reads "--- x") and a directory with a space.
func plainRepo(t *testing.T) string {
	dir := repo(t)
	sh(t, dir, `
{ echo '-- head'; seq 1 12; echo '-- old'; echo '++ keep'; seq 13 30; } > q.sql
mkdir "sp ace"; printf 'x\n' > "sp ace/f.txt"
git add -A; git commit -q -m sql`)
	return dir
}

// copies puts two copies of the committed tree beside the repository, as
// someone about to run diff -ru would: ../OLD and ../NEW.
func copies(oldDir, newDir string) string {
	return `rm -rf ../` + oldDir + ` ../` + newDir + `; mkdir ../` + oldDir + `
git archive HEAD | tar -x -C ../` + oldDir + `; cp -a ../` + oldDir + ` ../` + newDir + `
`
}

// TestPlainDiffs applies plain diffs made by diff(1) and by hand with
// orket, and with git apply -pN in a clone (the oracle, which must also
// accept the patch with --check), and compares the trees.
func TestPlainDiffs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		make  string // writes ../p.diff, from the repository
		strip int
		paths []string
		git   string // more options for git apply
	}{{
		name: "diff -ruN between copies a and b",
		make: copies("a", "b") + `cd ..
sed -i 's/^7$/seven/' b/long.txt; printf 'package api\n\nfunc Y() {}\n' > b/pkg/api/x.go
printf 'new\n' > b/pkg/api/new.go; rm b/run.sh; printf 'y\n' >> "b/sp ace/f.txt"
diff -ruN --no-dereference a b > p.diff || true`,
		strip: 1,
		paths: []string{"long.txt", "pkg/api/new.go", "pkg/api/x.go", "run.sh", "sp ace/f.txt"},
	}, {
		name: "diff -ruN between old and new, a diff line before each file",
		make: copies("old", "new") + `cd ..
sed -i 's/^3$/three/' new/long.txt; mkdir -p new/pkg/lib; printf 'lib\n' > new/pkg/lib/l.go; rm new/pkg/api/server.go
diff -ruN --no-dereference old new > p.diff || true
grep -q "^diff -ruN --no-dereference old/long.txt new/long.txt$" p.diff
grep -q '^--- old/long.txt	[0-9-]* [0-9:.]* [-+][0-9]*$' p.diff`,
		strip: 1,
		paths: []string{"long.txt", "pkg/api/server.go", "pkg/lib/l.go"},
	}, {
		name: "diff -u without prefixes: file.orig to file, file to file.new",
		make: `cp pkg/api/x.go pkg/api/x.go.orig; printf 'package api\n\nfunc Z() {}\n' > pkg/api/x.go
diff -u pkg/api/x.go.orig pkg/api/x.go > ../p.diff || true
cp long.txt long.txt.new; sed -i 's/^20$/twenty/' long.txt.new
diff -u long.txt long.txt.new >> ../p.diff || true
git checkout -q -- .; rm pkg/api/x.go.orig long.txt.new`,
		strip: 0,
		paths: []string{"long.txt", "pkg/api/x.go"},
	}, {
		name: "a new and a deleted file through /dev/null, with a/ b/",
		make: `printf -- '--- /dev/null\n+++ b/pkg/api/new.go\n@@ -0,0 +1 @@\n+package api\n' > ../p.diff
printf -- '--- a/run.sh\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-#!/bin/sh\n-echo hi\n' >> ../p.diff`,
		strip: 1,
		paths: []string{"pkg/api/new.go", "run.sh"},
	}, {
		// Without context, a hunk that turns "-- old" into "++ new"
		// ends in lines that, with the next hunk's header, read as a
		// file header: only the hunk's counts tell them apart.
		name: "removed and added lines that read as headers",
		make: `sed 's/^-- old$/++ new/; s/^25$/twenty-five/' q.sql > ../q.new
diff -U0 --label a/q.sql --label b/q.sql q.sql ../q.new > ../p.diff || true
grep -A2 '^--- old$' ../p.diff | grep -q '^@@ -'`,
		strip: 1,
		paths: []string{"q.sql"},
		git:   " --unidiff-zero",
	}, {
		name: "a git diff and a plain one in one patch",
		make: `sed -i 's/^1$/one/' long.txt; git diff > ../p.diff; git checkout -q -- .
printf -- '--- a/pkg/api/server.go\n+++ b/pkg/api/server.go\n@@ -1 +1,2 @@\n package api\n+// server\n' >> ../p.diff`,
		strip: 1,
		paths: []string{"long.txt", "pkg/api/server.go"},
	}, {
		name: "a top-level file without prefixes",
		make: `sed 's/^9$/nine/' long.txt > ../long.txt
diff -u --label long.txt.orig --label long.txt long.txt ../long.txt > ../p.diff || true`,
		strip: 0,
		paths: []string{"long.txt"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := plainRepo(t)
			sh(t, dir, tc.make)
			pf := filepath.Join(dir, "..", "p.diff")
			if !strings.Contains(sh(t, dir, "cat ../p.diff"), "\n+++ ") {
				t.Fatal("no patch was made")
			}
			oracle := t.TempDir()
			p := "-p" + strconv.Itoa(tc.strip) + tc.git
			sh(t, oracle, "git clone -q "+dir+" . && git apply --check "+p+" "+pf+" && git apply "+p+" "+pf)

			f, err := os.Open(pf)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			pt, err := Parse(f)
			if err != nil {
				t.Fatalf("Parse: %v\n%s", err, sh(t, dir, "cat ../p.diff"))
			}
			rt := root(t, dir)
			plan, err := pt.Plan(rt)
			if err != nil {
				t.Fatalf("Plan: %v\n%s", err, sh(t, dir, "cat ../p.diff"))
			}
			if pt.Strip() != tc.strip {
				t.Errorf("strip level %d, want %d", pt.Strip(), tc.strip)
			}
			if diff := cmp.Diff(tc.paths, pt.Paths()); diff != "" {
				t.Errorf("touch set (-want +got):\n%s", diff)
			}
			if err := plan.Apply(rt); err != nil {
				t.Fatal(err)
			}
			files := func(d string) string {
				fp, err := fingerprint.Of(d)
				if err != nil {
					t.Fatal(err)
				}
				return strings.SplitN(fp, "== git", 2)[0]
			}
			if diff := cmp.Diff(files(oracle), files(dir)); diff != "" {
				t.Errorf("orket's tree differs from git apply %s's (-git +orket):\n%s", p, diff)
			}
		})
	}
}

// TestPlainDiffRefusals: a plain diff whose names could be read two ways,
// or fit the tree at no strip level, is refused naming both readings;
// nothing is guessed.
func TestPlainDiffRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, setup, patch string
		paths              []string
		msg                string
	}{{
		name:  "both readings exist",
		setup: "mkdir src; cp long.txt src/long.txt",
		patch: "--- src/long.txt.orig\n+++ src/long.txt\n@@ -1 +1 @@\n-1\n+one\n",
		paths: []string{"src/long.txt", "long.txt"},
		msg:   "both as written (src/long.txt) and without their first directory (long.txt)",
	}, {
		name:  "a new file without a/ b/",
		patch: "--- /dev/null\n+++ pkg/api/new.go\n@@ -0,0 +1 @@\n+x\n",
		paths: []string{"pkg/api/new.go", "api/new.go"},
		msg:   "both as written",
	}, {
		name:  "neither reading exists",
		patch: "--- lib/gone.rs\n+++ lib/gone.rs\n@@ -1 +1 @@\n-a\n+b\n",
		paths: []string{"lib/gone.rs", "gone.rs"},
		msg:   "neither as written (lib/gone.rs does not exist) nor without their first directory (gone.rs does not exist)",
	}, {
		name:  "files fit at different levels",
		patch: "--- a/long.txt\n+++ b/long.txt\n@@ -1 +1 @@\n-1\n+one\n--- pkg/api/x.go\n+++ pkg/api/x.go\n@@ -1 +1 @@\n-package api\n+package apx\n",
		paths: []string{"b/long.txt", "api/x.go"},
		msg:   "neither",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := repo(t)
			if tc.setup != "" {
				sh(t, dir, tc.setup)
			}
			before, _ := fingerprint.Of(dir)
			p, err := Parse(strings.NewReader(tc.patch))
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Plan(root(t, dir))
			var se *StripError
			if !errors.As(err, &se) {
				t.Fatalf("Plan: %v, want a StripError", err)
			}
			if diff := cmp.Diff(tc.paths, se.Paths); diff != "" {
				t.Errorf("paths named (-want +got):\n%s", diff)
			}
			if !strings.Contains(se.Error(), tc.msg) {
				t.Errorf("message %q, want it to say %q", se.Error(), tc.msg)
			}
			if after, _ := fingerprint.Of(dir); after != before {
				t.Error("the tree changed")
			}
		})
	}
}

// TestPlainDiffUnsafe: the names of a plain diff are held to the same
// rules as a git diff's, before and after stripping.
func TestPlainDiffUnsafe(t *testing.T) {
	for name, patch := range map[string]string{
		"dotdot":          "--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n",
		"absolute new":    "--- /dev/null\n+++ /tmp/x\n@@ -0,0 +1 @@\n+x\n",
		"dotdot stripped": "--- a/../../x\n+++ b/pkg/../../x\n@@ -1 +1 @@\n-a\n+b\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := repo(t)
			p, err := Parse(strings.NewReader(patch))
			if err == nil {
				_, err = p.Plan(root(t, dir))
			}
			var ue *UnsafePathError
			if !errors.As(err, &ue) {
				t.Fatalf("got %v, want an UnsafePathError", err)
			}
		})
	}
}

// TestScanHeaders reads the shapes of file header the parser meets, and
// skips hunk bodies by their counts.
func TestScanHeaders(t *testing.T) {
	got, err := scanHeaders([]byte(
		"diff -ru old/x new/x\n--- old/x\t2024-01-02 03:04:05.000000000 +0100\n+++ new/x\t2024-01-02 03:04:06.000000000 +0100\n@@ -1,2 +1,2 @@\n--- a\n+++ b\n" +
			"@@ -9 +9 @@\n-z\n+y\n\\ No newline at end of file\n" +
			"diff --git a/g b/g\nindex 1..2 100644\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-1\n+2\n" +
			"--- \"a/sp\\tace\"\n+++ \"b/sp\\tace\"\n@@ -1 +1 @@\n-1\n+2\n" +
			"--- /dev/null\n+++ b//n//x\n@@ -0,0 +1 @@\n+n\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []*plainNames{{"old/x", "new/x"}, nil, {"a/sp\tace", "b/sp\tace"}, {"", "b/n/x"}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(plainNames{})); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
}

func TestStripName(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{{"a/b/c", 0, "a/b/c"}, {"a/b/c", 1, "b/c"}, {"a//b", 1, "b"}, {"x", 1, ""}, {"a/", 1, ""}} {
		got, err := stripName(tc.in, tc.n)
		if got != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("stripName(%q, %d) = %q, %v; want %q", tc.in, tc.n, got, err, tc.want)
		}
	}
}

// TestPathsBeforeResolve: a plain diff's touch set is never read before
// its strip level is known.
func TestPathsBeforeResolve(t *testing.T) {
	p, err := Parse(strings.NewReader("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if recover() == nil {
			t.Error("Paths of an unresolved plain diff did not panic")
		}
	}()
	p.Paths()
}

// FuzzParse: whatever the input, Parse and Resolve never panic, and a
// patch they accept names only clean paths inside the repository.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"--- a/src/util.rs\n+++ b/src/util.rs\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
		"diff -ruN old/x new/x\n--- old/x\t2024-01-02 03:04:05.000000000 +0100\n+++ new/x\t1970-01-01 00:00:00.000000000 +0000\n@@ -1 +0,0 @@\n-a\n",
		"--- src/util.rs.orig\t2024-01-02 03:04:05.0 +0000\n+++ src/util.rs\t2024-01-02 03:04:06.0 +0000\n@@ -1 +1 @@\n-a\n+b\n",
		"--- /dev/null\n+++ b/n.go\n@@ -0,0 +1 @@\n+n\n--- a/long.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-1\n",
		"--- a/q\n+++ b/q\n@@ -1 +1 @@\n--- x\n+++ y\n@@ -3 +3 @@\n-3\n+three\n",
		"diff --git a/g b/g\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-1\n+2\n--- \"a/sp\\tace\"\n+++ \"b/sp\\tace\"\n@@ -1 +1 @@\n-1\n+2\n",
		"--- a/../x\n+++ b//x\n@@ -1 +1 @@\n-a\n+b\n",
	} {
		f.Add(s)
	}
	dir := f.TempDir()
	os.WriteFile(filepath.Join(dir, "long.txt"), []byte("1\n"), 0o644)
	rt, err := fsroot.Open(dir)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { rt.Close() })
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(strings.NewReader(s))
		if err != nil {
			return
		}
		if err := p.Resolve(rt); err != nil {
			return
		}
		for _, name := range p.Paths() {
			if err := checkPath(name); err != nil || name == "" || name == "." {
				t.Errorf("path %q accepted: %v", name, err)
			}
		}
	})
}
