package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orket/orket/internal/contain"
)

// The sandbox must not break the edit commands people run. Each test
// runs a real tool inside the scope and checks its effect.

func TestGofmtInScope(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t)
	src := filepath.Join(f.root, "pkg/api/api.go")
	mustWrite(t, src, "package api\nfunc  F( ) int {return 1}\n")
	s := f.sandbox(t, Policy{Mode: Required, Scope: []string{"pkg/**/*.go"}})
	if out, code := f.sh(t, s, "gofmt -l -w pkg/api"); code != 0 {
		t.Fatalf("gofmt -w: exit %d\n%s", code, out)
	}
	if got, want := read(src), "package api\n\nfunc F() int { return 1 }\n"; got != want {
		t.Errorf("gofmt left %q, want %q", got, want)
	}
	// Out of the scope's directory it cannot write.
	mustWrite(t, filepath.Join(f.root, "docs/x.go"), "package  x\n")
	if _, code := f.sh(t, s, "gofmt -w docs/x.go"); code == 0 || read(filepath.Join(f.root, "docs/x.go")) != "package  x\n" {
		t.Error("gofmt -w rewrote docs/x.go outside the scope")
	}
}

// TestGoBuildAndTest: go build and go test work with the build cache in
// sandbox.write, and fail without it (the cache is outside).
func TestGoBuildAndTest(t *testing.T) {
	requireLandlock(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH: " + err.Error())
	}
	gocache, err := exec.Command(goBin, "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	mod := filepath.Join(f.root, "pkg/api")
	mustWrite(t, filepath.Join(mod, "go.mod"), "module example.com/api\n\ngo 1.21\n")
	mustWrite(t, filepath.Join(mod, "api.go"), "package api\n\nfunc Answer() int { return 42 }\n")
	mustWrite(t, filepath.Join(mod, "api_test.go"), "package api\n\nimport \"testing\"\n\nfunc TestAnswer(t *testing.T) {\n\tif Answer() != 42 {\n\t\tt.Fatal(Answer())\n\t}\n}\n")
	mustWrite(t, filepath.Join(mod, "cmd/hello/main.go"), "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n")
	env := []string{"GOCACHE=" + strings.TrimSpace(string(gocache)), "GOTOOLCHAIN=local", "GOFLAGS=", "GOPATH=" + filepath.Join(f.home, "go")}
	script := `cd pkg/api && go build -o bin/hello ./cmd/hello && ./bin/hello && go test -count=1 ./... && go vet ./...`

	s := f.sandbox(t, Policy{Mode: Required, Scope: []string{"pkg/api"}, Write: []string{strings.TrimSpace(string(gocache))}})
	out, code := f.sh(t, s, script, env...)
	if code != 0 || !strings.Contains(out, "hello") || !strings.Contains(out, "ok  \texample.com/api") {
		t.Fatalf("go build/test in the sandbox: exit %d\n%s", code, out)
	}

	closed := f.sandbox(t, Policy{Mode: Required, Scope: []string{"pkg/api"}})
	out, code = f.sh(t, closed, `cd pkg/api && go build ./...`, append(env, "GOCACHE="+filepath.Join(f.home, ".cache/go-build"))...)
	if code == 0 || !strings.Contains(out, "permission denied") {
		t.Errorf("go build with its cache outside sandbox.write: exit %d\n%s", code, out)
	}
}

// TestGitCommitAllowed: with AllowGit the edit can stage, commit, branch,
// rebase, stash and tag, in the main worktree and in a linked one.
func TestGitCommitAllowed(t *testing.T) {
	requireLandlock(t)
	script := `set -e
git checkout -qb work; echo 'func F() {}' >> pkg/api/api.go; git add pkg/api/api.go; git commit -qm one
git checkout -qb feature HEAD~1; echo 'package api' > pkg/api/b.go; git add pkg/api/b.go; git commit -qm two
git rebase -q work
echo '// more' >> pkg/api/b.go; git stash -q; git stash pop -q; git commit -qam three
git tag v0.1; git gc -q
git log --oneline | wc -l`
	check := func(t *testing.T, f *fixture, root string) {
		t.Helper()
		s := f.sandbox(t, Policy{Mode: Required, Root: root, Scope: []string{"pkg/api"}, AllowGit: true})
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.Dir, cmd.Env = root, f.env()
		if err := s.Apply(cmd); err != nil {
			t.Fatal(err)
		}
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "4" {
			t.Fatalf("git commit in the sandbox: %v\n%s", err, out)
		}
		// And the guarded files stay closed unless measurement is told.
		u := s.Report().Unguarded
		if len(u) == 0 {
			t.Error("AllowGit reports nothing unguarded")
		}
	}
	t.Run("main worktree", func(t *testing.T) {
		f := newFixture(t)
		check(t, f, f.root)
		if got := f.git(t, "rev-parse", "--abbrev-ref", "HEAD"); got != "feature" {
			t.Errorf("HEAD is on %s", got)
		}
	})
	t.Run("linked worktree", func(t *testing.T) {
		f := newFixture(t)
		wt := filepath.Join(f.base, "wt")
		f.git(t, "worktree", "add", "-q", "-b", "side", wt)
		check(t, f, wt)
		if got := f.git(t, "rev-parse", "--verify", "-q", "refs/tags/v0.1"); got == "" {
			t.Error("the tag made in the linked worktree is missing")
		}
	})
}

// TestShellRedirections: the everyday shell forms, TMPDIR included.
func TestShellRedirections(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t)
	s := f.sandbox(t, Policy{Mode: Required, Scope: []string{"pkg/api"}})
	script := `set -e
cd pkg/api
echo b > f; echo a >> f
sort < f > sorted 2>/dev/null
exec 3>fd3; echo three >&3; exec 3>&-
cat > heredoc <<EOF
here $(cat sorted | head -n 1)
EOF
t=$(mktemp); echo tmp > "$t"; mv "$t" moved
mkdir -p d/e && mv sorted d/e/ && rm -r d
ln -s f link && echo via-link >> link
ln f hard && echo via-hard >> hard
mkfifo pipe && rm pipe
echo err >&2 2>/dev/null
echo out > /dev/stdout
: > /dev/null
cat f heredoc moved`
	out, code := f.sh(t, s, script)
	want := "b\na\nvia-link\nvia-hard\nhere a\ntmp\n"
	if code != 0 || !strings.HasSuffix(out, want) {
		t.Fatalf("exit %d, output\n%s\nwant it to end with\n%s", code, out, want)
	}
}

// TestNpmInstall: npm installs a local dependency inside the scope, with
// its cache in sandbox.write (created for it).
func TestNpmInstall(t *testing.T) {
	requireLandlock(t)
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed (apt-get install npm): " + err.Error())
	}
	f := newFixture(t)
	web := filepath.Join(f.root, "pkg/web")
	mustWrite(t, filepath.Join(f.root, "pkg/dep/package.json"), `{"name":"dep","version":"1.0.0","main":"index.js"}`)
	mustWrite(t, filepath.Join(f.root, "pkg/dep/index.js"), "module.exports = 42;\n")
	mustMkdir(t, web)
	mustWrite(t, filepath.Join(web, "package.json"), `{"name":"web","version":"1.0.0","dependencies":{"dep":"file:../dep"}}`)
	s := f.sandbox(t, Policy{Mode: Required, Scope: []string{"pkg"}, Write: []string{"~/.npm"}})
	out, code := f.sh(t, s, `cd pkg/web && npm install --offline --no-audit --no-fund --install-links && node -e 'console.log(require("dep"))'`,
		"npm_config_update_notifier=false")
	if code != 0 || !strings.HasSuffix(strings.TrimSpace(out), "42") {
		t.Fatalf("npm install: exit %d\n%s", code, out)
	}
	if !exists(filepath.Join(web, "node_modules/dep/index.js")) || !exists(filepath.Join(web, "package-lock.json")) {
		t.Error("npm install left no node_modules/dep or package-lock.json")
	}
	if !exists(filepath.Join(f.home, ".npm")) {
		t.Error("~/.npm was not created for npm")
	}
}

// TestComposesWithContain: the command keeps the group orket started it
// in (cgroup or marker), its process group and its parent-death signal;
// the group's Kill still stops what it left behind; no_new_privs is set
// and the helper's variable is gone from its environment.
func TestComposesWithContain(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t)
	s := f.sandbox(t, Policy{Mode: Required, Scope: []string{"pkg/api"}})
	g := contain.New("sandbox-test-" + strconv.Itoa(os.Getpid()))
	defer g.Close()
	cmd := exec.Command("/bin/sh", "-c", `sleep 60 >/dev/null 2>&1 & echo $! > pkg/api/pid; echo started`)
	cmd.Dir, cmd.Env = f.root, f.env()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	g.Apply(cmd)
	if err := s.Apply(cmd); err != nil {
		t.Fatal(err)
	}
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "started") {
		t.Fatalf("%v\n%s", err, out)
	}
	pid := strings.TrimSpace(read(filepath.Join(f.root, "pkg/api/pid")))
	status := read("/proc/" + pid + "/status")
	if !strings.Contains(status, "NoNewPrivs:\t1") {
		t.Errorf("the command's child runs without no_new_privs:\n%s", status)
	}
	environ := read("/proc/" + pid + "/environ")
	if strings.Contains(environ, envVar+"=") {
		t.Error("the helper's variable reached the command")
	}
	if !strings.Contains(environ, "\x00TMPDIR="+s.Report().TempDir+"\x00") {
		t.Errorf("TMPDIR is not the private temporary directory %s: %q", s.Report().TempDir, environ)
	}
	if g.Cgroup() {
		_, cg, _ := strings.Cut(read("/proc/"+pid+"/cgroup"), "0::")
		cg, _, _ = strings.Cut(cg, "\n")
		if id := strings.TrimPrefix(g.ID(), "cgroup:"); cg == "" || !strings.HasSuffix(id, cg) {
			t.Errorf("the command left the group's cgroup: it is in %q, the group is %s", cg, id)
		}
	} else if !strings.Contains(environ, contain.MarkerVar+"=") {
		t.Error("the group's marker did not reach the command")
	}
	if err := g.Kill(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for exists("/proc/"+pid) && !strings.Contains(read("/proc/"+pid+"/status"), "State:\tZ") {
		if time.Now().After(deadline) {
			t.Fatal("the group's Kill did not stop the sandboxed background process")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
