package orket

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/orket/orket/config"
	"github.com/orket/orket/patch"
	"github.com/orket/orket/scope"
	"github.com/orket/orket/store"
	"github.com/orket/orket/txn"
	"github.com/orket/orket/verdict"
)

// A Request is what a run is asked to do: the repository and its
// configuration, the edit, the scope and the profile, and how to behave.
// The command line builds one from its flags; Execute validates it.
type Request struct {
	Repo   *txn.Repo
	Config *config.Config
	// Edit is the edit source; nil is a verify-only run of the tree as
	// it is.
	Edit Edit
	// Scope holds the scope patterns; empty takes Config.Scope.
	Scope []string
	// Profile names the verify profile; empty takes verify.default.
	Profile string
	// Skip names steps not to run (--skip, ORKET_SKIP).
	Skip []string
	// Agent names who made the edit (--agent, ORKET_AGENT); empty is
	// store.DefaultAgent.
	Agent string
	// Task names the piece of work across attempts (--task, ORKET_TASK);
	// empty is the pair (scope, profile).
	Task string
	// AllowProtected names protect: globs the edit may change this time
	// (--allow-protected): a person's decision, never an agent's.
	AllowProtected []string
	// Touch names the paths the edit means to change (--touch): what the
	// learning loop weighs past failures against before the edit runs. It
	// widens nothing: the scope is what the edit may write.
	Touch []string

	DryRun          bool // print the plan and advisories; write nothing
	AutoConfirm     bool // --yes: do not ask
	Wait            bool // wait for the repository lock
	StrictPreflight bool // a failed preflight check stops the run (or preflight.strict)
	KeepOnFail      bool // keep a change that fails verification
	Commit          string

	// Confirm asks whether to go on with a mutating run that AutoConfirm
	// does not cover; an error stops the run. nil refuses.
	Confirm func(*Record) error

	// Learner advises the run and learns from it (package learn); nil
	// learns nothing.
	Learner Learner

	// Output are orket's own output streams (its stdout and stderr): a
	// file in the work tree they write to, directly or through a pipe to
	// tee, is not part of the transaction (see ownoutput.go).
	Output []*os.File

	Env Env
}

// Env is what a run takes from its surroundings, passed in rather than
// read deep inside.
type Env struct {
	Environ []string            // the environment edit commands and steps inherit
	Getenv  func(string) string // settings and preflight checks read it
	Now     func() time.Time
}

// OSEnv is the process's own environment and clock.
func OSEnv() Env {
	return Env{Environ: os.Environ(), Getenv: os.Getenv, Now: time.Now}
}

// An Edit is a run's edit source (docs/guide.md, Edit sources): a patch,
// an edit command, the uncommitted changes, or none.
type Edit interface {
	// Source names the kind: "patch", "command", "worktree" or "none".
	Source() string
	// plan computes what can be known before writing (step 2).
	plan(r *run) error
	// apply makes the edit (step 8).
	apply(ctx context.Context, r *run) error
}

// A PatchEdit applies a unified diff; its touch set is planned before any
// byte is written.
type PatchEdit struct {
	Name  string // where the patch came from ("-" for stdin)
	Patch *patch.Patch
}

// A CommandEdit runs a program that edits files in place; its touch set
// is measured after it exits.
type CommandEdit struct{ Argv []string }

// WorktreeEdit takes the uncommitted changes already in the tree as the
// candidate.
type WorktreeEdit struct{}

// VerifyOnly runs the profile on the tree as it is; Base names the
// revision whose diff to the tree is the touch set (default HEAD), and
// with Base the barrier is checked on it.
type VerifyOnly struct{ Base string }

func (PatchEdit) Source() string    { return "patch" }
func (CommandEdit) Source() string  { return "command" }
func (WorktreeEdit) Source() string { return "worktree" }
func (VerifyOnly) Source() string   { return "none" }

func mutating(e Edit) bool {
	_, ok := e.(VerifyOnly)
	return !ok
}

// validate resolves the request (the plan phase): profile, skips, scope.
func (r *run) validate() error {
	req := &r.req
	if req.Edit == nil {
		req.Edit = VerifyOnly{}
	}
	if req.Repo == nil || req.Config == nil {
		return errors.New("a request needs a repository and a configuration")
	}
	req.Repo.UseFSMonitor(req.Config.Snapshot.FSMonitor)
	if req.Env.Now == nil {
		req.Env.Now = time.Now
	}
	if req.Env.Getenv == nil {
		req.Env.Getenv = func(string) string { return "" }
	}
	if !mutating(req.Edit) {
		switch {
		case req.Commit != "":
			return Errorf(EUsage, "--commit needs an edit source", "--commit on a verify-only run")
		case req.KeepOnFail:
			return Errorf(EUsage, "--keep-on-fail needs an edit source; a verify-only run never reverts", "--keep-on-fail on a verify-only run")
		}
	}
	for _, n := range []struct{ flag, v string }{{"--agent", req.Agent}, {"--task", req.Task}} {
		if err := checkName(n.v); err != nil {
			return Errorf(EUsage, "name it with printable characters, at most 200 bytes", "%s %q: %v", n.flag, n.v, err)
		}
	}
	prof, err := req.Config.Profile(req.Profile)
	if err != nil {
		return err
	}
	r.prof = prof
	if r.skip, err = resolveSkips(prof, req.Skip); err != nil {
		return err
	}
	patterns := req.Scope
	if len(patterns) == 0 {
		patterns = req.Config.Scope
	}
	if r.scope, err = scope.Parse(patterns); err != nil {
		return &Error{Code: EUsage, Err: err, Msg: err.Error(),
			Hint: "scopes are repository-relative directories or globs such as pkg/api or 'pkg/**/*.go'"}
	}
	if mutating(req.Edit) && r.scope.Empty() {
		return &scopeRequiredError{}
	}
	if r.guard, err = newGuard(req.Config.Protect, req.AllowProtected); err != nil {
		return &Error{Code: EUsage, Err: err, Msg: "--allow-protected: " + err.Error(), Hint: "give a glob of protect: in orket.yaml"}
	}
	r.strict = req.StrictPreflight || req.Config.Preflight.Strict
	r.baselineOff = req.Config.Verify.BaselineOff
	if m := req.Config.Verify.BaselineMax; m > 0 {
		r.baselineMax = m
	}
	rr := RecordRequest{EditSource: req.Edit.Source(), Scope: append([]string{}, r.scope.Patterns()...),
		Profile: prof.Name, Skip: sortedKeys(r.skip), DryRun: req.DryRun, AutoConfirm: req.AutoConfirm,
		KeepOnFail: req.KeepOnFail, Commit: req.Commit, Agent: req.Agent, Task: req.Task,
		AllowProtected: req.AllowProtected, Touch: cleanPaths(req.Touch)}
	if rr.Agent == "" {
		rr.Agent = store.DefaultAgent
	}
	if rr.Task == "" {
		rr.Task = verdict.TaskKey(rr.Scope, rr.Profile)
	}
	switch e := req.Edit.(type) {
	case PatchEdit:
		rr.Patch = e.Name
	case CommandEdit:
		rr.Argv, rr.Instruction = e.Argv, config.ShellQuote(e.Argv)
	case VerifyOnly:
		rr.Base = e.Base
	}
	r.rec.Request = rr
	return nil
}

// resolveSkips checks step names to skip against the profile.
func resolveSkips(p *config.Resolved, names []string) (map[string]bool, error) {
	known := map[string]bool{}
	var list []string
	for _, s := range p.Steps {
		known[s.Name] = true
		list = append(list, s.Name)
	}
	out := map[string]bool{}
	for _, n := range names {
		if !known[n] {
			return nil, Errorf(EUsage, "steps of profile "+p.Name+": "+strings.Join(list, ", "), "--skip %q: no such step", n)
		}
		out[n] = true
	}
	return out, nil
}

func sortedKeys(m map[string]bool) []string {
	s := []string{}
	for k := range m {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}

// checkName checks an agent or task name: printable, one line, bounded.
func checkName(s string) error {
	if len(s) > 200 {
		return errors.New("too long")
	}
	for _, c := range s {
		if !unicode.IsPrint(c) {
			return fmt.Errorf("contains %q", c)
		}
	}
	return nil
}

// cleanPaths makes declared paths repository-relative and slash-separated,
// dropping empty ones.
func cleanPaths(paths []string) []string {
	var out []string
	for _, p := range paths {
		p = path.Clean(filepath.ToSlash(strings.TrimSpace(p)))
		if p != "" && p != "." {
			out = append(out, strings.TrimPrefix(p, "./"))
		}
	}
	return out
}
