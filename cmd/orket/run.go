package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket/config"
	"github.com/orket/orket/lessons"
	"github.com/orket/orket/preflight"
	"github.com/orket/orket/txn"
	"github.com/orket/orket/verify"
)

// runOptions are orket run's flags.
type runOptions struct {
	scopes          []string
	profile         string
	yes, dryRun     bool
	wait            bool
	strictPreflight bool
	commitMsg       string
	keepOnFail      bool
	base            string
	patch           string
	worktree        bool
	skip            []string
	argv            []string
}

func runCommand(o *options, result *any) *cli.Command {
	var ro runOptions
	return &cli.Command{
		Name:      "run",
		Usage:     "make an edit a transaction: snapshot, edit within scope, verify, keep or revert",
		UsageText: "orket run [--scope S]... [--profile P] [flags] [--patch FILE|- | --worktree | -- EDIT-COMMAND [ARGS...]]",
		Description: `run snapshots the working tree, applies one edit (a patch, an edit
command, or the uncommitted changes with --worktree), checks that it wrote
only inside --scope, runs the verify profile, and keeps the change if every
required step passes or puts the tree back exactly as it was.

Without an edit source it is a verify-only run: the profile runs on the tree
as it is and nothing is written or reverted.`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "scope", Usage: "allow the edit to write `PATH` (a directory or doublestar glob; repeatable)"},
			&cli.StringFlag{Name: "profile", Usage: "verify `PROFILE` from orket.yaml (default: verify.default)", Destination: &ro.profile},
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "do not ask for confirmation", Destination: &ro.yes, DisableDefaultText: true},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the plan and advisories; write nothing", Destination: &ro.dryRun, DisableDefaultText: true},
			&cli.BoolFlag{Name: "wait", Usage: "wait for another run's lock instead of failing with E_LOCKED", Destination: &ro.wait, DisableDefaultText: true},
			&cli.BoolFlag{Name: "strict-preflight", Usage: "stop before the snapshot when a preflight check fails", Destination: &ro.strictPreflight, DisableDefaultText: true},
			&cli.StringFlag{Name: "commit", Usage: "on success, commit exactly the touch set with `MESSAGE`", Destination: &ro.commitMsg},
			&cli.BoolFlag{Name: "keep-on-fail", Usage: "keep a change that fails verification (the lesson is still recorded)", Destination: &ro.keepOnFail, DisableDefaultText: true},
			&cli.StringFlag{Name: "base", Usage: "verify-only: take the touch set as the diff from `REV` to the working tree", Destination: &ro.base},
			&cli.StringFlag{Name: "patch", Usage: "apply the unified diff in `FILE` (- for stdin)", Destination: &ro.patch},
			&cli.BoolFlag{Name: "worktree", Usage: "the uncommitted changes in the working tree are the edit", Destination: &ro.worktree, DisableDefaultText: true},
			&cli.StringSliceFlag{Name: "skip", Usage: "skip the verify step `NAME` (repeatable; also ORKET_SKIP=a,b)"},
		},
		Action: func(c *cli.Context) error {
			ro.scopes = c.StringSlice("scope")
			ro.skip = c.StringSlice("skip")
			ro.argv = c.Args().Slice()
			res, err := runRun(c.Context, o, &ro)
			if res == nil {
				return err
			}
			*result = res
			if e := res.setOutcome(err); e != nil {
				e.Result = res // --json reports the whole run, not only the error
				return e
			}
			return nil
		},
	}
}

// runResult is orket run's outcome: the --json object and the run record.
type runResult struct {
	Code        Code                 `json:"code"`
	ExitStatus  int                  `json:"exit_status"`
	Error       string               `json:"error,omitempty"`
	Hint        string               `json:"hint,omitempty"`
	RunID       string               `json:"run_id"`
	Request     runRequest           `json:"request"`
	Plan        runPlan              `json:"plan"`
	Advisories  []lessons.Advisory   `json:"advisories"`
	Preflight   []preflight.Result   `json:"preflight"`
	Edit        *verify.StepResult   `json:"edit,omitempty"`
	Steps       []*verify.StepResult `json:"steps"`
	Barrier     *barrierView         `json:"barrier,omitempty"`
	GitChanges  []string             `json:"git_changes,omitempty"`
	Snapshot    string               `json:"snapshot_ref,omitempty"`
	Revert      *revertView          `json:"revert,omitempty"`
	PatchFile   string               `json:"patch_file,omitempty"`
	Commit      string               `json:"commit,omitempty"`
	LessonID    *string              `json:"lesson_id"`
	LessonIDs   []string             `json:"lesson_ids"`
	Timings     map[string]int64     `json:"timings_ms"`
	RecordFile  string               `json:"record,omitempty"`
	Lessons     []lessonView         `json:"lessons,omitempty"`
	start       time.Time
	patchText   string
	headPre     string
	dirtyBefore bool
}

type runRequest struct {
	EditSource  string   `json:"edit_source"` // command, patch, worktree, none
	Argv        []string `json:"argv,omitempty"`
	Instruction string   `json:"instruction,omitempty"`
	Patch       string   `json:"patch,omitempty"`
	Scope       []string `json:"scope"`
	Profile     string   `json:"verify_profile"`
	Base        string   `json:"base,omitempty"`
	Skip        []string `json:"skip,omitempty"`
	DryRun      bool     `json:"dry_run"`
	AutoConfirm bool     `json:"auto_confirm"`
	KeepOnFail  bool     `json:"keep_on_fail,omitempty"`
	Commit      string   `json:"commit_message,omitempty"`
}

type runPlan struct {
	TouchSet   []string   `json:"touch_set"`
	TouchCount int        `json:"touch_count"`
	Measured   bool       `json:"measured"` // false: planned from a patch, or not known yet
	Steps      []planStep `json:"steps"`
}

type planStep struct {
	Name    string `json:"name"`
	Command string `json:"command"`
	Skip    string `json:"skip,omitempty"`
}

type barrierView struct {
	Outside []string `json:"outside,omitempty"`
	Guarded []string `json:"guarded,omitempty"`
}

type revertView struct {
	Reverted bool     `json:"reverted"`
	Verified bool     `json:"revert_verified"`
	Paths    []string `json:"paths"`
}

// setOutcome fills the result's outcome from the run's error and returns
// that error as an *Error (nil for success).
func (res *runResult) setOutcome(err error) *Error {
	res.Code, res.ExitStatus, res.Error, res.Hint = OK, 0, "", ""
	if err == nil {
		return nil
	}
	e := asError(err)
	res.Code, res.ExitStatus, res.Error, res.Hint = e.Code, exitStatusOf(e), e.Msg, e.Hint
	return e
}

func (res *runResult) phase(name string, since time.Time) {
	res.Timings[name+"_ms"] = time.Since(since).Milliseconds()
}

// runRun is orket run, in the order of SPEC section 3.2.
func runRun(ctx context.Context, o *options, ro *runOptions) (*runResult, error) {
	res := &runResult{Advisories: []lessons.Advisory{}, Preflight: []preflight.Result{}, Steps: []*verify.StepResult{}, LessonIDs: []string{},
		Timings: map[string]int64{}, start: time.Now()}
	planStart := time.Now()

	// 1. Resolve repository, configuration, edit source, profile, scope.
	sources := 0
	for _, on := range []bool{ro.patch != "", ro.worktree, len(ro.argv) > 0} {
		if on {
			sources++
		}
	}
	if sources > 1 {
		return nil, errorf(EUsage, "give one of --patch, --worktree or -- EDIT-COMMAND", "more than one edit source")
	}
	mutating := sources == 1
	switch {
	case ro.base != "" && mutating:
		return nil, errorf(EUsage, "use --base only without an edit source (a verify-only run)", "--base with an edit")
	case !mutating && ro.commitMsg != "":
		return nil, errorf(EUsage, "--commit needs an edit source", "--commit on a verify-only run")
	case !mutating && ro.keepOnFail:
		return nil, errorf(EUsage, "--keep-on-fail needs an edit source; a verify-only run never reverts", "--keep-on-fail on a verify-only run")
	}
	r, err := openRepo(o)
	if err != nil {
		return nil, err
	}
	cfg, err := loadConfig(o, r)
	if err != nil {
		return nil, err
	}
	prof, err := cfg.Profile(ro.profile)
	var upe *config.UnknownProfileError
	if errors.As(err, &upe) {
		return nil, errorf(EUsage, "defined profiles: "+strings.Join(upe.Known, ", "), "%v", err)
	} else if err != nil {
		return nil, err
	}
	skip, err := skips(o, ro, prof)
	if err != nil {
		return nil, err
	}
	scopePatterns := ro.scopes
	if len(scopePatterns) == 0 {
		scopePatterns = cfg.Scope
	}
	scope, err := txn.ParseScope(scopePatterns)
	if err != nil {
		return nil, errorf(EUsage, "scopes are repository-relative directories or globs such as pkg/api or 'pkg/**/*.go'", "%v", err)
	}
	if mutating && len(scope.Patterns()) == 0 {
		return nil, errorf(EScopeRequired, "pass --scope DIR (repeatable) or set scope in orket.yaml", "a mutating run needs a scope")
	}
	res.Request = runRequest{Scope: append([]string{}, scope.Patterns()...), Profile: prof.Name, Base: ro.base, Skip: sortedSkips(skip),
		DryRun: ro.dryRun, AutoConfirm: ro.yes, KeepOnFail: ro.keepOnFail, Commit: ro.commitMsg, EditSource: "none"}
	switch {
	case ro.patch != "":
		res.Request.EditSource, res.Request.Patch = "patch", ro.patch
	case ro.worktree:
		res.Request.EditSource = "worktree"
	case len(ro.argv) > 0:
		res.Request.EditSource, res.Request.Argv, res.Request.Instruction = "command", ro.argv, config.ShellQuote(ro.argv)
	}
	if err := checkUnfinished(ctx, r); err != nil {
		return nil, err
	}

	// 2. Plan: the touch set where it can be known before writing.
	var patch *txn.Patch
	var worktreeBase map[string]*txn.File
	switch res.Request.EditSource {
	case "patch":
		if patch, err = readPatch(o, ro.patch); err != nil {
			return nil, err
		}
		res.Plan.TouchSet = patch.Paths()
		if outside := scope.Outside(res.Plan.TouchSet); len(outside) > 0 {
			res.Barrier = &barrierView{Outside: outside}
			return res, outOfScope(outside, nil, false)
		}
		if err := r.CheckPatch(patch); err != nil {
			return nil, patchError(err)
		}
	case "worktree":
		if res.Plan.TouchSet, worktreeBase, err = r.ChangedSince(""); err != nil {
			return nil, gitError(err)
		}
		res.Plan.Measured = true
		if outside := scope.Outside(res.Plan.TouchSet); len(outside) > 0 {
			res.Barrier = &barrierView{Outside: outside}
			return res, outOfScope(outside, nil, false)
		}
		if len(res.Plan.TouchSet) == 0 {
			return res, errorf(ETouchsetEmpty, "make the change first, or use -- EDIT-COMMAND", "--worktree: there are no uncommitted changes")
		}
	case "none":
		if res.Plan.TouchSet, _, err = r.ChangedSince(ro.base); err != nil {
			return nil, gitError(err)
		}
		res.Plan.Measured = true
	}
	res.Plan.TouchCount = len(res.Plan.TouchSet)
	res.Plan.Steps = planSteps(prof, skip, res.Plan.TouchSet)
	res.headPre = head(r)
	if !mutating && ro.base == "" {
		res.dirtyBefore = len(res.Plan.TouchSet) > 0
	}
	if res.Plan.TouchSet == nil {
		res.Plan.TouchSet = []string{}
	}
	res.phase("plan", planStart)

	out := newRunPrinter(o)
	out.plan(res)

	// 3. Advisories from past lessons, and preflight checks.
	if err := advise(o, r, cfg, prof, res, out); err != nil {
		return res, err
	}
	strict := ro.strictPreflight || cfg.Preflight.Strict || o.getenv("ORKET_STRICT_PREFLIGHT") == "1"
	if failed := failedChecks(res.Preflight); strict && len(failed) > 0 {
		return res, &Error{Code: EPreflightFailed, Msg: "preflight check failed: " + strings.Join(failed, "; ") + "; nothing was written",
			Hint: "satisfy the check and run again (strict mode comes from --strict-preflight, preflight.strict or ORKET_STRICT_PREFLIGHT=1)"}
	}

	// 4. A dry run ends here, having written nothing.
	if ro.dryRun {
		out.line("dry run: nothing was written")
		return res, nil
	}

	// 5. Confirm.
	if mutating && !ro.yes {
		if err := confirm(o, res); err != nil {
			return res, err
		}
	}

	// 6. Lock.
	res.RunID = newRunID()
	unlock, err := r.Lock(ctx, mutating, ro.wait, txn.Holder{RunID: res.RunID, PID: os.Getpid(), Started: res.start, Command: "orket run " + res.Request.Instruction})
	var le *txn.LockedError
	switch {
	case errors.As(err, &le):
		return res, errorf(ELocked, "wait for it to finish, or pass --wait", "%v", le)
	case errors.Is(err, context.Canceled):
		return res, interrupted(ctx, "while waiting for the lock")
	case err != nil:
		return res, &Error{Code: EInternal, Err: err, Msg: "take the repository lock: " + err.Error(), Hint: "check that .git is writable"}
	}
	defer unlock()
	if j, err := r.ReadJournal(); err != nil || j != nil {
		return res, recoveryNeeded(j, err)
	}

	env := runEnv(o, res.RunID, scope)
	if !mutating {
		runErr := verifyOnly(ctx, o, r, cfg, prof, skip, res, env, out)
		return res, finishRecord(o, r, cfg, res, runErr, out)
	}
	runErr := transact(ctx, o, r, cfg, prof, skip, scope, ro, patch, worktreeBase, res, env, out)
	return res, finishRecord(o, r, cfg, res, runErr, out)
}

func sortedSkips(m map[string]bool) []string {
	var s []string
	for k := range m {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}

// skips resolves --skip and ORKET_SKIP against the profile's step names.
func skips(o *options, ro *runOptions, p *config.Resolved) (map[string]bool, error) {
	names := append([]string{}, ro.skip...)
	if env := o.getenv("ORKET_SKIP"); env != "" {
		for _, n := range strings.Split(env, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
	}
	known := map[string]bool{}
	var list []string
	for _, s := range p.Steps {
		known[s.Name] = true
		list = append(list, s.Name)
	}
	out := map[string]bool{}
	for _, n := range names {
		if !known[n] {
			return nil, errorf(EUsage, "steps of profile "+p.Name+": "+strings.Join(list, ", "), "--skip %q: no such step", n)
		}
		out[n] = true
	}
	return out, nil
}

func planSteps(p *config.Resolved, skip map[string]bool, touch []string) []planStep {
	var out []planStep
	for _, s := range p.Steps {
		ps := planStep{Name: s.Name, Command: s.Command()}
		if skip[s.Name] {
			ps.Skip = "skip"
		} else if !verify.WhenMatches(s, touch) {
			ps.Skip = "when"
		}
		out = append(out, ps)
	}
	return out
}

func readPatch(o *options, name string) (*txn.Patch, error) {
	var rd io.Reader
	if name == "-" {
		rd = o.stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, errorf(EUsage, "pass an existing patch file, or - for stdin", "--patch %s: %v", name, unwrapPathError(err))
		}
		defer f.Close()
		rd = f
	}
	p, err := txn.ParsePatch(rd)
	if err != nil {
		return nil, patchError(err)
	}
	return p, nil
}

func patchError(err error) error {
	var ue *txn.UnsafePathError
	var se *txn.SymlinkPathError
	switch {
	case errors.As(err, &ue):
		return &Error{Code: EWriteOutOfScope, Err: err, Msg: "the patch writes outside the repository: " + ue.Error(),
			Hint: "nothing was written; make the patch with repository-relative paths", Fields: map[string]any{"outside": []string{ue.Path}}}
	case errors.As(err, &se):
		return &Error{Code: EWriteOutOfScope, Err: err, Msg: "the patch writes through a symlink: " + se.Error(),
			Hint: "nothing was written; patch the symlink's target path instead", Fields: map[string]any{"outside": []string{se.Path}}}
	}
	return &Error{Code: EPatchInvalid, Err: err, Msg: "the patch does not apply: " + err.Error(),
		Hint: "nothing was written; regenerate the patch against the current tree (git diff --binary)"}
}

func gitError(err error) error {
	var re *txn.RevisionError
	if errors.As(err, &re) {
		return &Error{Code: EUsage, Err: err, Msg: re.Error(), Hint: "name a branch, tag or commit that exists (git fetch first in CI)"}
	}
	return repoError(err)
}

// repoError maps errors of the repository layer.
func repoError(err error) error {
	var ue *txn.UnsupportedError
	if errors.As(err, &ue) {
		return &Error{Code: ERepoUnsupported, Err: err, Msg: ue.Error(), Hint: "orket refuses what it cannot restore exactly; change the setting or run without orket"}
	}
	return &Error{Code: EInternal, Err: err, Msg: err.Error(), Hint: "check the repository with git status; report this if it persists"}
}

func outOfScope(outside, guarded []string, reverted bool) error {
	all := append(append([]string{}, outside...), guarded...)
	hint := "nothing was written; widen --scope deliberately or change the edit"
	if reverted {
		hint = "the change was reverted; widen --scope deliberately or change the edit"
	}
	return &Error{Code: EWriteOutOfScope, Msg: "the edit writes outside its scope: " + strings.Join(all, ", "), Hint: hint}
}

func recoveryNeeded(j *txn.Journal, err error) error {
	if err != nil {
		return &Error{Code: ERecoveryNeeded, Err: err, Msg: "an unfinished transaction's journal is unreadable: " + err.Error(),
			Hint: "run orket recover, or orket recover --discard to forget it"}
	}
	return &Error{Code: ERecoveryNeeded, Msg: fmt.Sprintf("run %s did not finish (it stopped during %s); its snapshot is %s", j.RunID, j.Phase, j.Ref),
		Hint:   "run orket recover to restore the tree as it was before that run, or orket recover --discard to keep the tree as it is",
		Fields: map[string]any{"snapshot_ref": j.Ref, "unfinished_run": j.RunID}}
}

// checkUnfinished refuses to start over an unfinished transaction. A
// journal whose run still holds the lock is a run in progress, not a crash:
// the lock step reports that (E_LOCKED, or --wait).
func checkUnfinished(ctx context.Context, r *txn.Repo) error {
	j, err := r.ReadJournal()
	if err == nil && j == nil {
		return nil
	}
	unlock, lerr := r.Lock(ctx, true, false, txn.Holder{})
	if lerr != nil {
		return nil
	}
	unlock()
	return recoveryNeeded(j, err)
}

func confirm(o *options, res *runResult) error {
	f, ok := o.stdin.(*os.File)
	if !ok || !isTerminal(f) || o.getenv("CI") != "" {
		return errorf(EConfirmationRequired, "pass --yes to run without asking", "a mutating run needs confirmation and stdin is not a terminal")
	}
	fmt.Fprintf(o.stderr, "Apply the edit to scope %s and verify with %s? [y/N] ", strings.Join(res.Request.Scope, ", "), res.Request.Profile)
	line, _ := bufio.NewReader(o.stdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return errorf(EConfirmationRequired, "answer y to proceed, or pass --yes", "not confirmed; nothing was written")
}

func newRunID() string {
	return time.Now().UTC().Format("20060102T150405Z") + "-" + randomHex(3)
}

// runEnv is the environment of edit commands and verify steps.
func runEnv(o *options, runID string, scope txn.Scope) []string {
	env := os.Environ()
	return append(env, "ORKET_RUN_ID="+runID, "ORKET_SCOPE="+strings.Join(scope.Patterns(), "\n"))
}

// interrupted is the outcome after SIGINT or SIGTERM.
func interrupted(ctx context.Context, what string) error {
	status := 130
	name := "SIGINT"
	var se signalError
	if errors.As(context.Cause(ctx), &se) && se.sig == sigterm {
		status, name = 143, "SIGTERM"
	}
	return &Error{Code: EInterrupted, Exit: status, Msg: "interrupted by " + name + " " + what, Hint: "run again when ready"}
}
