package learn

import (
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/orket/orket"
	"github.com/orket/orket/config"
	"github.com/orket/orket/txn"
	"github.com/orket/orket/verify"
)

// recorder is an Observer that keeps what it heard.
type recorder struct {
	orket.NopObserver
	mu       sync.Mutex
	phases   []orket.Phase
	steps    []string
	warnings []string
	onStep   func(name string)
}

func (r *recorder) Phase(p orket.Phase, _ *orket.Record) { r.phases = append(r.phases, p) }
func (r *recorder) StepStarted(s config.Step) {
	r.mu.Lock()
	r.steps = append(r.steps, s.Name)
	r.mu.Unlock()
	if r.onStep != nil {
		r.onStep(s.Name)
	}
}
func (r *recorder) StepDone(*verify.StepResult) {}
func (r *recorder) Warn(msg string)             { r.warnings = append(r.warnings, msg) }

func sh(t testing.TB, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-ec", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

// testRepo makes a committed repository with a dirty tree and an
// orket.yaml whose quick profile passes unless pkg/a.txt says BROKEN.
func testRepo(t testing.TB) (*txn.Repo, *config.Config) {
	t.Helper()
	home := t.TempDir()
	for k, v := range map[string]string{"HOME": home, "GIT_CONFIG_NOSYSTEM": "1", "XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com"} {
		t.Setenv(k, v)
	}
	dir := t.TempDir()
	sh(t, dir, `
git init -q -b main
mkdir pkg docs
printf 'one\n' > pkg/a.txt
printf 'doc\n' > docs/d.md
git add -A
git commit -q -m init
printf 'untracked\n' > pkg/u.txt
printf 'dirty\n' >> docs/d.md
`)
	yaml := `verify:
  default: quick
  profiles:
    quick:
      - {name: check, run: "! grep -q BROKEN pkg/a.txt"}
    slow:
      - {name: wait, run: "sleep 30"}
`
	cfg, err := config.Parse([]byte(yaml), "orket.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := txn.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r, cfg
}
