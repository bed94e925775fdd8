package orket

import (
	"context"
	"errors"

	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/config"
	"github.com/orket/orket/internal/fingerprint"
	"github.com/orket/orket/txn"
	"github.com/orket/orket/verify"
)

// recorder is an Observer that keeps what it heard.
type recorder struct {
	NopObserver
	mu       sync.Mutex
	phases   []Phase
	steps    []string
	warnings []string
	onStep   func(name string)
}

func (r *recorder) Phase(p Phase, _ *Record) { r.phases = append(r.phases, p) }
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

func fp(t *testing.T, dir string) string {
	t.Helper()
	s, err := fingerprint.Of(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestExecutePhases runs whole transactions through the library, without
// the command line: the phases arrive in order, the outcome is typed,
// and a failed run leaves the tree exactly as it was.
func TestExecutePhases(t *testing.T) {
	mutating := []Phase{PhasePlan, PhaseAdvise, PhaseLock, PhaseSnapshot, PhaseEdit, PhaseBarrier}
	for _, tc := range []struct {
		name     string
		edit     Edit
		profile  string
		confirm  bool
		cancelOn string // cancel the context when this step starts
		phases   []Phase
		code     Code
		reverted bool
	}{
		{name: "pass", edit: CommandEdit{Argv: []string{"sh", "-c", "echo two > pkg/a.txt"}},
			phases: append(append([]Phase{}, mutating...), PhaseVerify, PhaseKeep, PhaseRecord), code: OK},
		{name: "pass-confirmed", edit: CommandEdit{Argv: []string{"sh", "-c", "echo two > pkg/a.txt"}}, confirm: true,
			phases: []Phase{PhasePlan, PhaseAdvise, PhaseConfirm, PhaseLock, PhaseSnapshot, PhaseEdit, PhaseBarrier, PhaseVerify, PhaseKeep, PhaseRecord}, code: OK},
		{name: "fail-and-revert", edit: CommandEdit{Argv: []string{"sh", "-c", "echo BROKEN > pkg/a.txt; echo n > pkg/new.txt"}},
			phases: append(append([]Phase{}, mutating...), PhaseVerify, PhaseRevert, PhaseBaseline, PhaseRecord), code: EVerifyFailedReverted, reverted: true},
		{name: "barrier", edit: CommandEdit{Argv: []string{"sh", "-c", "echo x > pkg/a.txt; echo leak > docs/d.md"}},
			phases: append(append([]Phase{}, mutating...), PhaseRevert, PhaseRecord), code: EWriteOutOfScope, reverted: true},
		{name: "draft-failure", edit: CommandEdit{Argv: []string{"sh", "-c", "echo x > pkg/a.txt; exit 3"}},
			phases: append(append([]Phase{}, mutating...), PhaseRevert, PhaseRecord), code: EDraftFailure, reverted: true},
		{name: "interrupt", edit: CommandEdit{Argv: []string{"sh", "-c", "echo x > pkg/a.txt"}}, profile: "slow", cancelOn: "wait",
			phases: append(append([]Phase{}, mutating...), PhaseVerify, PhaseRevert, PhaseRecord), code: EInterrupted, reverted: true},
		{name: "verify-only", edit: VerifyOnly{},
			phases: []Phase{PhasePlan, PhaseAdvise, PhaseLock, PhaseVerify, PhaseRecord}, code: OK},
		{name: "dry-run", edit: nil,
			phases: []Phase{PhasePlan, PhaseAdvise}, code: OK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo, cfg := testRepo(t)
			before := fp(t, repo.Root)
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			obs := &recorder{}
			if tc.cancelOn != "" {
				obs.onStep = func(name string) {
					if name == tc.cancelOn {
						cancel(&InterruptedError{Sig: os.Interrupt})
					}
				}
			}
			req := Request{Repo: repo, Config: cfg, Edit: tc.edit, Scope: []string{"pkg"}, Profile: tc.profile,
				AutoConfirm: !tc.confirm, Env: OSEnv(), DryRun: tc.name == "dry-run"}
			if tc.confirm {
				req.Confirm = func(*Record) error { return nil }
			}
			rec, err := Execute(ctx, req, obs)
			if rec == nil {
				t.Fatalf("no record: %v", err)
			}
			if got := Describe(err).Code; err != nil && got != tc.code || err == nil && tc.code != OK {
				t.Fatalf("outcome %v (%v), want %s", got, err, tc.code)
			}
			if rec.Code != tc.code {
				t.Errorf("record code %s, want %s", rec.Code, tc.code)
			}
			if diff := cmp.Diff(tc.phases, obs.phases); diff != "" {
				t.Errorf("phases (-want +got):\n%s", diff)
			}
			if tc.reverted {
				if got := fp(t, repo.Root); got != before {
					t.Errorf("the tree differs after the revert:\n%s", cmp.Diff(before, got))
				}
				if rec.Revert == nil || !rec.Revert.Verified {
					t.Errorf("revert not verified: %+v", rec.Revert)
				}
			}
			if j, _ := repo.Unfinished(); j != nil {
				t.Errorf("a journal is left: %+v", j)
			}
			if tc.name != "dry-run" && tc.name != "verify-only" {
				if _, err := LoadRecord(repo, rec.RunID); err != nil {
					t.Errorf("run record: %v", err)
				}
			}
		})
	}
}

// TestExecuteTypedOutcomes: a caller reads the outcome from the error's
// type, not its text.
func TestExecuteTypedOutcomes(t *testing.T) {
	repo, cfg := testRepo(t)
	_, err := Execute(context.Background(), Request{Repo: repo, Config: cfg, AutoConfirm: true, Env: OSEnv(),
		Edit: CommandEdit{Argv: []string{"sh", "-c", "echo BROKEN > pkg/a.txt"}}, Scope: []string{"pkg"}}, nil)
	var vf *verifyFailedError
	if !errors.As(err, &vf) || vf.Disposition != Reverted || len(vf.Failed) != 1 || vf.Failed[0].Name != "check" {
		t.Fatalf("err = %#v, want a reverted *verifyFailedError for step check", err)
	}
	if vf.Saved == "" {
		t.Fatal("the failed change was not kept")
	}
	b, err := os.ReadFile(filepath.Join(repo.Root, vf.Saved))
	if err != nil || !strings.Contains(string(b), "+BROKEN") {
		t.Fatalf("kept patch %s: %v\n%s", vf.Saved, err, b)
	}

	_, err = Execute(context.Background(), Request{Repo: repo, Config: cfg, AutoConfirm: true, Env: OSEnv(),
		Edit: CommandEdit{Argv: []string{"true"}}}, nil)
	var sr *scopeRequiredError
	if !errors.As(err, &sr) {
		t.Fatalf("err = %v, want *scopeRequiredError", err)
	}

	_, err = Execute(context.Background(), Request{Repo: repo, Config: cfg, Env: OSEnv(), Scope: []string{"pkg"},
		Edit: CommandEdit{Argv: []string{"true"}}}, nil)
	var ce *ConfirmationError
	if !errors.As(err, &ce) || !ce.NoTerminal {
		t.Fatalf("err = %v, want *ConfirmationError without a confirmer", err)
	}
}
