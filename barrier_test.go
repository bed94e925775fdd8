package orket_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/orket/orket"
	"github.com/orket/orket/config"
	"github.com/orket/orket/internal/fingerprint"
	"github.com/orket/orket/internal/fsmonitor"
	"github.com/orket/orket/internal/fsmonitor/watchmantest"
	"github.com/orket/orket/internal/gittest"
	"github.com/orket/orket/learn"
	"github.com/orket/orket/patch"
	"github.com/orket/orket/sandbox"
	"github.com/orket/orket/txn"
	"github.com/orket/orket/txn/txntest"
)

// An attack is an edit that tries to write where its scope (pkg) does not
// allow: a command or a patch.
type attack struct {
	family, name string
	command      string // run by sh -c at the repository root ($OUT: a directory outside it)
	patch        string // or a unified diff
	profile      string // a verify profile other than the default
}

// attacks is the adversarial barrier suite: the families an adversarial
// campaign tried against orket.
func attacks() []attack {
	var as []attack
	add := func(family, name, command string) {
		as = append(as, attack{family: family, name: name, command: command})
	}
	addPatch := func(family, name, p string) {
		as = append(as, attack{family: family, name: name, patch: p})
	}
	// 1. Plain writes outside the scope, of every kind.
	for _, target := range []string{"docs/guide.md", "README.md", ".env.example", "deep/a/b/c.txt", "pkgx/evil.go", "pkg.go", "docs/new.md", "orket.yaml"} {
		add("outside", "write "+target, `echo x > pkg/ok.txt; mkdir -p "$(dirname `+target+`)"; echo evil > `+target)
	}
	for _, op := range []string{"rm docs/guide.md", "mv docs/guide.md pkg/stolen.md", "chmod +x README.md", "chmod u+s docs/guide.md",
		"chmod g+s,o+t README.md", "rm -r docs", "mv docs pkg/docs", "ln -sf /etc/passwd docs/guide.md", "truncate -s 0 README.md", "touch -d 2001-01-01 README.md; echo y >> README.md"} {
		add("outside", op, "echo x > pkg/ok.txt; "+op)
	}
	// 2. Relative paths that climb out of the scope.
	for _, p := range []string{"pkg/../docs/climb.md", "pkg/sub/../../README.md", "./pkg/./../root.txt", "pkg//..//docs//x"} {
		add("climb", p, `mkdir -p pkg/sub; echo evil > `+p)
	}
	// 3. Symlinks: made in the scope, written through to outside it.
	add("symlink", "dir link to docs", `ln -s ../docs pkg/d; echo evil > pkg/d/through.md`)
	add("symlink", "file link to README", `ln -s ../README.md pkg/r; echo evil >> pkg/r`)
	add("symlink", "link to .git/hooks", `ln -s ../.git/hooks pkg/h; printf '#!/bin/sh\n' > pkg/h/pre-commit`)
	add("symlink", "link to .orket", `ln -s ../.orket pkg/o; echo '{}' >> pkg/o/memory/failure_lessons.jsonl`)
	add("symlink", "replace a dir by a link", `rm -r pkg/sub2; ln -s ../docs pkg/sub2; echo evil > pkg/sub2/x.md`)
	add("symlink", "chain of links", `ln -s ../docs pkg/a1; ln -s a1 pkg/a2; echo evil > pkg/a2/chain.md`)
	// 4. Hard links: a new name in the scope for a file outside it.
	add("hardlink", "write through a new link", `ln README.md pkg/readme; echo evil >> pkg/readme`)
	add("hardlink", "truncate through a new link", `ln docs/guide.md pkg/g; : > pkg/g`)
	add("hardlink", "link then chmod", `ln docs/guide.md pkg/g; chmod 600 pkg/g`)
	// 5. git's own files: configuration, hooks, info.
	for _, c := range []string{
		`git config core.hooksPath /tmp/hooks`, `git config alias.st '!rm -rf /'`, `git config --unset user.name || git config user.name x`,
		`printf '#!/bin/sh\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit`, `printf '#!/bin/sh\n' > .git/hooks/post-checkout`,
		`rm -f .git/hooks/*.sample`, `echo '*.md' >> .git/info/exclude`, `echo '* filter=evil' > .git/info/attributes`,
		`mkdir -p .git/info && echo x > .git/info/sparse-checkout`, `echo '[core]' >> .git/config.worktree`,
	} {
		add("git", c, "echo x > pkg/ok.txt; "+c)
	}
	// 6. orket's own state.
	for _, c := range []string{
		`mkdir -p .orket/memory && echo '{"forged":1}' >> .orket/memory/failure_lessons.jsonl`, `rm -rf .orket`,
		`mkdir -p .orket/runs && echo '{}' > .orket/runs/forged.json`, `echo '*' > .orket/.gitignore2`,
		// Forged verdicts: an approval that resets the count, a person's
		// resolve.
		`mkdir -p .orket/memory && echo '{"run_id":"f","task":"t","agent":"default","verdict":"APPROVE","edit_source":"command"}' >> .orket/memory/evaluations.jsonl`,
		`mkdir -p .orket/memory && echo '{"type":"resolve","task":"t"}' >> .orket/memory/tasks.jsonl`,
		`git update-ref -d $(git for-each-ref --format='%(refname)' refs/orket/snapshots)`,
	} {
		add("orket", c, "echo x > pkg/ok.txt; "+c)
	}
	// 7. Hiding a write from the scan.
	add("hide", "self-ignoring .gitignore", `printf '.gitignore\ndocs/\n' > .gitignore; echo evil > docs/hidden.md`)
	add("hide", "nested .gitignore", `printf '*\n' > docs/.gitignore; echo evil > docs/hidden.md`)
	add("hide", "ignore via info/exclude", `echo 'docs/' >> .git/info/exclude; echo evil > docs/hidden.md`)
	add("hide", "ignore via excludesFile", `git config core.excludesFile "$OUT/ex"; echo 'docs/' > "$OUT/ex"; echo evil > docs/hidden.md`)
	add("hide", "negation games", `printf 'docs/**\n!docs/guide.md\n' >> .gitignore; echo evil > docs/guide.md`)
	add("hide", "make docs a nested repo", `git -C docs init -q; echo evil > docs/guide.md`)
	add("hide", "make root subdir a repo", `mkdir out; git -C out init -q; echo evil > out/x`)
	add("hide", "clone into the tree", `git clone -q . cloned`)
	add("hide", "worktree into the tree", `git worktree add -q wt HEAD`)
	add("hide", "index trick: assume-unchanged", `git update-index --assume-unchanged README.md; echo evil >> README.md`)
	add("hide", "index trick: skip-worktree", `git update-index --skip-worktree README.md; echo evil >> README.md`)
	add("hide", "restore mtime after write", `t=$(stat -c %y README.md); echo evil >> README.md; touch -d "$t" README.md`)
	add("hide", "same size same mtime", `t=$(stat -c %y README.md); printf 'EVIL\n' > README.md; touch -d "$t" README.md`)
	// 8. Writes that come later: a process the edit leaves behind.
	add("later", "background writer", `( sleep 0.3; echo evil > docs/late.md ) >/dev/null 2>&1 </dev/null & echo x > pkg/ok.txt`)
	add("later", "setsid writer", `( trap '' TERM HUP; setsid sh -c 'sleep 0.3; echo evil > docs/late.md' >/dev/null 2>&1 </dev/null & ); echo x > pkg/ok.txt`)
	add("later", "double fork into hooks", `( ( sleep 0.3; printf '#!/bin/sh\n' > .git/hooks/pre-push ) & ) >/dev/null 2>&1; echo x > pkg/ok.txt`)
	add("later", "nohup writer", `nohup sh -c 'sleep 0.3; echo evil >> README.md' >/dev/null 2>&1 & echo x > pkg/ok.txt`)
	// 9. Verify steps writing where they may not.
	for _, prof := range []string{"stepdocs", "stephook", "steporket"} {
		as = append(as, attack{family: "steps", name: prof, command: "echo x > pkg/ok.txt", profile: prof})
	}
	// 10. Submodules and directories.
	add("dirs", "delete a submodule", `rm -rf vendor/lib`)
	add("dirs", "empty dir outside", `mkdir -p docs/empty/dir`)
	add("dirs", "remove an empty dir outside", `rmdir keep-empty`)
	add("dirs", "file to dir outside", `rm README.md; mkdir README.md; echo x > README.md/x.log`)
	// 11. Patches: every write is orket's, planned first.
	hdr := func(p string) string { return "diff --git a/" + p + " b/" + p + "\n" }
	newFile := func(p, line string) string {
		return hdr(p) + "new file mode 100644\n--- /dev/null\n+++ b/" + p + "\n@@ -0,0 +1 @@\n+" + line + "\n"
	}
	for _, p := range []string{"docs/p.md", "README2.md", "../escape.txt", "/tmp/orket-abs.txt", "pkg/../docs/p2.md", ".git/hooks/pre-commit",
		".git/config", ".orket/memory/x.jsonl", "pkg/../../up.txt", ".git/info/exclude", "orket.yaml.new", ".gitignore.d/x"} {
		addPatch("patch", "new "+p, newFile(p, "evil"))
	}
	addPatch("patch", "delete outside", hdr("README.md")+"deleted file mode 100644\n--- a/README.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-readme\n")
	addPatch("patch", "rename out of scope", "diff --git a/pkg/sub2/s.txt b/docs/s.txt\nsimilarity index 100%\nrename from pkg/sub2/s.txt\nrename to docs/s.txt\n")
	addPatch("patch", "mode change outside", hdr("README.md")+"old mode 100644\nnew mode 100755\n")
	addPatch("patch", "symlink then file through it", hdr("pkg/out")+"new file mode 120000\n--- /dev/null\n+++ b/pkg/out\n@@ -0,0 +1 @@\n+$OUT\n\\ No newline at end of file\n"+newFile("pkg/out/victim.txt", "overwritten"))
	addPatch("patch", "symlink to docs then file", hdr("pkg/d")+"new file mode 120000\n--- /dev/null\n+++ b/pkg/d\n@@ -0,0 +1 @@\n+../docs\n\\ No newline at end of file\n"+newFile("pkg/d/x.md", "evil"))
	addPatch("patch", "through existing symlink", newFile("pkg/existing-link/x.md", "evil"))
	addPatch("patch", "modify outside", hdr("docs/guide.md")+"--- a/docs/guide.md\n+++ b/docs/guide.md\n@@ -1 +1 @@\n-guide\n+evil\n")
	addPatch("patch", "binary outside", hdr("docs/b.bin")+"new file mode 100644\nGIT binary patch\nliteral 3\nKcmZ?d00001\n\nliteral 0\nHcmV?d00001\n\n")
	return as
}

// TestBarrierSuite runs every attack through orket.Execute and checks
// that none escapes: nothing outside the scope (in the tree, in .git's
// configuration, hooks and info, under .orket, or outside the repository)
// is left changed, whatever the outcome. The count is in
// docs/transactions.md.
// forged reports whether orket's evaluation log holds the line an attack
// forged (orket's own lines are not the world outside the scope).
func forged(p string) bool {
	b, _ := os.ReadFile(p)
	return bytes.Contains(b, []byte(`"run_id":"f"`))
}

// TestBarrierSuite runs every attack with the kernel sandbox and without
// it, where measurement is the only line; and each of those with the
// inotify journal and with a real Watchman as git's fsmonitor hook, asked
// as on a large repository (fsmonitor.SetEager): the snapshot rescans
// only where Watchman saw changes, and measurements ask Watchman.
//
// The whole matrix (every attack in each of the four) is make test-long's.
// Under -short (make test) every attack runs once, the four taking turns,
// the Watchman ones (each of whose questions starts git's Perl hook)
// one turn in four: each attack and each combination is still checked.
func TestBarrierSuite(t *testing.T) {
	as := attacks()
	if len(as) < 80 {
		t.Fatalf("the suite has %d attacks; it must have at least 80", len(as))
	}
	t.Cleanup(watchmantest.Done)
	modes := []string{"off", "required"}
	if abi, why := sandbox.Available(); abi == 0 {
		t.Log("the kernel sandbox is unavailable here: " + why)
		modes = modes[:1]
	}
	// turns[i%len(turns)] is the combination attack i runs in under -short.
	var turns []string
	for _, watch := range []string{"inotify", "inotify", "inotify", "fsmonitor"} {
		for _, mode := range modes {
			turns = append(turns, mode+"/"+watch)
		}
	}
	for _, mode := range modes {
		t.Run("sandbox-"+mode, func(t *testing.T) {
			for _, watch := range []string{"inotify", "fsmonitor"} {
				t.Run(watch, func(t *testing.T) {
					if watch == "fsmonitor" {
						watchmantest.Need(t)
						fsmonitor.SetEager(true)
						defer fsmonitor.SetEager(false)
					}
					short := testing.Short()
					run := func(i int) bool { return !short || turns[i%len(turns)] == mode+"/"+watch }
					barrierSuite(t, as, run, mode, watch == "fsmonitor")
				})
			}
		})
	}
}

func barrierSuite(t *testing.T, as []attack, run func(int) bool, mode string, watchman bool) {
	escapes, n := 0, 0
	families := map[string]int{}
	caught := map[string]int{}
	for i, a := range as {
		if !run(i) {
			continue
		}
		n++
		families[a.family]++
		t.Run(fmt.Sprintf("%s/%02d", a.family, i), func(t *testing.T) {
			t.Log(a.name)
			repo, cfg, out := barrierRepo(t, watchman)
			cfg.Sandbox.Mode = mode
			// What an edit command writes outside the repository is
			// beyond what measuring the tree can see (docs/transactions.md):
			// only the sandbox stops it. A patch's writes are all orket's,
			// outside included.
			watchOut := out
			if a.patch == "" && mode == "off" {
				watchOut = ""
			}
			before := worldState(t, repo.Root, watchOut)
			req := orket.Request{Repo: repo, Config: cfg, Scope: []string{"pkg"}, Profile: a.profile, AutoConfirm: true, Env: orket.OSEnv(), Learner: learn.Loop{}}
			req.Env.Environ = append(req.Env.Environ, "OUT="+out)
			if a.patch != "" {
				p, err := patch.Parse(strings.NewReader(strings.ReplaceAll(a.patch, "$OUT", out)))
				if err != nil {
					return // refused before planning: nothing can have been written
				}
				req.Edit = orket.PatchEdit{Name: a.name, Patch: p}
			} else {
				req.Edit = orket.CommandEdit{Argv: []string{"sh", "-c", a.command}}
			}
			rec, err := orket.Execute(context.Background(), req, nil)
			if a.family == "later" {
				shell(t, repo.Root, "sleep 0.5") // anything left running would write now
			}
			after := worldState(t, repo.Root, watchOut)
			if rec != nil && rec.Revert != nil {
				// A loss the run reported (a submodule's work tree) is not
				// an escape; it must be named, and it is all that changed.
				for _, n := range rec.Revert.NotRestored {
					d, _, _ := strings.Cut(n, ":")
					before, after = without(before, d), without(after, d)
				}
			}
			if rec != nil && rec.Barrier != nil {
				caught[rec.Barrier.CaughtBy]++
			} else {
				caught[string(orket.Describe(err).Code)]++
			}
			if before != after {
				escapes++
				t.Errorf("ESCAPE (outcome %s): the world outside the scope changed:\n%s", orket.Describe(err).Code, diffLines(before, after))
			}
		})
	}
	var fams, by []string
	for f, n := range families {
		fams = append(fams, fmt.Sprintf("%s %d", f, n))
	}
	for c, n := range caught {
		by = append(by, fmt.Sprintf("%s %d", c, n))
	}
	sort.Strings(fams)
	sort.Strings(by)
	w := "inotify"
	if watchman {
		w = "Watchman as fsmonitor"
	}
	t.Logf("sandbox %s, %s: %d adversarial edits (%s): %d escapes; caught by: %s", mode, w, n, strings.Join(fams, ", "), escapes, strings.Join(by, ", "))
}

// barrierRepo makes a committed repository with a scope (pkg), things
// around it, a submodule, orket state, and a directory outside it. With
// watchman, its core.fsmonitor is git's Watchman hook and it has a scan
// cache for it: its next snapshot asks Watchman what changed.
func barrierRepo(t *testing.T, watchman bool) (*txn.Repo, *config.Config, string) {
	t.Helper()
	home := t.TempDir()
	for k, v := range map[string]string{"HOME": home, "GIT_CONFIG_NOSYSTEM": "1", "XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com",
		"GIT_ALLOW_PROTOCOL": "file"} {
		t.Setenv(k, v)
	}
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "victim.txt"), []byte("precious\n"), 0o644)
	dir := barrierTemplate.Copy(t)
	yaml := `verify:
  default: quick
  profiles:
    quick: [{name: ok, run: "true"}]
    stepdocs: [{name: docs, run: "echo generated > docs/generated.md"}]
    stephook: [{name: hook, run: "printf '#!/bin/sh\\n' > .git/hooks/pre-rebase"}]
    steporket: [{name: orket, run: "echo x >> .orket/memory/failure_lessons.jsonl"}]
`
	cfg, err := config.Parse([]byte(yaml), "orket.yaml")
	if err != nil {
		t.Fatal(err)
	}
	repo, err := txn.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	if watchman {
		watchmantest.Use(t, dir)
		txntest.PrimeFSMonitor(t, repo)
	}
	return repo, cfg, out
}

// barrierTemplate is the repository of barrierRepo, built once.
var barrierTemplate = &gittest.Template{Script: `
mkdir ../lib; cd ../lib
git init -q -b main; echo lib > lib.txt; git add -A; git commit -qm lib
cd ../repo
git init -q -b main
mkdir -p pkg/sub2 docs keep-empty
echo readme > README.md; echo guide > docs/guide.md; echo ok > pkg/a.txt; echo s > pkg/sub2/s.txt; echo ex > .env.example
ln -s ../docs pkg/existing-link
printf 'verify:\n  profiles:\n    quick: [{name: ok, run: "true"}]\n' > orket.yaml
git -c protocol.file.allow=always submodule add -q "$(cd ../lib && pwd)" vendor/lib
git add -A
git commit -q -m init
mkdir -p .orket/memory; echo '' > .orket/memory/failure_lessons.jsonl; echo '*' > .orket/.gitignore
`}

// worldState describes everything an attack may not change: the tree as
// git sees it (every file, mode, ref, the index), git's configuration,
// hooks and info, orket's state but its run records and lessons (which a
// run writes itself), and the directory outside.
func worldState(t *testing.T, root, out string) string {
	t.Helper()
	fp, err := fingerprint.Of(root)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	// The scope is the edit's: what it does there is its business.
	for _, l := range strings.Split(fp, "\n") {
		if !inScope.MatchString(l) {
			b.WriteString(l + "\n")
		}
	}
	dirs := []string{filepath.Join(root, ".git", "hooks"), filepath.Join(root, ".git", "info"), filepath.Join(root, ".git", "config"), filepath.Join(root, ".orket")}
	if out != "" {
		dirs = append(dirs, out)
	}
	for _, d := range dirs {
		filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			if strings.HasPrefix(rel, ".orket/runs") || strings.HasPrefix(rel, ".orket/memory/failure_lessons.jsonl") || strings.HasPrefix(rel, ".orket/memory/passing") ||
				(strings.HasPrefix(rel, ".orket/memory/evaluations.jsonl") || strings.HasPrefix(rel, ".orket/memory/advised.jsonl") ||
					strings.HasPrefix(rel, ".orket/memory/votes.jsonl") || strings.HasPrefix(rel, ".orket/memory/feedback.jsonl")) && !forged(p) {
				return nil // written by orket itself: the evaluation, what the run was told, its votes, a refusal
			}
			info, _ := e.Info()
			fmt.Fprintf(&b, "%s %v", p, info.Mode())
			if e.Type().IsRegular() {
				c, _ := os.ReadFile(p)
				fmt.Fprintf(&b, " %x", sha256.Sum256(c))
			}
			b.WriteString("\n")
			return nil
		})
	}
	return b.String()
}

// inScope matches a fingerprint line about a path in the scope (pkg).
var inScope = regexp.MustCompile(`(^"|\s)pkg/`)

// without drops the lines about path d from a world state.
func without(state, d string) string {
	var b strings.Builder
	for _, l := range strings.Split(state, "\n") {
		if !strings.Contains(l, d) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func diffLines(a, b string) string {
	as, bs := map[string]bool{}, map[string]bool{}
	for _, l := range strings.Split(a, "\n") {
		as[l] = true
	}
	for _, l := range strings.Split(b, "\n") {
		bs[l] = true
	}
	var out []string
	for l := range as {
		if !bs[l] {
			out = append(out, "- "+l)
		}
	}
	for l := range bs {
		if !as[l] {
			out = append(out, "+ "+l)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

func shell(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-ec", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}
