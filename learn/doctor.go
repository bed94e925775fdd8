package learn

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/orket/orket"
	"github.com/orket/orket/classify"
	"github.com/orket/orket/config"
	"github.com/orket/orket/preflight"
	"github.com/orket/orket/redact"
	"github.com/orket/orket/sandbox"
	"github.com/orket/orket/store"
	"github.com/orket/orket/txn"
	"github.com/orket/orket/verify"
)

// A DoctorRequest is orket doctor: is the repository ready for agents?
type DoctorRequest struct {
	Repo    *txn.Repo
	Config  *config.Config
	Profile string // "" is verify.default
	Env     orket.Env
}

// A DoctorReport is what orket doctor found.
type DoctorReport struct {
	Code       orket.Code `json:"code"`
	ExitStatus int        `json:"exit_status"`
	Ready      bool       `json:"ready"`
	Head       string     `json:"head"`
	Profile    string     `json:"profile"`
	// Steps are the profile's steps as they ran on a clean copy of
	// HEAD's tree (not reached after a required failure: absent).
	Steps []DoctorStep `json:"steps"`
	// Red: a required step fails on HEAD, without any change.
	Red bool `json:"red"`
	// Missing names the programs the steps start that are not installed.
	Missing []string `json:"missing_tools"`
	// Runtimes are the runtime versions the project's manifests ask for,
	// against those installed (as orket init checks them).
	Runtimes []RuntimeCheck `json:"runtimes"`
	Sandbox  DoctorSandbox  `json:"sandbox"`
	// FSMonitor is snapshot.fsmonitor, and whether Watchman is on PATH.
	FSMonitor string       `json:"fsmonitor"`
	Watchman  bool         `json:"watchman"`
	Memory    DoctorMemory `json:"memory"`
	// Problems say, one line each, what keeps the repository from being
	// ready; Warnings what went wrong without changing that.
	Problems []string `json:"problems"`
	Warnings []string `json:"warnings,omitempty"`
}

// A DoctorStep is one step's result on HEAD.
type DoctorStep struct {
	Name       string `json:"name"`
	Command    string `json:"command"`
	Required   bool   `json:"required"`
	Status     string `json:"status"`
	DurationMS int64  `json:"duration_ms"`
	Exit       string `json:"exit,omitempty"`
	// Cause is the line that says why a failed step failed.
	Cause string `json:"cause,omitempty"`
}

// DoctorSandbox is the kernel sandbox an edit command would get.
type DoctorSandbox struct {
	Mode      string   `json:"mode"` // auto, required, off
	Available bool     `json:"available"`
	Reason    string   `json:"reason,omitempty"` // why it is not
	Write     []string `json:"write"`            // what it opens beside the scope
}

// DoctorMemory is the memory's size and how it is shared.
type DoctorMemory struct {
	Lessons  int        `json:"lessons"`
	Bytes    int64      `json:"bytes"`
	Sync     string     `json:"sync"` // auto, or "" (by hand)
	Remote   string     `json:"remote"`
	LastSync *time.Time `json:"last_sync,omitempty"`
}

// Doctor verifies HEAD's committed tree in a clean copy, with the
// profile's steps in order, and reports with it what an agent's first
// runs depend on. The result is kept as the baseline of a clean tree, so
// a first failing run reuses it. The report is ready when every required
// step passes, no program a step starts is missing and the installed
// runtimes are those the project asks for.
func Doctor(ctx context.Context, req DoctorRequest) (_ *DoctorReport, err error) {
	defer func() { err = coded(err) }()
	cfg, repo := req.Config, req.Repo
	if req.Env.Now == nil {
		req.Env.Now = time.Now
	}
	prof, err := cfg.Profile(req.Profile)
	if err != nil {
		return nil, &orket.Error{Code: orket.EUsage, Err: err, Msg: err.Error(), Hint: "name a profile of orket.yaml"}
	}
	rep := &DoctorReport{Code: orket.OK, Profile: prof.Name, Steps: []DoctorStep{}, Missing: []string{}, Runtimes: []RuntimeCheck{}, Problems: []string{},
		FSMonitor: cfg.Snapshot.FSMonitor}
	rep.Head = repo.HeadCommit()
	copyDir, err := os.MkdirTemp("", "orket-doctor-")
	if err != nil {
		return nil, internal("make a directory for HEAD's copy", "check that the temporary directory is writable", err)
	}
	defer os.RemoveAll(copyDir)
	if err := repo.Export("", copyDir); err != nil {
		return nil, internal("copy HEAD's tree", "check that the repository is readable", err)
	}
	if err := linkDependencies(repo.Root, copyDir); err != nil {
		rep.Warnings = append(rep.Warnings, "the steps ran without the work tree's dependencies: "+err.Error())
	}
	red := redact.New(redact.Options{Environ: req.Env.Environ})
	o := verify.Options{Root: copyDir, Env: append([]string{}, req.Env.Environ...), Tail: cfg.Lessons.Tail, Redactor: red}
	results := verify.Run(ctx, prof, o)
	if ctx.Err() != nil {
		return nil, orket.Errorf(orket.EInterrupted, "run orket doctor again", "orket doctor was interrupted")
	}
	// The copy's path in the output is the work tree's to a run.
	real, _ := filepath.EvalSymlinks(copyDir)
	for _, res := range results {
		res.OutputTail = strings.ReplaceAll(res.OutputTail, copyDir, repo.Root)
		if real != "" && real != copyDir {
			res.OutputTail = strings.ReplaceAll(res.OutputTail, real, repo.Root)
		}
	}
	rep.addSteps(results)
	o.Root = repo.Root
	if err := seedBaseline(ctx, repo, prof, o, results, req.Env.Now()); err != nil {
		rep.Warnings = append(rep.Warnings, "could not keep the result as the baseline of a clean tree: "+err.Error())
	}
	rep.missingTools(repo.Root, prof)
	if det, err := config.Detect(repo.Root); err == nil {
		rep.Runtimes = checkRuntimes(repo.Root, det)
	}
	for _, rt := range rep.Runtimes {
		if !rt.OK {
			rep.Problems = append(rep.Problems, rt.Line())
		}
	}
	rep.Sandbox = doctorSandbox(cfg)
	if rep.Sandbox.Mode == "required" && !rep.Sandbox.Available {
		rep.Problems = append(rep.Problems, "sandbox: required, and the kernel sandbox is unavailable ("+rep.Sandbox.Reason+")")
	}
	rep.Watchman = preflight.LookPath("watchman", preflight.Env{Root: repo.Root}) != ""
	rep.Memory = doctorMemory(repo, cfg)
	rep.Ready = len(rep.Problems) == 0
	if !rep.Ready {
		rep.Code, rep.ExitStatus = orket.ENotReady, orket.ENotReady.Exit()
		return rep, &NotReadyError{Problems: rep.Problems}
	}
	return rep, nil
}

// addSteps reports the steps as they ran, a failure with its cause
// line; a required one that failed makes HEAD red.
func (rep *DoctorReport) addSteps(results []*verify.StepResult) {
	for _, res := range results {
		st := DoctorStep{Name: res.Name, Command: res.Command, Required: res.Required, Status: res.Status, DurationMS: res.DurationMS}
		if res.Status == verify.Failed {
			st.Exit = res.ExitText()
			if c := classify.CauseOf(res.OutputTail, res.Command); c.Line != "" {
				st.Cause = c.Line
			} else {
				st.Cause = lastLine(res.OutputTail)
			}
			if res.Required {
				rep.Red = true
				rep.Problems = append(rep.Problems, "step "+res.Name+" fails on HEAD without any change: "+st.Cause)
			}
		}
		rep.Steps = append(rep.Steps, st)
	}
}

// missingTools reports the programs the profile's steps start that are
// not installed.
func (rep *DoctorReport) missingTools(root string, prof *config.Resolved) {
	seen := map[string]bool{}
	for _, s := range prof.Steps {
		name := preflight.CommandName(s.Command())
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		if preflight.LookPath(name, preflight.Env{Root: filepath.Join(root, filepath.FromSlash(s.Dir))}) == "" &&
			!strings.Contains(name, "/") {
			rep.Missing = append(rep.Missing, name)
			rep.Problems = append(rep.Problems, "step "+s.Name+" runs "+name+", which is not installed")
		}
	}
}

// seedBaseline keeps doctor's result as the baseline of the clean tree,
// under the repository's lock: .orket is part of a running transaction,
// which must not see it change.
func seedBaseline(ctx context.Context, repo *txn.Repo, prof *config.Resolved, o verify.Options, results []*verify.StepResult, now time.Time) error {
	unlock, err := repo.Lock(ctx, false, true, txn.Holder{RunID: "doctor", PID: os.Getpid(), Started: now, Command: "orket doctor"})
	if err != nil {
		return err
	}
	defer unlock()
	return orket.SeedBaseline(repo, prof, o, results, "doctor-"+now.UTC().Format("20060102T150405Z"), now)
}

// A NotReadyError is orket doctor's finding that the repository is not
// ready for agents.
type NotReadyError struct{ Problems []string }

func (e *NotReadyError) Error() string {
	return "the repository is not ready for agents: " + strings.Join(e.Problems, "; ")
}

func (e *NotReadyError) Problem() orket.Problem {
	return orket.Problem{Code: orket.ENotReady, Msg: e.Error(), Hint: "fix what is named, then run orket doctor again"}
}

// dependencyDirs are the ignored directories of installed dependencies a
// clean copy of the tree links to the work tree's instead of lacking
// them: without them a Node or Python project's steps cannot run at all.
var dependencyDirs = []string{"node_modules", ".venv", "venv"}

// linkDependencies links copyDir's dependency directories to root's;
// its error names those it could not link.
func linkDependencies(root, copyDir string) error {
	var errs []error
	for _, d := range dependencyDirs {
		if fi, err := os.Stat(filepath.Join(root, d)); err == nil && fi.IsDir() {
			if _, err := os.Lstat(filepath.Join(copyDir, d)); os.IsNotExist(err) {
				if err := os.Symlink(filepath.Join(root, d), filepath.Join(copyDir, d)); err != nil {
					errs = append(errs, fmt.Errorf("link %s: %w", d, err))
				}
			}
		}
	}
	return errors.Join(errs...)
}

func doctorSandbox(cfg *config.Config) DoctorSandbox {
	s := DoctorSandbox{Mode: cfg.Sandbox.Mode, Write: append([]string{}, cfg.Sandbox.Write...)}
	if s.Mode == "" {
		s.Mode = "auto"
	}
	if s.Mode != "off" {
		abi, reason := sandbox.Available()
		s.Available, s.Reason = abi > 0, reason
	}
	return s
}

func doctorMemory(repo *txn.Repo, cfg *config.Config) DoctorMemory {
	m := DoctorMemory{Sync: cfg.Memory.Sync, Remote: cfg.Memory.Remote}
	log := &store.Log{Path: LessonPath(repo, cfg)}
	if fi, err := os.Stat(log.Path); err == nil {
		m.Bytes = fi.Size()
		log.Each(func([]byte) error { m.Lessons++; return nil })
	}
	if fi, err := os.Stat(store.Path(OrketDir(repo), store.SyncState)); err == nil {
		t := fi.ModTime().UTC()
		m.LastSync = &t
	}
	return m
}
