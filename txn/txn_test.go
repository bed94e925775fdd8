package txn

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/internal/fingerprint"
	"github.com/orket/orket/internal/fsmonitor"
	"github.com/orket/orket/internal/fsmonitor/watchmantest"
	"github.com/orket/orket/internal/gittest"
	"github.com/orket/orket/store"
)

// gitEnv isolates git from the machine's configuration.
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

func sh(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-ec", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

// dirtyRepo builds a repository with every kind of file and a dirty state:
// staged and unstaged changes, untracked files, an ignored file, an empty
// directory, a deleted tracked file.
func dirtyRepo(t *testing.T) string {
	t.Helper()
	gitEnv(t)
	dir := dirtyTemplate.Copy(t)
	if testFSMonitor {
		watchmantest.Use(t, dir)
		if fsmonitor.Eager() {
			primeHook(t, dir)
		}
	}
	return dir
}

// dirtyTemplate is dirtyRepo's repository, built once.
var dirtyTemplate = &gittest.Template{Script: `
git init -q
mkdir -p pkg/api docs "sp ace" ünï
printf 'package api\n' > pkg/api/server.go
printf 'package api\n\nfunc X() {}\n' > pkg/api/x.go
printf '#!/bin/sh\necho hi\n' > run.sh; chmod +x run.sh
printf '\000\001\002binary\377' > docs/logo.bin
printf 'hello\n' > "sp ace/a file.txt"
printf 'grüße\n' > ünï/ß.txt
ln -s pkg/api/server.go link
printf 'build/\n*.log\n' > .gitignore
printf 'gone\n' > docs/old.md
git add -A
git commit -q -m init
git tag v1
git branch feature
# the dirty state
printf 'package api // staged\n' > pkg/api/server.go; git add pkg/api/server.go
printf 'package api // staged then edited\n' > pkg/api/server.go
printf 'new\n' > docs/staged-new.md; git add docs/staged-new.md
printf 'untracked\n' > notes.txt
mkdir -p build empty/nested; printf 'ignored\n' > build/out.bin; printf 'log\n' > x.log
rm docs/old.md
chmod 600 "sp ace/a file.txt"
`}

// primeHook takes and ends one snapshot of dir (a whole scan: there is no
// scan cache yet), so that the next one starts from the scan cache and
// asks the hook what changed since, as every run does on a large
// repository with a watcher.
func primeHook(t *testing.T, dir string) {
	t.Helper()
	tx := begin(t, open(t, dir), "prime")
	if err := tx.End(); err != nil {
		t.Fatal(err)
	}
}

// wantHook fails the test when, in withJournal's fsmonitor mode, a
// snapshot or a measurement did not go through the hook.
func wantHook(t *testing.T, what string, info ScanInfo) {
	t.Helper()
	if testFSMonitor && fsmonitor.Eager() && info.How != "fsmonitor" {
		t.Errorf("%s: %s (%s), want fsmonitor", what, info.How, info.Why)
	}
}

// wantScan is wantHook for a phase that scans the whole tree, with the
// hook, when it is named by whole.
func wantScan(t *testing.T, what, whole string, info ScanInfo) {
	t.Helper()
	if what != whole {
		wantHook(t, what, info)
	} else if testFSMonitor && fsmonitor.Eager() && info.How != "scan" {
		t.Errorf("%s: %s (%s), want a whole scan", what, info.How, info.Why)
	}
}

func fp(t *testing.T, dir string) string {
	t.Helper()
	s, err := fingerprint.Of(dir, store.Dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var edits = []struct {
	name    string
	script  string
	touched []string // the touch set Measure must report (nil: not checked)
	guarded bool
}{
	{"modify", `printf 'changed\n' >> pkg/api/x.go`, []string{"pkg/api/x.go"}, false},
	{"modify-staged", `printf 'again\n' >> pkg/api/server.go`, []string{"pkg/api/server.go"}, false},
	{"create", `mkdir -p pkg/api/v2/deep; printf 'n\n' > pkg/api/v2/deep/new.go; printf 'z\n' > top.txt`, []string{"pkg/api/v2/deep/new.go", "top.txt"}, false},
	{"delete", `rm pkg/api/x.go notes.txt docs/staged-new.md`, []string{"docs/staged-new.md", "notes.txt", "pkg/api/x.go"}, false},
	{"chmod", `chmod +x pkg/api/x.go; chmod -x run.sh`, []string{"pkg/api/x.go", "run.sh"}, false},
	{"perm-only", `chmod 644 "sp ace/a file.txt"`, []string{"sp ace/a file.txt"}, false},
	{"rename", `mv pkg/api/x.go pkg/api/y.go; mv ünï/ß.txt ünï/ss.txt`, []string{"pkg/api/x.go", "pkg/api/y.go", "ünï/ss.txt", "ünï/ß.txt"}, false},
	{"binary", `printf '\377\376' > docs/logo.bin`, []string{"docs/logo.bin"}, false},
	{"symlink", `rm link; ln -s run.sh link; ln -s /etc/passwd out-link`, []string{"link", "out-link"}, false},
	{"stage", `printf 'x\n' >> pkg/api/x.go; git add -A`, nil, false},
	{"commit", `printf 'x\n' >> pkg/api/x.go; git add -A; git commit -q -m edit`, nil, false},
	{"switch-branch", `git checkout -q feature; printf 'f\n' > f.txt; git add f.txt; git commit -q -m f`, nil, false},
	{"new-branch-and-tag", `git branch topic; git tag v2; git checkout -q -b other`, []string{}, false},
	{"reset-hard", `git reset -q --hard HEAD`, nil, false},
	{"stash", `git stash -q -u`, nil, false},
	{"file-to-dir", `rm notes.txt; mkdir -p notes.txt/inner; printf 'd\n' > notes.txt/inner/f`, []string{"notes.txt", "notes.txt/inner/f"}, false},
	{"dir-to-file", `rm -r "sp ace"; printf 'f\n' > "sp ace"`, []string{"sp ace", "sp ace/a file.txt"}, false},
	{"empty-dirs", `rmdir empty/nested; mkdir -p made/empty`, []string{"empty/nested/", "made/empty/"}, false},
	{"touch-only", `touch pkg/api/x.go run.sh`, []string{}, false},
	{"same-size-rewrite", `printf 'package apj\n' > pkg/api/server.go.tmp; mv pkg/api/server.go.tmp pkg/api/x.go`, []string{"pkg/api/x.go"}, false},
	{"ignored-file", `printf 'more\n' >> build/out.bin; printf 'new\n' > y.log`, []string{}, false},
	{"orket-dir", `mkdir -p .orket/memory; printf 'x\n' > .orket/memory/evil.jsonl`, []string{".orket/memory/evil.jsonl"}, false},
	{"git-hook", `printf '#!/bin/sh\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit`, []string{}, true},
	{"git-config", `git config user.name mallory`, []string{}, true},
	{"git-info", `printf 'secret\n' >> .git/info/exclude`, []string{}, true},
}

// testNoWatch is the NoWatch option of the repositories tests open;
// with testFSMonitor, the repositories tests make ask Watchman, through
// git's own hook, what changed (see watchmantest.Use).
var testNoWatch, testFSMonitor bool

// open discovers the repository at dir with the options of the test.
func open(t testing.TB, dir string) *Repo {
	t.Helper()
	r, err := Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	r.Options.NoWatch = testNoWatch
	r.hookAlways = true
	return r
}

// resume opens dir afresh, as orket recover does, and resumes its
// unfinished transaction.
func resume(t testing.TB, dir string) *Txn {
	t.Helper()
	r := open(t, dir)
	j, err := r.Unfinished()
	if err != nil || j == nil {
		t.Fatalf("Unfinished: %v, %v", j, err)
	}
	tx, err := r.Resume(j)
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// begin starts a transaction on dir.
func begin(t testing.TB, r *Repo, runID string) *Txn {
	t.Helper()
	tx, err := r.Begin(Start{RunID: runID, Command: "test", Time: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// withJournal runs a test with the inotify change journal, without any
// (every measurement a full scan), and with Watchman as git's fsmonitor
// hook: every path must give the same answers. In the fsmonitor mode the
// repositories dirtyRepo makes have a scan cache already (primeHook), and
// the hook is asked as on a large tree (fsmonitor.SetEager): snapshots
// take the cached tree and rescan only where Watchman saw changes, and
// measurements and reverts ask Watchman, not inotify.
//
// With slice (make test's -short), a table's rows are not all run in
// every mode: each runs with the journal, and the even rows with full
// scans, the odd ones with Watchman; f asks row(i). make test-long runs
// every row in every mode.
func withJournal(t *testing.T, slice bool, f func(t *testing.T, row func(int) bool)) {
	for _, mode := range []string{"journal", "fullscan", "fsmonitor"} {
		row := func(i int) bool { return !slice || mode == "journal" || (mode == "fullscan") == (i%2 == 0) }
		t.Run(mode, func(t *testing.T) {
			savedOff, savedFS := testNoWatch, testFSMonitor
			testNoWatch, testFSMonitor = mode == "fullscan", mode == "fsmonitor"
			defer func() { testNoWatch, testFSMonitor = savedOff, savedFS }()
			if testFSMonitor {
				watchmantest.Need(t)
				fsmonitor.SetEager(true)
				defer fsmonitor.SetEager(false)
			}
			f(t, row)
		})
	}
}

func TestRevertRestoresEverything(t *testing.T) {
	withJournal(t, testing.Short(), testRevertRestoresEverything)
}

func testRevertRestoresEverything(t *testing.T, row func(int) bool) {
	for i, e := range edits {
		if !row(i) {
			continue
		}
		t.Run(e.name, func(t *testing.T) {
			dir := dirtyRepo(t)
			before := fp(t, dir)
			r := open(t, dir)
			s := begin(t, r, "test-"+e.name)
			wantHook(t, "snapshot", s.Snapshot().Scan)
			if got := fp(t, dir); got != before {
				t.Fatalf("the snapshot changed the repository:\n%s", cmp.Diff(before, got))
			}
			sh(t, dir, e.script)
			ch, err := s.Measure()
			if err != nil {
				t.Fatal(err)
			}
			wantHook(t, "measure", ch.Scan)
			if e.touched != nil {
				if diff := cmp.Diff(e.touched, ch.Paths, cmpEmpty); diff != "" {
					t.Errorf("touch set (-want +got):\n%s", diff)
				}
			}
			if (len(ch.Guarded) > 0) != e.guarded {
				t.Errorf("guarded writes: %v, want any=%v", ch.Guarded, e.guarded)
			}
			res, err := s.Revert()
			if err != nil {
				t.Fatal(err)
			}
			if err := s.End(); err != nil {
				t.Fatal(err)
			}
			if !res.Verified {
				t.Error("revert not verified")
			}
			if got := fp(t, dir); got != before {
				t.Errorf("after revert (-before +after):\n%s", cmp.Diff(before, got))
			}
		})
	}
}

// TestRecoverFromRef reverts from the snapshot as read back from its ref,
// as orket recover does after a crash, with nothing kept in memory.
func TestRecoverFromRef(t *testing.T) { withJournal(t, testing.Short(), testRecoverFromRef) }

func testRecoverFromRef(t *testing.T, row func(int) bool) {
	for i, e := range edits {
		if !row(i) {
			continue
		}
		t.Run(e.name, func(t *testing.T) {
			dir := dirtyRepo(t)
			before := fp(t, dir)
			r := open(t, dir)
			begin(t, r, "crash")
			sh(t, dir, e.script)
			s2 := resume(t, dir)
			if _, err := s2.Revert(); err != nil {
				t.Fatal(err)
			}
			if err := s2.End(); err != nil {
				t.Fatal(err)
			}
			if got := fp(t, dir); got != before {
				t.Errorf("after recovery (-before +after):\n%s", cmp.Diff(before, got))
			}
		})
	}
}

var cmpEmpty = cmp.Transformer("nilToEmpty", func(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
})

func TestUnsupported(t *testing.T) {
	for _, tc := range []struct{ name, script, want string }{
		{"symlinks", `git config core.symlinks false`, "git config core.symlinks true"},
		{"ignorecase", `git config core.ignorecase true`, "git config core.ignorecase false"},
		{"split-index-config", `git config core.splitIndex true`, "git config core.splitIndex false"},
		{"split-index", `git -c core.splitIndex=true update-index --split-index`, "git update-index --no-split-index"},
		{"sparse-index", `git sparse-checkout init --cone --sparse-index`, "git sparse-checkout init --no-sparse-index"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := dirtyRepo(t)
			sh(t, dir, tc.script)
			r := open(t, dir)
			_, err := r.Begin(Start{RunID: "x", Command: "test", Time: time.Now()})
			var ue *UnsupportedError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Snapshot: %v, want UnsupportedError about %s", err, tc.want)
			}
		})
	}
}

// TestJournalSeesLaterWrites checks that the revert finds what changed
// after the touch set was measured (a verify step writing into the tree),
// including in directories the edit created, and that an ignore-rule
// change is handled as a full scan would.
func TestJournalSeesLaterWrites(t *testing.T) {
	withJournal(t, false, func(t *testing.T, _ func(int) bool) {
		for _, tc := range []struct{ name, edit, later string }{
			{"verify-writes", `printf 'x\n' >> pkg/api/x.go`, `printf 'cov\n' > coverage.out; printf 'y\n' >> docs/old2.md; rm run.sh`},
			{"inside-new-dir", `mkdir -p gen/a; printf 'g\n' > gen/a/g.go`, `mkdir -p gen/a/b/c; printf 'h\n' > gen/a/b/c/h.go; printf 'i\n' > gen/i.go`},
			{"moved-dir", `mv pkg moved`, `printf 'z\n' > moved/api/z.go`},
			{"gitignore-change", `printf '*.txt\n' >> .gitignore`, `printf 'n\n' > notes2.txt`},
			{"unignore", `printf '!build/\n' >> .gitignore`, `printf 'b\n' > build/new.bin`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				dir := dirtyRepo(t)
				sh(t, dir, `printf 'o\n' > docs/old2.md; git add docs/old2.md; git commit -qm o`)
				before := fp(t, dir)
				r := open(t, dir)
				s := begin(t, r, "j")
				defer s.Close()
				sh(t, dir, tc.edit)
				if _, err := s.Measure(); err != nil {
					t.Fatal(err)
				}
				sh(t, dir, tc.later)
				if _, err := s.Revert(); err != nil {
					t.Fatal(err)
				}
				if got := fp(t, dir); got != before {
					t.Errorf("after revert (-before +after):\n%s", cmp.Diff(before, got))
				}
			})
		}
	})
}

// TestPlainGitRestore follows the snapshot's own restore.sh with plain git
// and sh, after every kind of edit, with nothing of orket: the whole state
// (contents, modes, refs, the index, the stash) comes back.
func TestPlainGitRestore(t *testing.T) {
	for i, e := range edits {
		if testing.Short() && i%2 == 1 {
			continue // make test-long restores after every edit
		}
		t.Run(e.name, func(t *testing.T) {
			dir := dirtyRepo(t)
			sh(t, dir, `git stash -q; git stash apply -q; printf 'more untracked\n' > more.txt`)
			before := fp(t, dir)
			r := open(t, dir)
			tx := begin(t, r, "plain")
			tx.Close()
			sh(t, dir, e.script)
			sh(t, dir, `git cat-file blob refs/orket/snapshots/plain:restore.sh | sh >/dev/null`)
			if got := fp(t, dir); got != before {
				t.Errorf("after restore.sh (-before +after):\n%s", cmp.Diff(before, got))
			}
			if j, _ := r.Unfinished(); j != nil {
				t.Error("restore.sh left the journal")
			}
		})
	}
}

// TestPlainGitRestoreWithoutIndexLink: restore.sh rebuilds the index from
// the snapshot's tree of it when the hard link the snapshot kept is gone.
func TestPlainGitRestoreWithoutIndexLink(t *testing.T) {
	dir := dirtyRepo(t)
	before := fp(t, dir)
	r := open(t, dir)
	tx := begin(t, r, "nolink")
	tx.Close()
	if m := tx.Snapshot(); m == nil {
		t.Fatal("no snapshot")
	}
	sh(t, dir, `printf 'x\n' >> pkg/api/x.go; git add -A; git commit -q -m edit; rm .git/orket/index-nolink`)
	sh(t, dir, `git cat-file blob refs/orket/snapshots/nolink:restore.sh | sh >/dev/null`)
	if got := fp(t, dir); got != before {
		t.Errorf("after restore.sh (-before +after):\n%s", cmp.Diff(before, got))
	}
}

// TestSnapshotSurvivesGC: an edit that drops branches, tags and stash
// entries and prunes every unreachable object (git gc --prune=now) cannot
// take from the revert what it needs: staged-only blobs, deleted tips,
// annotated tags, the stash.
func TestSnapshotSurvivesGC(t *testing.T) {
	withJournal(t, false, func(t *testing.T, _ func(int) bool) {
		dir := dirtyRepo(t)
		sh(t, dir, `
b=$(printf 'only here\n' | git hash-object -w --stdin)
t=$(printf '100644 blob %s\tdoomed.txt\n' $b | git mktree)
git branch doomed $(git commit-tree -p HEAD -m doomed $t)
git tag -a -m 'annotated' v-ann feature
git stash store -m kept $(git stash create)
printf 'staged only blob\n' > staged-only.txt; git add staged-only.txt`)
		before := fp(t, dir)
		r := open(t, dir)
		tx := begin(t, r, "gc")
		sh(t, dir, `
git branch -q -D doomed; git tag -d v-ann >/dev/null; git stash drop -q
git rm -q --cached staged-only.txt; rm staged-only.txt
git reflog expire --expire=now --all; git gc -q --prune=now`)
		if _, err := tx.Revert(); err != nil {
			t.Fatal(err)
		}
		if err := tx.End(); err != nil {
			t.Fatal(err)
		}
		if got := fp(t, dir); got != before {
			t.Errorf("after revert (-before +after):\n%s", cmp.Diff(before, got))
		}
		sh(t, dir, `git cat-file -t v-ann | grep -q tag; git stash list | grep -q .; git show doomed:doomed.txt >/dev/null`)
	})
}

// TestHostileEdits: edits that once escaped the snapshot or hid from it.
// Each is seen (the touch set names it) and reverted exactly, with the
// change journal, with full scans and with Watchman.
func TestHostileEdits(t *testing.T) {
	outside := t.TempDir()
	// With Watchman, these setups must be seen by a whole scan, as they
	// are when a watcher starts: a hard link made from outside the
	// repository changes nothing Watchman reports (nor inotify), so only a
	// scan that stats the file learns it has another name, which the scan
	// cache then remembers (see docs/transactions.md).
	scanned := map[string]bool{"hard-link-from-outside": true}
	for i, tc := range []struct {
		name, setup, edit string
		touched           []string // must all be in the touch set
		// wholeScan names the phase that, with Watchman, scans the whole
		// tree instead of asking it, as git does: "snapshot" after a
		// .gitignore changed, "measure" when the edit made a hard link.
		wholeScan string
	}{
		{"negated-in-ignored-dir", `printf 'data/**\n!data/keep.txt\n' >> .gitignore; mkdir data; printf k > data/keep.txt; printf x > data/x.bin`,
			`rm data/keep.txt`, []string{"data/keep.txt"}, "snapshot"},
		{"negated-char-class", `printf '*.[!o]\n' > sub.gitignore; mkdir cls; mv sub.gitignore cls/.gitignore; printf o > cls/b.o; printf c > cls/b.c`,
			`rm cls/b.o; printf c2 > cls/b.c`, []string{"cls/b.o"}, "snapshot"},
		{"self-ignoring-gitignore", ``,
			`printf '.gitignore\nnotes.txt\n' > .gitignore; rm notes.txt`, []string{".gitignore", "notes.txt"}, ""},
		{"nested-repo-created", ``,
			`mkdir -p out && git -C out init -q && printf x > out/f.txt`, []string{"out/.git/HEAD", "out/f.txt"}, ""},
		{"clone-inside", ``,
			`git clone -q . clone`, []string{"clone/.git/HEAD", "clone/run.sh"}, ""},
		{"worktree-inside", ``,
			`git worktree add -q wt feature`, []string{"wt/.git", "wt/run.sh"}, ""},
		{"setuid-bit", ``, `chmod u+s run.sh`, []string{"run.sh"}, ""},
		{"setgid-sticky", ``, `chmod g+s notes.txt; chmod +t pkg/api/x.go`, []string{"notes.txt", "pkg/api/x.go"}, ""},
		{"hard-link-from-outside", `ln notes.txt ` + outside + `/notes-link`,
			`printf 'written through the other name\n' >> ` + outside + `/notes-link`, []string{"notes.txt"}, ""},
		{"empty-dir-created", ``, `mkdir -p lone/empty`, []string{"lone/empty/"}, ""},
		{"hard-link-made-by-edit", ``, `ln notes.txt pkg/api/alias.txt; printf 'through the alias\n' >> pkg/api/alias.txt`, []string{"notes.txt", "pkg/api/alias.txt"}, "measure"},
		{"file-to-dir-with-ignored", ``, `rm notes.txt; mkdir notes.txt; printf l > notes.txt/x.log`, []string{"notes.txt"}, ""},
		{"tracked-in-ignored-dir", `printf t > build/tracked.txt; git add -f build/tracked.txt; git commit -q -m t`,
			`printf 'changed\n' > build/tracked.txt`, []string{"build/tracked.txt"}, ""},
	} {
		slice := testing.Short()
		t.Run(tc.name, func(t *testing.T) {
			withJournal(t, slice, func(t *testing.T, row func(int) bool) {
				if !row(i) {
					return
				}
				dir := dirtyRepo(t)
				os.Remove(filepath.Join(outside, "notes-link"))
				if tc.setup != "" {
					sh(t, dir, tc.setup)
				}
				if scanned[tc.name] && testFSMonitor && fsmonitor.Eager() {
					os.Remove(open(t, dir).cachePath())
					primeHook(t, dir)
				}
				before := fp(t, dir)
				r := open(t, dir)
				tx := begin(t, r, "hostile")
				wantScan(t, "snapshot", tc.wholeScan, tx.Snapshot().Scan)
				sh(t, dir, tc.edit)
				ch, err := tx.Measure()
				if err != nil {
					t.Fatal(err)
				}
				wantScan(t, "measure", tc.wholeScan, ch.Scan)
				got := map[string]bool{}
				for _, p := range ch.Paths {
					got[p] = true
				}
				for _, p := range tc.touched {
					if !got[p] {
						t.Errorf("touch set misses %s: %v", p, ch.Paths)
					}
				}
				if _, err := tx.Revert(); err != nil {
					t.Fatal(err)
				}
				if err := tx.End(); err != nil {
					t.Fatal(err)
				}
				if after := fp(t, dir); after != before {
					t.Errorf("after revert (-before +after):\n%s", cmp.Diff(before, after))
				}
			})
		})
	}
}
