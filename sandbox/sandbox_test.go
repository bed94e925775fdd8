package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// requireLandlock skips a test that needs the kernel's barrier where the
// kernel has none, saying why; on this project's machines it has one.
func requireLandlock(t testing.TB) {
	t.Helper()
	if _, reason := probe(); reason != "" {
		t.Skip("no kernel sandbox here, so nothing to prove: " + reason)
	}
}

// A fixture is a repository with a scope inside it, a home directory and
// files beside it that no edit may touch.
type fixture struct {
	base string // holds everything; its own files are outside the repository
	root string // the repository
	home string // $HOME for the commands
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{base: base, root: filepath.Join(base, "repo"), home: filepath.Join(base, "home")}
	for _, d := range []string{"repo/pkg/api", "repo/docs", "home/.ssh", "target"} {
		mustMkdir(t, filepath.Join(base, d))
	}
	mustWrite(t, filepath.Join(base, "victim.txt"), "original\n")
	mustWrite(t, filepath.Join(f.root, "pkg/api/api.go"), "package api\n")
	mustWrite(t, filepath.Join(f.root, "docs/README"), "docs\n")
	f.git(t, "init", "-q", "-b", "main")
	f.git(t, "add", "-A")
	f.git(t, "commit", "-q", "-m", "initial")
	return f
}

func (f *fixture) env() []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + f.home,
		"BASE=" + f.base,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=edit", "GIT_AUTHOR_EMAIL=edit@example.com",
		"GIT_COMMITTER_NAME=edit", "GIT_COMMITTER_EMAIL=edit@example.com",
	}
}

func (f *fixture) git(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = f.root, f.env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// sandbox makes a sandbox for the fixture and closes it with the test.
func (f *fixture) sandbox(t testing.TB, p Policy) *Sandbox {
	t.Helper()
	if p.Root == "" {
		p.Root = f.root
	}
	if p.Home == "" {
		p.Home = f.home
	}
	s, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// sh runs a shell script at the repository root under s (nil: no
// sandbox) and returns its output and exit status.
func (f *fixture) sh(t testing.TB, s *Sandbox, script string, env ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir, cmd.Env = f.root, append(f.env(), env...)
	if err := s.Apply(cmd); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("run %q: %v", script, err)
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

func mustMkdir(t testing.TB, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t testing.TB, p, content string) {
	t.Helper()
	mustMkdir(t, filepath.Dir(p))
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// waitFor polls until p exists (a background process wrote it).
func waitFor(t *testing.T, p string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !exists(p) {
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", p)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // let the writer finish
}

// TestAdversarialWrites runs each escape once without the sandbox (it
// must work, or the case proves nothing) and once with it (it must fail,
// and leave nothing behind).
func TestAdversarialWrites(t *testing.T) {
	requireLandlock(t)
	cases := []struct {
		name   string
		setup  func(t *testing.T, f *fixture)
		script string
		// escaped reports whether the write landed outside.
		escaped func(f *fixture) bool
	}{{
		name:    "home ssh",
		script:  `echo pwned > "$HOME/.ssh/x"`,
		escaped: func(f *fixture) bool { return exists(filepath.Join(f.home, ".ssh/x")) },
	}, {
		name:    "relative path out of the repository",
		script:  `cd pkg/api && echo pwned > ../../../outside`,
		escaped: func(f *fixture) bool { return exists(filepath.Join(f.base, "outside")) },
	}, {
		name:    "relative path out of the scope",
		script:  `echo pwned > docs/README`,
		escaped: func(f *fixture) bool { return read(filepath.Join(f.root, "docs/README")) != "docs\n" },
	}, {
		name: "symlink in scope pointing out, made before the run",
		setup: func(t *testing.T, f *fixture) {
			if err := os.Symlink(filepath.Join(f.base, "target"), filepath.Join(f.root, "pkg/api/link")); err != nil {
				t.Fatal(err)
			}
		},
		script:  `echo pwned > pkg/api/link/x`,
		escaped: func(f *fixture) bool { return exists(filepath.Join(f.base, "target/x")) },
	}, {
		name:    "symlink made by the edit",
		script:  `ln -s "$BASE/victim.txt" pkg/api/v && echo pwned > pkg/api/v`,
		escaped: func(f *fixture) bool { return read(filepath.Join(f.base, "victim.txt")) != "original\n" },
	}, {
		name:    "hard link made by the edit",
		script:  `ln "$BASE/victim.txt" pkg/api/hl; echo pwned >> pkg/api/hl`,
		escaped: func(f *fixture) bool { return read(filepath.Join(f.base, "victim.txt")) != "original\n" },
	}, {
		name:    "rename into the scope",
		script:  `mv "$BASE/victim.txt" pkg/api/stolen`,
		escaped: func(f *fixture) bool { return !exists(filepath.Join(f.base, "victim.txt")) },
	}, {
		name:    "move the scope out",
		script:  `mv pkg/api "$BASE/api"`,
		escaped: func(f *fixture) bool { return exists(filepath.Join(f.base, "api")) },
	}, {
		name:    "truncate",
		script:  `truncate -s 0 "$BASE/victim.txt"`,
		escaped: func(f *fixture) bool { return read(filepath.Join(f.base, "victim.txt")) != "original\n" },
	}, {
		name:    "through /proc/self/root",
		script:  `echo pwned > "/proc/self/root$BASE/victim.txt"`,
		escaped: func(f *fixture) bool { return read(filepath.Join(f.base, "victim.txt")) != "original\n" },
	}, {
		name:    "fifo outside",
		script:  `mkfifo "$BASE/fifo"`,
		escaped: func(f *fixture) bool { return exists(filepath.Join(f.base, "fifo")) },
	}, {
		name: "shared /tmp beside the private one",
		setup: func(t *testing.T, f *fixture) {
			t.Cleanup(func() { os.Remove(sharedProbe(f)) })
		},
		script:  `echo pwned > "/tmp/$(basename "$BASE")-probe"`,
		escaped: func(f *fixture) bool { return exists(sharedProbe(f)) },
	}, {
		name:    "git hooks",
		script:  `printf '#!/bin/sh\necho pwned\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit`,
		escaped: func(f *fixture) bool { return exists(filepath.Join(f.root, ".git/hooks/pre-commit")) },
	}, {
		name:   "git config",
		script: `git config core.hooksPath "$BASE"; echo '[alias]' >> .git/config`,
		escaped: func(f *fixture) bool {
			return strings.Contains(read(filepath.Join(f.root, ".git/config")), "hooksPath") || strings.Contains(read(filepath.Join(f.root, ".git/config")), "alias")
		},
	}, {
		name:   "git info",
		script: `mkdir -p .git/info; echo '*' >> .git/info/exclude`,
		escaped: func(f *fixture) bool {
			return strings.Contains(read(filepath.Join(f.root, ".git/info/exclude")), "*\n")
		},
	}, {
		name:    "orket state",
		script:  `mkdir -p .orket/memory && echo '{}' >> .orket/memory/failure_lessons.jsonl`,
		escaped: func(f *fixture) bool { return exists(filepath.Join(f.root, ".orket")) },
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, sandboxed := range []bool{false, true} {
				f := newFixture(t)
				if c.setup != nil {
					c.setup(t, f)
				}
				var s *Sandbox
				if sandboxed {
					s = f.sandbox(t, Policy{Mode: Required, Scope: []string{"pkg/api"}})
				}
				out, _ := f.sh(t, s, c.script)
				escaped := c.escaped(f)
				switch {
				case sandboxed && escaped:
					t.Errorf("sandboxed: the write escaped\n%s", out)
				case !sandboxed && !escaped:
					t.Fatalf("unsandboxed: the write did not land, so the case proves nothing\n%s", out)
				}
			}
		})
	}
}

// TestBackgroundWriterAfterExit: a process the command leaves behind,
// even in a session of its own, is still restricted after the command
// has exited.
func TestBackgroundWriterAfterExit(t *testing.T) {
	requireLandlock(t)
	for _, detach := range []string{"", "setsid "} {
		for _, sandboxed := range []bool{false, true} {
			name := strings.TrimSpace("background " + detach)
			if !sandboxed {
				name += " unsandboxed"
			}
			t.Run(name, func(t *testing.T) {
				f := newFixture(t)
				var s *Sandbox
				if sandboxed {
					s = f.sandbox(t, Policy{Mode: Required, Scope: []string{"pkg/api"}})
				}
				// The writer waits for a file the test makes once the
				// command has exited.
				script := detach + `sh -c 'while [ ! -e pkg/api/go ]; do sleep 0.02; done
echo pwned > "$HOME/.ssh/late"; echo $? > pkg/api/late-status' >/dev/null 2>&1 &
echo started`
				out, code := f.sh(t, s, script)
				if code != 0 || !strings.Contains(out, "started") {
					t.Fatalf("exit %d\n%s", code, out)
				}
				mustWrite(t, filepath.Join(f.root, "pkg/api/go"), "")
				status := filepath.Join(f.root, "pkg/api/late-status")
				waitFor(t, status)
				wrote := exists(filepath.Join(f.home, ".ssh/late"))
				switch {
				case sandboxed && wrote:
					t.Error("the background process wrote $HOME/.ssh/late after the command exited")
				case sandboxed && strings.TrimSpace(read(status)) == "0":
					t.Error("the background write reported success")
				case !sandboxed && !wrote:
					t.Fatal("unsandboxed: the background write did not land, so the case proves nothing")
				}
			})
		}
	}
}

// TestGitWithoutAllowGit: without AllowGit the git directory is closed,
// even to a plain commit; the report has nothing unguarded.
func TestGitWithoutAllowGit(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t)
	s := f.sandbox(t, Policy{Mode: Required, Scope: []string{"pkg/api"}})
	head := f.git(t, "rev-parse", "HEAD")
	out, code := f.sh(t, s, `echo x >> pkg/api/api.go && git commit -qam edit`)
	if code == 0 {
		t.Fatalf("a commit went through with the git directory closed\n%s", out)
	}
	if got := f.git(t, "rev-parse", "HEAD"); got != head {
		t.Errorf("HEAD moved to %s", got)
	}
	if u := s.Report().Unguarded; len(u) != 0 {
		t.Errorf("unguarded = %v, want none", u)
	}
	// Reading the repository still works (git status refreshes the index
	// only when it can).
	if out, code := f.sh(t, s, `git status --short && git diff --stat && git log --oneline -1`); code != 0 || !strings.Contains(out, "pkg/api/api.go") {
		t.Errorf("read-only git in the sandbox: exit %d\n%s", code, out)
	}
}

// TestAllowGitLeavesGuardedToMeasurement: with AllowGit the report names
// what the sandbox can no longer keep closed.
func TestAllowGitLeavesGuardedToMeasurement(t *testing.T) {
	f := newFixture(t)
	mustMkdir(t, filepath.Join(f.root, ".orket"))
	abiVersion = func() (int, error) { return 7, nil }
	t.Cleanup(func() { abiVersion = realABIVersion })
	for _, c := range []struct {
		name  string
		p     Policy
		wantU []string
	}{
		{"scope only", Policy{Scope: []string{"pkg/api"}}, nil},
		{"allow git", Policy{Scope: []string{"pkg/api"}, AllowGit: true}, []string{".git/config", ".git/hooks", ".git/info"}},
		{"scope at the root", Policy{Scope: []string{"*.go"}}, []string{".orket", ".git/config", ".git/hooks", ".git/info"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := f.sandbox(t, c.p)
			if diff := cmp.Diff(c.wantU, s.Report().Unguarded); diff != "" {
				t.Errorf("unguarded (-want +got):\n%s", diff)
			}
		})
	}
}

var realABIVersion = abiVersion

func sharedProbe(f *fixture) string { return "/tmp/" + filepath.Base(f.base) + "-probe" }

func TestModes(t *testing.T) {
	f := newFixture(t)
	t.Cleanup(func() { abiVersion = realABIVersion })
	enosys := func() (int, error) { return 0, syscall.ENOSYS }
	abi1 := func() (int, error) { return 1, nil }
	for _, c := range []struct {
		name         string
		mode         Mode
		abi          func() (int, error)
		wantErr      bool
		wantEnforced bool
		wantReason   string
	}{
		{"off", Off, enosys, false, false, ""},
		{"auto without landlock", Auto, enosys, false, false, "Landlock is not available"},
		{"auto with ABI 1", Auto, abi1, false, false, "ABI 1 refuses every rename"},
		{"required without landlock", Required, enosys, true, false, ""},
		{"required with ABI 1", Required, abi1, true, false, ""},
		{"empty is auto", "", func() (int, error) { return 3, nil }, false, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			abiVersion = c.abi
			s, err := New(Policy{Mode: c.mode, Root: f.root, Scope: []string{"pkg/api"}})
			if c.wantErr {
				var ue *UnavailableError
				if !errors.As(err, &ue) || !errors.Is(err, ErrUnavailable) {
					t.Fatalf("err = %v, want an *UnavailableError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			r := s.Report()
			if r.Enforced != c.wantEnforced || s.Enforced() != c.wantEnforced || !strings.Contains(r.Reason, c.wantReason) {
				t.Errorf("report = %+v, want enforced %v and a reason with %q", r, c.wantEnforced, c.wantReason)
			}
			if !c.wantEnforced {
				cmd := exec.Command("true")
				before := cmd.String()
				if err := s.Apply(cmd); err != nil || cmd.String() != before || cmd.Env != nil {
					t.Errorf("Apply changed an unsandboxed command: %v %s", err, cmd)
				}
			}
		})
	}
	abiVersion = enosys
	if abi, reason := Available(); abi != 0 || !strings.Contains(reason, "not available") {
		t.Errorf("Available() = %d, %q without Landlock", abi, reason)
	}
	for in, want := range map[string]Mode{"": Auto, "auto": Auto, "required": Required, "off": Off} {
		if got, err := ParseMode(in); got != want || err != nil {
			t.Errorf("ParseMode(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseMode("on"); err == nil {
		t.Error(`ParseMode("on") is no error`)
	}
}

// TestReportJSON: the report embeds in the run record as it is.
func TestReportJSON(t *testing.T) {
	f := newFixture(t)
	abiVersion = func() (int, error) { return 7, nil }
	t.Cleanup(func() { abiVersion = realABIVersion })
	gocache := filepath.Join(f.home, ".cache/go-build")
	s := f.sandbox(t, Policy{Scope: []string{"pkg/**/*.go", "docs"}, Write: []string{"~/.cache/go-build"}, Name: "run-1"})
	r := s.Report()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	json.Unmarshal(b, &got)
	if got["mode"] != "auto" || got["enforced"] != true || got["abi"] != float64(7) {
		t.Errorf("json = %s", b)
	}
	wantScope := []ScopeDir{
		{Pattern: "pkg/**/*.go", Dirs: []string{"pkg"}, Widened: true},
		{Pattern: "docs", Dirs: []string{"docs"}},
	}
	if diff := cmp.Diff(wantScope, r.Scope); diff != "" {
		t.Errorf("scope (-want +got):\n%s", diff)
	}
	var writable []string
	for _, g := range r.Writable {
		if g.For != "device" {
			writable = append(writable, g.For+" "+g.Path+" "+g.Note)
		}
	}
	want := []string{
		"scope " + filepath.Join(f.root, "pkg") + " ",
		"scope " + filepath.Join(f.root, "docs") + " ",
		"sandbox.write " + gocache + " created",
		"temp " + r.TempDir + " ",
	}
	if diff := cmp.Diff(want, writable); diff != "" {
		t.Errorf("writable (-want +got):\n%s", diff)
	}
	if !strings.Contains(filepath.Base(r.TempDir), "orket-edit-run-1") {
		t.Errorf("temp dir %s does not name the run", r.TempDir)
	}
	if s := r.String(); !strings.Contains(s, "Landlock ABI 7") || !strings.Contains(s, "pkg, docs") {
		t.Errorf("String() = %q", s)
	}
	if err := s.Close(); err != nil || exists(r.TempDir) {
		t.Errorf("Close: %v; temp dir left: %v", err, exists(r.TempDir))
	}
}

// TestHelperFailsClosed: a helper that cannot restrict itself runs
// nothing.
func TestHelperFailsClosed(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t)
	marker := filepath.Join(f.base, "ran")
	file := filepath.Join(f.root, "docs/README")
	for _, c := range []struct{ name, payload string }{
		{"unreadable", "{"},
		{"unknown version", `{"v":2}`},
		{"directory rights on a file", `{"v":1,"handled":` + itoa(handled(3)) + `,"rules":[{"a":` + itoa(writeDir) + `,"p":["` + file + `"]}]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(self, "/bin/sh", "-c", "touch "+marker)
			cmd.Env = append(f.env(), envVar+"="+c.payload)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != exitSandbox {
				t.Errorf("exit = %v, want %d\n%s", err, exitSandbox, out)
			}
			if !strings.HasPrefix(string(out), "orket: sandbox: ") {
				t.Errorf("output = %q", out)
			}
			if exists(marker) {
				t.Fatal("the command ran")
			}
		})
	}
}

func itoa(n uint64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestCommandNotFound: Wrap defers the lookup to the helper, which fails
// as a shell does.
func TestCommandNotFound(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t)
	s := f.sandbox(t, Policy{Mode: Required, Scope: []string{"pkg/api"}})
	argv, env, err := s.Wrap([]string{"no-such-program-orket"}, f.env())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = f.root, env
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != exitNotFound || !strings.Contains(string(out), "cannot start no-such-program-orket") {
		t.Errorf("exit %d, %v\n%s", cmd.ProcessState.ExitCode(), err, out)
	}
	// Apply leaves a lookup failure to Start.
	cmd = exec.Command("no-such-program-orket")
	if err := s.Apply(cmd); err != nil || cmd.Path == self {
		t.Errorf("Apply on a missing program: %v, path %s", err, cmd.Path)
	}
}
