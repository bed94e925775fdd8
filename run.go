package orket

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/orket/orket/config"
	"github.com/orket/orket/internal/contain"
	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/patch"
	"github.com/orket/orket/preflight"
	"github.com/orket/orket/redact"
	"github.com/orket/orket/scope"
	"github.com/orket/orket/txn"
	"github.com/orket/orket/verify"
)

// A run is one orket run: its request, its record, and what its phases
// share. Execute makes and runs one.
type run struct {
	req    Request
	obs    Observer
	rec    *Record
	prof   *config.Resolved
	skip   map[string]bool
	scope  scope.Scope
	strict bool

	start        time.Time
	dirtyBefore  bool     // the tree had uncommitted changes before the run
	env          []string // of edit commands and steps
	patchPlan    *patch.Plan
	worktreeBase map[string]*txn.File // HEAD's files, for a --worktree candidate
	tx           *txn.Txn
	edited       bool           // the edit wrote (or may have written) into the tree
	group        *contain.Group // every process the run starts, and their descendants
	red          *redact.Redactor
	baselineOff  bool           // verify.baseline: off
	baselineMax  time.Duration  // verify.baseline_max
	newBaseline  *baselineEntry // this run's baseline, for the cache once the transaction ends
	verdictNotes []string       // notes on the run beside its steps' (tests modified)
	content      string         // names the content of the verified tree (contentKey)
	guard        guard          // protect: and --allow-protected
	locked       bool           // the run took the repository lock

	// info is what the learner is told of the run, learning what it
	// keeps of it (nil: none), told what it tells an edit command.
	info     *RunInfo
	learning Learning
	told     []string
}

// Execute runs a request in the order of docs/design.md (A run) and
// returns its record with the outcome: nil and the error when the request
// is invalid or the repository cannot be used; the record (also for
// --json) and a typed error (see Describe) when the run failed; the record
// and nil when it passed.
func Execute(ctx context.Context, req Request, obs Observer) (*Record, error) {
	if obs == nil {
		obs = NopObserver{}
	}
	r := &run{req: req, obs: obs, rec: newRecord(), baselineMax: baselineMaxDefault}
	r.red = redact.New(redact.Options{Environ: req.Env.Environ})
	rec, err := r.execute(ctx)
	// After the lock is released: what the learner does then (a push)
	// may wait on the network.
	if r.locked && ctx.Err() == nil && r.learning != nil && r.learning.Finish(ctx) && rec.RecordFile != "" {
		r.rewriteRecord()
	}
	return rec, err
}

func (r *run) execute(ctx context.Context) (*Record, error) {
	// 1. Resolve.
	r.obs.Phase(PhasePlan, r.rec)
	if err := r.validate(); err != nil {
		return nil, err
	}
	r.start = r.req.Env.Now()
	if err := r.checkUnfinished(ctx); err != nil {
		return nil, err
	}
	// 2. Plan.
	if err := r.plan(); err != nil {
		var oos *outOfScopeError
		var empty *touchsetEmptyError
		var pw *protectedWriteError
		if errors.As(err, &oos) || errors.As(err, &empty) || errors.As(err, &pw) {
			return r.rec, r.outcome(err)
		}
		return nil, err
	}
	r.obs.Planned(r.rec)

	// 3. Advisories and preflight, with what the team learned.
	r.obs.Phase(PhaseAdvise, r.rec)
	if err := r.advise(ctx); err != nil {
		return r.rec, r.outcome(err)
	}
	if failed := preflight.Failed(r.rec.Preflight); r.strict && len(failed) > 0 {
		return r.rec, r.outcome(&PreflightFailedError{Failed: failed, Run: true})
	}

	// 4. A dry run ends here, having written nothing.
	if r.req.DryRun {
		return r.rec, r.outcome(nil)
	}

	// 5. Confirm.
	if mutating(r.req.Edit) && !r.req.AutoConfirm {
		r.obs.Phase(PhaseConfirm, r.rec)
		if r.req.Confirm == nil {
			return r.rec, r.outcome(&ConfirmationError{NoTerminal: true})
		}
		if err := r.req.Confirm(r.rec); err != nil {
			return r.rec, r.outcome(err)
		}
	}

	// 6. Lock.
	r.obs.Phase(PhaseLock, r.rec)
	r.rec.RunID = newRunID(r.req.Env.Now())
	unlock, err := r.lock(ctx)
	if err != nil {
		return r.rec, r.outcome(err)
	}
	r.locked = true
	defer unlock()
	r.group = contain.New(r.rec.RunID)
	defer func() {
		if err := r.group.Close(); err != nil {
			r.obs.Warn("stop the run's processes: " + err.Error())
		}
	}()
	r.env = append(append([]string{}, r.req.Env.Environ...),
		"ORKET_RUN_ID="+r.rec.RunID, "ORKET_SCOPE="+strings.Join(r.scope.Patterns(), "\n"))
	if r.info != nil {
		r.info.Environ = r.env
	}

	// 7 to 12.
	if mutating(r.req.Edit) {
		defer r.brief(ctx)()
		err = r.transact(ctx)
	} else {
		err = r.verifyOnly(ctx)
	}
	return r.rec, r.finish(ctx, err)
}

// outcome sets the record's outcome for a run that ends before its lock:
// nothing is written, no record is kept.
func (r *run) outcome(err error) error {
	r.rec.setOutcome(err)
	return err
}

// checkUnfinished refuses to start over an unfinished transaction. A
// journal whose run still holds the lock is a run in progress, not a
// crash: the lock step reports that (E_LOCKED, or --wait).
func (r *run) checkUnfinished(ctx context.Context) error {
	j, err := r.req.Repo.Unfinished()
	if err == nil && j == nil {
		return nil
	}
	unlock, lerr := r.req.Repo.Lock(ctx, true, false, txn.Holder{})
	if lerr != nil {
		return nil
	}
	unlock()
	return &recoveryNeededError{Journal: j, Err: err}
}

// plan is step 2: the touch set where it can be known before writing, the
// barrier on it, and the steps.
func (r *run) plan() error {
	t := r.req.Env.Now()
	err := r.req.Edit.plan(r)
	// Counted also when the plan refuses the run (the barrier on a
	// patch's or a --base diff's paths): the record names them.
	r.rec.Plan.TouchCount = len(r.rec.Plan.TouchSet)
	if err != nil {
		return err
	}
	r.rec.Plan.Protect = r.req.Config.Protect
	if err := r.checkSandbox(); err != nil {
		return err
	}
	r.rec.Plan.Steps = planSteps(r.prof, r.skip, r.rec.Plan.TouchSet)
	r.checkScopeMatches()
	r.rec.HeadPre = r.req.Repo.HeadCommit()
	r.phaseTime("plan", t)
	return nil
}

func (e PatchEdit) plan(r *run) error {
	root, err := r.req.Repo.FS()
	if err != nil {
		return err
	}
	// A plain diff's names become paths against the tree (its strip
	// level) before the barrier judges them.
	if err := e.Patch.Resolve(root); err != nil {
		return err
	}
	r.rec.Plan.TouchSet = e.Patch.Paths()
	if err := r.barrierOnPlan(); err != nil {
		return err
	}
	if r.patchPlan, err = e.Patch.Plan(root); err != nil {
		return err
	}
	// Known before a byte is written: a protected path the patch would
	// change refuses it here.
	return r.checkProtected(r.rec.Plan.TouchSet, func(p string) bool {
		_, err := root.Lstat(p)
		return err == nil
	}, false)
}

func (CommandEdit) plan(*run) error { return nil }

func (WorktreeEdit) plan(r *run) error {
	touch, base, err := r.req.Repo.ChangedSince("")
	if err != nil {
		return err
	}
	r.rec.Plan.TouchSet, r.rec.Plan.Measured, r.worktreeBase = nonNil(touch), true, base
	if err := r.barrierOnPlan(); err != nil {
		return err
	}
	if len(touch) == 0 {
		return &touchsetEmptyError{Worktree: true}
	}
	return nil
}

func (e VerifyOnly) plan(r *run) error {
	touch, _, err := r.req.Repo.ChangedSince(e.Base)
	if err != nil {
		return err
	}
	r.rec.Plan.TouchSet, r.rec.Plan.Measured = nonNil(touch), true
	r.dirtyBefore = e.Base == "" && len(touch) > 0
	// With --base, the diff is the change under review (CI): it must stay
	// inside the scope, as an edit's would.
	if e.Base != "" && !r.scope.Empty() {
		return r.barrierOnPlan()
	}
	return nil
}

// checkScopeMatches flags scope patterns that match nothing in the tree
// nor in the plan (a typo such as midleware): the edit may still create
// what they name, but the user is told, with the nearest name there is.
func (r *run) checkScopeMatches() {
	root, err := r.req.Repo.FS()
	if err != nil {
		return
	}
	for _, p := range r.scope.Patterns() {
		base := scope.Base(p)
		if base == "" || base == "**" {
			continue
		}
		if _, err := root.Lstat(base); err == nil {
			continue
		}
		planned := false
		for _, t := range r.rec.Plan.TouchSet {
			if t == base || strings.HasPrefix(t, base+"/") {
				planned = true
			}
		}
		if planned {
			continue
		}
		r.rec.Plan.ScopeUnmatched = append(r.rec.Plan.ScopeUnmatched, p)
		msg := fmt.Sprintf("scope %q matches nothing in the tree (there is no %s); the edit may still create it", p, base)
		if near := nearestName(root, base); near != "" {
			msg += fmt.Sprintf("; did you mean %q?", near)
		}
		r.obs.Warn(msg)
	}
}

// nearestName returns the existing path closest to a missing one: its
// deepest existing parent's entry nearest by name.
func nearestName(root *fsroot.Root, missing string) string {
	parent, name := path.Split(missing)
	parent = strings.TrimSuffix(parent, "/")
	f, err := root.OpenDir(parent)
	if err != nil {
		return ""
	}
	names, _ := f.Readdirnames(-1)
	f.Close()
	near := config.Suggest(name, names)
	if near == "" {
		return ""
	}
	return path.Join(parent, near)
}

// barrierOnPlan checks a touch set known before anything is written.
func (r *run) barrierOnPlan() error {
	if outside := r.scope.Outside(r.rec.Plan.TouchSet); len(outside) > 0 {
		r.rec.Barrier = &Barrier{Outside: outside, CaughtBy: "plan"}
		vo, _ := r.req.Edit.(VerifyOnly)
		return &outOfScopeError{Outside: outside, Base: vo.Base}
	}
	return nil
}

func planSteps(p *config.Resolved, skip map[string]bool, touch []string) []PlanStep {
	out := []PlanStep{}
	for _, s := range p.Steps {
		ps := PlanStep{Name: s.Name, Command: s.Command()}
		if skip[s.Name] {
			ps.Skip = "skip"
		} else if !verify.WhenMatches(s, touch) {
			ps.Skip = "when"
		}
		out = append(out, ps)
	}
	return out
}

// advise is step 3: what the learner says of the run (advisories,
// preflight, the task's attempts: an escalated task stops a mutating run
// here).
func (r *run) advise(ctx context.Context) error {
	var err error
	if l := r.req.Learner; l != nil {
		r.info = &RunInfo{Repo: r.req.Repo, Config: r.req.Config, Profile: r.prof, Record: r.rec, Env: r.req.Env,
			Edit: r.req.Edit.Source(), DryRun: r.req.DryRun, Strict: r.strict, Started: r.start, Warn: r.obs.Warn}
		r.learning, err = l.Advise(ctx, r.info)
	}
	r.obs.Advised(r.rec)
	return err
}

// brief has the learner, under the lock and before the snapshot (what it
// writes is not the edit's), tell an edit command what the memory says;
// it returns what to call once the run is done with it.
func (r *run) brief(ctx context.Context) func() {
	if _, ok := r.req.Edit.(CommandEdit); !ok || r.learning == nil {
		return func() {}
	}
	told, done, err := r.learning.Brief(ctx)
	if err != nil {
		r.obs.Warn("cannot tell the edit what the memory says: " + err.Error())
	}
	r.told = told
	if done == nil {
		return func() {}
	}
	return done
}

// lock is step 6: exclusive for a mutating run, shared for verify-only.
func (r *run) lock(ctx context.Context) (func(), error) {
	return LockRepo(ctx, r.req.Repo, mutating(r.req.Edit), r.req.Wait, txn.Holder{RunID: r.rec.RunID,
		Started: r.start, Command: "orket run " + r.rec.Request.Instruction})
}

// verifyOnly runs the profile on the tree as it is (steps 10 and 11 of a
// run that writes nothing).
func (r *run) verifyOnly(ctx context.Context) error {
	r.obs.Phase(PhaseVerify, r.rec)
	r.content = r.contentKey(r.treeOfCommit(r.baseCommit(r.rec.Request.Base)), r.rec.Plan.TouchSet)
	t := r.req.Env.Now()
	r.rec.Steps = r.runSteps(ctx)
	r.phaseTime("verify", t)
	if ctx.Err() != nil {
		return interrupted(ctx, "during verification")
	}
	if failed := failedSteps(r.rec.Steps); len(failed) > 0 {
		return &verifyFailedError{Failed: failed, Disposition: NotWritten}
	}
	return nil
}

// runSteps runs the verify profile with the run's environment.
func (r *run) runSteps(ctx context.Context) []*verify.StepResult {
	repo := r.req.Repo
	touchFile := path.Join(repo.GitDir, "orket", "touch-"+r.rec.RunID)
	if err := writeRunFile(touchFile, joinLines(r.rec.Plan.TouchSet)); err != nil {
		r.obs.Warn("cannot write the ORKET_TOUCH_SET file: " + err.Error())
	}
	defer os.Remove(touchFile)
	o := r.verifyOptions()
	o.Env = append(o.Env, "ORKET_TOUCH_SET="+touchFile)
	o.Output, o.Start, o.Done = r.obs.StepOutput, r.obs.StepStarted, r.obs.StepDone
	steps := verify.Run(ctx, r.prof, o)
	if steps == nil {
		steps = []*verify.StepResult{}
	}
	return steps
}

// verifyOptions are how the run's steps run: at the root, in the run's
// environment and process group, redacted, with the output caps.
func (r *run) verifyOptions() verify.Options {
	return verify.Options{Root: r.req.Repo.Root, Env: append([]string{}, r.env...), TouchSet: r.rec.Plan.TouchSet,
		Skip: r.skip, Tail: r.req.Config.Lessons.Tail, Group: r.group, Redactor: r.red}
}

// finish is the last step of a run that took the lock: what the learner
// learns of it, the run record, retention. It returns the run's error,
// or the one the learner gives instead (an escalation); what goes wrong
// here is a warning.
func (r *run) finish(ctx context.Context, runErr error) error {
	rec := r.rec
	r.obs.Phase(PhaseRecord, rec)
	redactRecord(rec, r.red)
	rec.setOutcome(runErr)
	if r.learning != nil {
		r.info.Content, r.info.Notes, r.info.DirtyBefore = r.content, r.verdictNotes, r.dirtyBefore
		runErr = r.learning.Learn(ctx, runErr)
	}
	rec.setOutcome(runErr)
	rec.Timings["total_ms"] = r.req.Env.Now().Sub(r.start).Milliseconds()
	rec.RecordFile = runsDir + "/" + rec.RunID + ".json"
	root, err := r.req.Repo.FS()
	if err == nil {
		err = writeRecord(root, rec)
	}
	if err != nil {
		r.obs.Warn("could not write the run record: " + err.Error())
		rec.RecordFile = ""
	}
	if root != nil {
		if err := pruneRuns(r.req.Repo, root, runsDir, r.req.Config.Lessons.Retention, r.req.Env.Now()); err != nil {
			r.obs.Warn("could not prune old run records: " + err.Error())
		}
	}
	r.obs.Recorded(rec)
	return runErr
}

func (r *run) phaseTime(name string, since time.Time) {
	r.rec.Timings[name+"_ms"] = r.req.Env.Now().Sub(since).Milliseconds()
}

func newRunID(now time.Time) string {
	b := make([]byte, 3)
	rand.Read(b)
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b)
}

func nonNil(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

func joinLines(l []string) string {
	if len(l) == 0 {
		return ""
	}
	return strings.Join(l, "\n") + "\n"
}

func itoa(i int) string { return strconv.Itoa(i) }

// writeRunFile writes one of a run's files in the git directory (outside
// the tree, so never part of the transaction).
func writeRunFile(p, content string) error {
	if err := os.MkdirAll(path.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(content), 0o644)
}
