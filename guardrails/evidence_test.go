package guardrails

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCites(t *testing.T) {
	tests := []struct {
		name, text, section string
		want                []Citation
	}{
		{"generated", "Run `go generate ./...` before `go test ./...` in pkg/api: it failed 5 times with missing_dependency", "pkg/api",
			[]Citation{{CitesCommand, "go generate ./..."}, {CitesCommand, "go test ./..."}, {CitesPath, "pkg/api"}}},
		{"variable", "Export DATABASE_URL before `go test ./...` (or set it in the step's env)", Everywhere,
			[]Citation{{CitesCommand, "go test ./..."}, {CitesEnvVar, "DATABASE_URL"}}},
		{"quoted variable and path", "Set `API_TOKEN` and keep `config/app.yaml` and `go.mod` in sync", "",
			[]Citation{{CitesEnvVar, "API_TOKEN"}, {CitesPath, "config/app.yaml"}, {CitesPath, "go.mod"}}},
		{"unquoted path and script", "Read docs/setup.md, then run ./scripts/gen.sh", "",
			[]Citation{{CitesPath, "docs/setup.md"}, {CitesPath, "scripts/gen.sh"}}},
		{"not citations", "Return `nil` from `fmt.Errorf`, use `func (s *Store) Close()`, see https://x.org/a/b.md and github.com/segmentio/kafka-go and and/or E_VERIFY_FAILED, /etc/hosts.conf, ../up.md", "",
			nil},
		{"glob scope", "Keep handlers small", "pkg/**/*.go, cmd/x", []Citation{{CitesPath, "pkg"}, {CitesPath, "cmd/x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Cites(tt.text, tt.section)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	run(t, dir, "git", "init", "-q")
	return dir
}

func run(t *testing.T, dir string, argv ...string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", argv, err, out)
	}
}

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

// A line citing a path, a command or a variable that is gone is demoted
// and says why; the others are not.
func TestEvidenceDemotion(t *testing.T) {
	for _, mode := range []string{"git", "walk"} {
		t.Run(mode, func(t *testing.T) {
			var root string
			if mode == "git" {
				root = gitRepo(t)
			} else {
				root = t.TempDir() // not a repository: the tree is walked
			}
			write(t, root, "scripts/gen.sh", "#!/bin/sh\n")
			write(t, root, "config/db.go", "package config\n\nvar url = os.Getenv(\"DATABASE_URL\")\n")
			write(t, root, "pkg/api/x.go", "package api\n")
			write(t, root, ".orket/guardrails/claude/v1.md", "OLD_ONLY_IN_ORKET\n")
			if mode == "git" {
				run(t, root, "git", "add", "config", "pkg") // scripts/ stays untracked: it counts too
			}
			lines := []Line{
				{ID: "gp-aaaa01", Section: "pkg/api", Text: "Run `./scripts/gen.sh` before `go test ./...`"},
				{ID: "gp-aaaa02", Section: Everywhere, Text: "Export DATABASE_URL before `go test ./...`"},
				{ID: "gp-aaaa03", Section: Everywhere, Text: "Start the db with `orket-no-such-tool up` first"},
				{ID: "gp-aaaa04", Section: Everywhere, Text: "Set OLD_ONLY_IN_ORKET before you start"},
				{ID: "gp-aaaa05", Section: Everywhere, Text: "Run `go vet ./...` and `git status` before finishing"},
			}
			ck := &Checker{Root: root, Commands: []string{"go vet ./...", "go test ./..."}}
			demoted := func() map[string]string {
				out := map[string]string{}
				for _, e := range ck.Check(context.Background(), lines) {
					if e.Demoted {
						out[e.Line.ID] = e.Why()
					}
				}
				return out
			}
			want := map[string]string{
				"gp-aaaa03": "`orket-no-such-tool up` is not in the verify profile and orket-no-such-tool is not on PATH",
				"gp-aaaa04": "OLD_ONLY_IN_ORKET is not referenced anywhere in the repository",
			}
			if diff := cmp.Diff(want, demoted()); diff != "" {
				t.Fatalf("before (-want +got):\n%s", diff)
			}
			// The script, the variable's only reference and the scope go.
			os.Remove(filepath.Join(root, "scripts", "gen.sh"))
			write(t, root, "config/db.go", "package config\n")
			os.RemoveAll(filepath.Join(root, "pkg"))
			want["gp-aaaa01"] = "scripts/gen.sh no longer exists; pkg/api no longer exists"
			want["gp-aaaa02"] = "DATABASE_URL is not referenced anywhere in the repository"
			if diff := cmp.Diff(want, demoted()); diff != "" {
				t.Errorf("after (-want +got):\n%s", diff)
			}
		})
	}
}

// Prepare gives a run the version's own file when nothing is demoted,
// and an annotated copy when something is; a demoted line can be
// proposed for removal, and approving that writes a version without it.
func TestPrepareAndRemoval(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	write(t, r.root, "pkg/api/x.go", "package api\n")
	write(t, r.root, "scripts/gen.sh", "#!/bin/sh\n")
	s := r.store()
	add := func(text, section string) *Proposal {
		c := Cluster{Kind: KindCategory, Key: hashKey("ck-", text), Label: "x", Section: section}
		p := &Proposal{Agent: "claude", CreatedAt: t0, Cluster: c, LessonText: text,
			ConstraintUpdate: Change{Type: Addition, Section: section, NewText: text}}
		p.ID = proposalID("claude", c, 0)
		must[[]*Proposal](t)(s.Proposals.Add(p))
		must[*Version](t)(approve(s, p.ID, "Ana", t0))
		return p
	}
	add("Run `scripts/gen.sh` before `go test ./...`", "pkg/api")
	add("Keep handlers small", "pkg/api")
	ck := &Checker{Root: r.root, Commands: []string{"go test ./..."}}
	// What a run is given: the current version, its lines checked, the
	// demoted ones marked.
	type prepared struct {
		Version  *Version
		Evidence []Evidence
		Demoted  int
		Text     string
	}
	prepare := func() prepared {
		cur := must[*Version](t)(s.Current("claude"))
		p := prepared{Version: cur, Evidence: ck.Check(ctx, cur.AllLines())}
		for _, e := range p.Evidence {
			if e.Demoted {
				p.Demoted++
			}
		}
		p.Text = Annotate(cur.Text, p.Evidence)
		return p
	}
	prep := prepare()
	if prep.Demoted != 0 || prep.Version.Version != 2 {
		t.Fatalf("prepared: %+v", prep)
	}
	os.Remove(filepath.Join(r.root, "scripts", "gen.sh"))
	prep = prepare()
	if prep.Demoted != 1 {
		t.Fatalf("prepared: %+v", prep)
	}
	if got := prep.Text; !strings.Contains(got, "- [demoted: scripts/gen.sh no longer exists] Run `scripts/gen.sh`") ||
		!strings.Contains(got, "- Keep handlers small <!--") {
		t.Errorf("annotated view:\n%s", got)
	}
	rm := ProposeRemovals("claude", prep.Version, prep.Evidence, nil, t0)
	if len(rm) != 1 || rm[0].ConstraintUpdate.Type != Removal {
		t.Fatalf("removals: %+v", rm)
	}
	must[[]*Proposal](t)(s.Proposals.Add(rm...))
	prior, _, _ := s.Proposals.List(ProposalFilter{Agent: "claude"})
	if again := ProposeRemovals("claude", prep.Version, prep.Evidence, prior, t0); len(again) != 0 {
		t.Errorf("removal proposed twice")
	}
	v3 := must[*Version](t)(approve(s, rm[0].ID, "Ana", t0))
	if v3.Version != 3 || len(Items(v3.Text)) != 1 || len(v3.Lines) != 1 || v3.Changes[0].Type != Removal {
		t.Errorf("v3: %+v\n%s", v3, v3.Text)
	}
	if diff := cmp.Diff(Changes(must[*Version](t)(s.Version("claude", 2)).Text, v3.Text), v3.Changes); diff != "" {
		t.Errorf("v3 changes are not the text's (-want +got):\n%s", diff)
	}
}

// The search for variables answers as `git grep --untracked -I -F -w`
// does, but for ignored-but-tracked files, which it reads (tracked files
// are never ignored) and git grep --untracked passes over: the real git
// is the oracle, `git grep --untracked` joined with `git grep` (tracked
// files, ignored or not), over tracked, untracked, ignored (by a
// subdirectory's .gitignore, by info/exclude, by the XDG and the
// configured core.excludesFile), ignored-but-tracked, binary, large,
// symlinked and nested-repository files, from the top, from a
// subdirectory and in a linked worktree.
func TestReferencedAgreesWithGitGrep(t *testing.T) {
	root := gitRepo(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "xdg"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	write(t, home, "xdg/git/ignore", "*.xdg\n")
	write(t, home, "custom-ignore", "*.custom\n")
	outside := t.TempDir()
	write(t, outside, "target.txt", "LINK_NAME\n")

	big := strings.Repeat("filler text line\n", 80000) // > 1 MiB
	cut := strings.Repeat("x", 64<<10-5) + " "         // a name across the first read's end
	files := map[string]string{
		"a.txt":                     "TRACKED_NAME and XPARTIAL_NAME, PARTIAL_NAMEX\n",
		".gitignore":                "*.tmp\n",
		"deep/dir/z.tmp":            "ROOT_IGNORED_NAME\n",
		"u/untracked.go":            "var x = \"UNTRACKED_NAME\"\n",
		"sub/.gitignore":            "*.log\nbuild/\n!important.log\n",
		"sub/keep.txt":              "SUB_NAME\n",
		"sub/x.log":                 "IGNORED_SUB_NAME\n",
		"sub/important.log":         "NEGATED_NAME\n",
		"sub/forced.log":            "FORCED_NAME\n",
		"sub/build/y.txt":           "IGNORED_DIR_NAME\n",
		"sub/build/tracked.txt":     "FORCED_IN_IGNORED_DIR\n",
		"sub/build/.gitignore":      "!y.txt\n",
		"other/x.log":               "OTHER_LOG_NAME\n",
		"secret.txt":                "EXCLUDED_NAME\n",
		"notes.xdg":                 "XDG_IGNORED_NAME\n",
		"notes.custom":              "CUSTOM_IGNORED_NAME\n",
		"bin.dat":                   "\x00BINARY_NAME\n",
		"untracked.bin":             "head\x00 UNTRACKED_BINARY_NAME\n",
		"late-nul.txt":              strings.Repeat("y", 8000) + "\x00 LATE_NUL_NAME\n",
		"big.txt":                   big + "BIG_NAME\n",
		"cut.txt":                   cut + "CUT_NAME" + strings.Repeat(" z", 70000),
		".orket/guardrails/x/v1.md": "ORKET_NAME\n",
		"node_modules/m/index.js":   "NODE_MODULES_NAME\n",
		"nested/f.txt":              "NESTED_NAME\n",
	}
	for rel, content := range files {
		write(t, root, rel, content)
	}
	write(t, root, ".git/info/exclude", "secret*\n")
	if err := os.Symlink(filepath.Join(outside, "target.txt"), filepath.Join(root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	run(t, filepath.Join(root, "nested"), "git", "init", "-q")
	run(t, root, "git", "add", "a.txt", ".gitignore", "sub/.gitignore", "sub/keep.txt", "bin.dat", "big.txt", "link.txt")
	run(t, root, "git", "add", "-f", "sub/forced.log", "sub/build/tracked.txt")
	names := []string{"TRACKED_NAME", "PARTIAL_NAME", "ROOT_IGNORED_NAME", "UNTRACKED_NAME", "SUB_NAME", "IGNORED_SUB_NAME",
		"NEGATED_NAME", "FORCED_NAME", "IGNORED_DIR_NAME", "FORCED_IN_IGNORED_DIR", "OTHER_LOG_NAME", "EXCLUDED_NAME",
		"XDG_IGNORED_NAME", "CUSTOM_IGNORED_NAME", "BINARY_NAME", "UNTRACKED_BINARY_NAME", "LATE_NUL_NAME", "BIG_NAME",
		"CUT_NAME", "ORKET_NAME", "NODE_MODULES_NAME", "NESTED_NAME", "LINK_NAME", "NOWHERE_NAME"}

	gitGrep := func(dir string, untracked bool) map[string]bool {
		t.Helper()
		args := []string{"-C", dir, "grep", "-I", "-F", "-w", "-o", "-h", "--no-color"}
		if untracked {
			args = append(args, "--untracked")
		}
		for _, n := range names {
			args = append(args, "-e", n)
		}
		args = append(args, "--", ".", ":(exclude).orket")
		cmd := exec.Command("git", args...)
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		out, err := cmd.Output()
		if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 1) {
			t.Fatalf("git grep: %v\n%s", err, ee.Stderr)
		}
		found := map[string]bool{}
		for _, l := range strings.Fields(string(out)) {
			found[l] = true
		}
		return found
	}
	// Only in ignored-but-tracked files: git grep --untracked misses them.
	ignoredTracked := map[string]bool{"FORCED_NAME": true, "FORCED_IN_IGNORED_DIR": true}
	check := func(dir string, want map[string]bool) {
		t.Helper()
		got, err := (&Checker{Root: dir}).referenced(context.Background(), names)
		if err != nil {
			t.Fatal(err)
		}
		oracle, tracked := gitGrep(dir, true), gitGrep(dir, false)
		for _, n := range names {
			if got[n] != (oracle[n] || tracked[n]) {
				t.Errorf("%s in %s: found %v, git grep --untracked %v, git grep %v", n, dir, got[n], oracle[n], tracked[n])
			}
			if got[n] && !oracle[n] && !ignoredTracked[n] {
				t.Errorf("%s in %s: found, git grep --untracked does not find it", n, dir)
			}
		}
		for n := range tracked {
			oracle[n] = true
		}
		if want != nil {
			if diff := cmp.Diff(want, oracle); diff != "" {
				t.Errorf("git grep in %s (-want +got):\n%s", dir, diff)
			}
		}
	}
	want := map[string]bool{"TRACKED_NAME": true, "UNTRACKED_NAME": true, "SUB_NAME": true, "NEGATED_NAME": true,
		"FORCED_NAME": true, "FORCED_IN_IGNORED_DIR": true, "OTHER_LOG_NAME": true, "CUSTOM_IGNORED_NAME": true,
		"LATE_NUL_NAME": true, "BIG_NAME": true, "CUT_NAME": true, "NODE_MODULES_NAME": true}
	check(root, want)
	check(filepath.Join(root, "sub"), map[string]bool{"SUB_NAME": true, "NEGATED_NAME": true, "FORCED_NAME": true,
		"FORCED_IN_IGNORED_DIR": true})

	// core.excludesFile replaces the XDG default.
	run(t, root, "git", "config", "core.excludesFile", filepath.Join(home, "custom-ignore"))
	delete(want, "CUSTOM_IGNORED_NAME")
	want["XDG_IGNORED_NAME"] = true
	check(root, want)

	// A linked worktree: its .git is a file, info/exclude is the main one's.
	run(t, root, "git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "x")
	wt := filepath.Join(t.TempDir(), "wt")
	run(t, root, "git", "worktree", "add", "-q", wt)
	write(t, wt, "secret2.txt", "EXCLUDED_NAME\n")
	write(t, wt, "u.txt", "UNTRACKED_NAME\n")
	write(t, wt, "sub/x.log", "IGNORED_SUB_NAME\n")
	check(wt, map[string]bool{"TRACKED_NAME": true, "UNTRACKED_NAME": true, "SUB_NAME": true, "FORCED_NAME": true,
		"FORCED_IN_IGNORED_DIR": true, "BIG_NAME": true})
}

// A file is read in windows: a name across a window's end, or next to a
// word byte across it, is judged as in the whole file.
func TestGrepperWindows(t *testing.T) {
	names := []string{"A_B", "B_A_B", "AB_A"}
	word := regexp.MustCompile(`^(?:A_B|B_A_B|AB_A)$`)
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	for i := range 3000 {
		var b []byte
		for range rng.IntN(20) {
			b = append(b, []string{"A_B", "B_A_B", "AB_A", "A", "_", "B", " ", "x"}[rng.IntN(8)]...)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		want := map[string]bool{}
		for _, w := range regexp.MustCompile(`[A-Za-z0-9_]+`).FindAllString(string(b), -1) {
			if word.MatchString(w) {
				want[w] = true
			}
		}
		g := &grepper{names: names, keep: 5, found: map[string]bool{}}
		buf := make([]byte, g.keep+1+i%7) // windows of 1 to 7 new bytes
		g.file(context.Background(), p, buf)
		if diff := cmp.Diff(want, g.found); diff != "" {
			t.Fatalf("%q (window %d) (-want +got):\n%s", b, len(buf)-g.keep, diff)
		}
	}
}

// TestCheckerSearchesOnce: a run checks its guardrails before and after
// its lock; the tree is searched for the variables they cite once.
func TestCheckerSearchesOnce(t *testing.T) {
	calls := 0
	ck := &Checker{Root: t.TempDir(), Remember: true, Referenced: func(ctx context.Context, names []string) (map[string]bool, error) {
		calls++
		return map[string]bool{}, nil
	}}
	lines := []Line{{ID: "gp-1", Section: Everywhere, Text: "Export DATABASE_URL before the tests"}}
	for i := 0; i < 2; i++ {
		if ev := ck.Check(context.Background(), lines); !ev[0].Demoted {
			t.Fatalf("check %d: the line citing a variable nothing mentions is not demoted", i)
		}
	}
	if calls != 1 {
		t.Errorf("the tree was searched %d times", calls)
	}
	// Without Remember, every check sees the tree as it is now.
	calls, ck.Remember = 0, false
	for i := 0; i < 2; i++ {
		ck.Check(context.Background(), lines)
	}
	if calls != 2 {
		t.Errorf("a checker that does not remember searched %d times in two checks", calls)
	}
}
