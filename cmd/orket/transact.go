package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/orket/orket/config"
	"github.com/orket/orket/lessons"
	"github.com/orket/orket/txn"
	"github.com/orket/orket/verify"
)

// transact runs steps 7 to 12 of a mutating run: snapshot, edit, barrier,
// verify, keep or revert.
func transact(ctx context.Context, o *options, r *txn.Repo, cfg *config.Config, prof *config.Resolved, skip map[string]bool,
	scope txn.Scope, ro *runOptions, patch *txn.Patch, worktreeBase map[string]*txn.File, res *runResult, env []string, out *runPrinter) (err error) {
	j := &txn.Journal{RunID: res.RunID, Ref: txn.SnapshotRefPrefix + res.RunID, Phase: txn.PhaseSnapshot, PID: os.Getpid(),
		Started: res.start, Command: "orket run " + res.Request.Instruction}
	if err := r.WriteJournal(j); err != nil {
		return &Error{Code: EInternal, Err: err, Msg: "write the transaction journal: " + err.Error(), Hint: "check that .git is writable"}
	}
	phase := func(p string) error {
		j.Phase = p
		if err := r.WriteJournal(j); err != nil {
			return &Error{Code: EInternal, Err: err, Msg: "write the transaction journal: " + err.Error(), Hint: "check that .git is writable"}
		}
		return nil
	}
	t := time.Now()
	snap, err := r.Snapshot(res.RunID)
	if err != nil {
		// Nothing was written yet: forget the attempt.
		cleanup := errors.Join(r.DropSnapshot(j.Ref), r.ClearJournal())
		return errors.Join(repoError(err), cleanup)
	}
	res.Snapshot = snap.Ref
	res.dirtyBefore = snap.Dirty()
	defer snap.Close()
	res.phase("snapshot", t)

	// revert puts the tree back, proves it, and ends the transaction;
	// a revert that cannot be proven keeps the journal and the snapshot
	// so that orket recover (or plain git) can finish the job.
	reverted := false
	revert := func() error {
		if reverted {
			return nil
		}
		reverted = true
		if err := phase(txn.PhaseRevert); err != nil {
			return err
		}
		t := time.Now()
		rv, err := r.Revert(snap)
		res.phase("revert", t)
		res.Revert = &revertView{Reverted: true, Paths: []string{}}
		if rv != nil {
			res.Revert.Verified = rv.Verified
			if rv.Paths != nil {
				res.Revert.Paths = rv.Paths
			}
		}
		if err != nil {
			return &Error{Code: EInternal, Err: err, Msg: "the revert failed: " + err.Error(),
				Hint:   "the snapshot is kept as " + snap.Ref + "; run orket recover to retry, or restore by hand as its commit message says",
				Fields: map[string]any{"snapshot_ref": snap.Ref}}
		}
		return endTxn(r, snap.Ref)
	}
	// Whatever happens from here (an early return, a panic), the tree is
	// put back unless the change was explicitly kept.
	kept := false
	defer func() {
		if p := recover(); p != nil {
			if !kept {
				err = errors.Join(&Error{Code: EInternal, Msg: fmt.Sprint("panic: ", p), Hint: "this is a bug in orket; please report it"}, revert())
			}
			return
		}
		if !kept && !reverted {
			if rerr := revert(); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
	}()

	// 8. Apply the edit.
	if err := phase(txn.PhaseEdit); err != nil {
		return err
	}
	t = time.Now()
	draftFailed := false
	switch res.Request.EditSource {
	case "patch":
		if err := r.ApplyPatch(patch); err != nil {
			return patchError(err)
		}
	case "command":
		advisories, cleanup := advisoriesFile(o, r, res)
		defer cleanup()
		editEnv := append(append([]string{}, env...), "ORKET_ADVISORIES="+advisories)
		out.editStart(res)
		// The edit runs as a step does: own process group, bounded tail.
		res.Edit = verify.RunStep(ctx, config.Step{Name: "edit", Argv: res.Request.Argv, Required: true},
			verify.Options{Root: r.Root, Env: editEnv, Tail: cfg.Lessons.Tail}, out.liveStep("edit"))
		out.editDone(res.Edit)
		if ctx.Err() != nil {
			res.phase("edit", t)
			return interrupted(ctx, "during the edit; the tree was reverted")
		}
		draftFailed = res.Edit.Status == verify.Failed
	}
	res.phase("edit", t)

	// 9. Barrier on the measured touch set.
	t = time.Now()
	ch, err := r.Measure(snap)
	if err != nil {
		return repoError(err)
	}
	res.phase("measure", t)
	if res.Request.EditSource != "worktree" {
		res.Plan.TouchSet, res.Plan.TouchCount, res.Plan.Measured = ch.Paths, len(ch.Paths), true
		if res.Plan.TouchSet == nil {
			res.Plan.TouchSet = []string{}
		}
	}
	res.GitChanges = ch.Git
	outside := scope.Outside(res.Plan.TouchSet)
	if len(outside) > 0 || len(ch.Guarded) > 0 {
		res.Barrier = &barrierView{Outside: outside, Guarded: ch.Guarded}
		if err := revert(); err != nil {
			return err
		}
		return outOfScope(outside, ch.Guarded, true)
	}
	if draftFailed {
		return failAndRevert(r, snap, res, revert, worktreeBase, &Error{Code: EDraftFailure,
			Msg:  fmt.Sprintf("the edit command failed (%s); its changes were reverted", exitText(res.Edit)),
			Hint: "see the edit's output above (or edit.output_tail in --json)"})
	}
	if len(res.Plan.TouchSet) == 0 {
		if err := revert(); err != nil {
			return err
		}
		return errorf(ETouchsetEmpty, "check that the edit command edits files in this repository", "the edit changed no file")
	}
	out.touched(res)

	// 10. Verify.
	if err := phase(txn.PhaseVerify); err != nil {
		return err
	}
	t = time.Now()
	res.Steps = runSteps(ctx, o, r, cfg, prof, skip, res, env, out)
	res.phase("verify", t)
	if ctx.Err() != nil {
		return interrupted(ctx, "during verification; the tree was reverted")
	}
	failed := failedSteps(res.Steps)

	// 11. Keep or revert.
	if len(failed) == 0 {
		if ro.commitMsg != "" {
			if err := phase(txn.PhaseCommit); err != nil {
				return err
			}
			id, err := r.CommitPaths(res.Plan.TouchSet, ro.commitMsg)
			if err != nil {
				return repoError(fmt.Errorf("commit: %w", err))
			}
			res.Commit = id.String()
		}
		kept = true
		return endTxn(r, snap.Ref)
	}
	verr := &Error{Code: EVerifyFailedReverted, Msg: failureText(failed) + "; the change was reverted",
		Hint: "fix what the failing step reports and run again"}
	if ro.keepOnFail {
		kept = true
		savePatch(r, snap, res, worktreeBase)
		if err := endTxn(r, snap.Ref); err != nil {
			return err
		}
		return &Error{Code: EVerifyFailedKept, Msg: failureText(failed) + "; the change was kept (--keep-on-fail)",
			Hint: "fix the tree, or restore it with git"}
	}
	return failAndRevert(r, snap, res, revert, worktreeBase, verr)
}

// failAndRevert keeps the failed change as a patch, reverts, and for
// --worktree also takes the candidate out of the tree.
func failAndRevert(r *txn.Repo, snap *txn.Snapshot, res *runResult, revert func() error, worktreeBase map[string]*txn.File, fail *Error) error {
	savePatch(r, snap, res, worktreeBase)
	if err := revert(); err != nil {
		return err
	}
	if res.Request.EditSource == "worktree" {
		if err := r.ResetPaths(res.Plan.TouchSet, worktreeBase); err != nil {
			return &Error{Code: EInternal, Err: err, Msg: "take the candidate out: " + err.Error(),
				Hint: "your changes are in " + res.PatchFile + "; restore them with git apply"}
		}
		fail.Code = EVerifyFailedReverted
		fail.Msg = strings.Replace(fail.Msg, "the change was reverted", "the uncommitted changes were taken out", 1)
	}
	if res.PatchFile != "" {
		fail.Hint += "; the failed change is kept in " + res.PatchFile + " (git apply " + res.PatchFile + " brings it back)"
	}
	return fail
}

// savePatch formats the change as a patch while it is still on disk; the
// file is written with the run record, after the revert.
func savePatch(r *txn.Repo, snap *txn.Snapshot, res *runResult, worktreeBase map[string]*txn.File) {
	before := snap.Pre.Files
	if worktreeBase != nil {
		before = worktreeBase
	}
	text, err := r.FormatPatch(res.Plan.TouchSet, before)
	if err != nil || text == "" {
		return
	}
	res.PatchFile = filepath.ToSlash(filepath.Join(txn.OrketDir, "runs", res.RunID, "change.patch"))
	res.patchText = text
}

func endTxn(r *txn.Repo, ref string) error {
	if err := r.DropSnapshot(ref); err != nil {
		return &Error{Code: EInternal, Err: err, Msg: "drop snapshot " + ref + ": " + err.Error(), Hint: "git update-ref -d " + ref}
	}
	if err := r.ClearJournal(); err != nil {
		return &Error{Code: EInternal, Err: err, Msg: "clear the transaction journal: " + err.Error(), Hint: "orket recover --discard"}
	}
	return nil
}

func failedSteps(steps []*verify.StepResult) []*verify.StepResult {
	var out []*verify.StepResult
	for _, s := range steps {
		if s.FailedRequired() {
			out = append(out, s)
		}
	}
	return out
}

func failureText(failed []*verify.StepResult) string {
	var parts []string
	for _, s := range failed {
		parts = append(parts, fmt.Sprintf("step %s failed (%s)", s.Name, exitText(s)))
	}
	return strings.Join(parts, ", ")
}

func exitText(s *verify.StepResult) string {
	switch {
	case s.TimedOut:
		return fmt.Sprintf("timed out after %s", time.Duration(s.DurationMS)*time.Millisecond)
	case s.Signal != "":
		return "killed by " + s.Signal
	}
	return fmt.Sprintf("exit %d", s.ExitCode)
}

// runSteps runs the verify profile with the run's environment.
func runSteps(ctx context.Context, o *options, r *txn.Repo, cfg *config.Config, prof *config.Resolved, skip map[string]bool,
	res *runResult, env []string, out *runPrinter) []*verify.StepResult {
	touchFile := filepath.Join(r.GitDir, "orket", "touch-"+res.RunID)
	if err := writeRunFile(touchFile, joinLines(res.Plan.TouchSet)); err != nil {
		fmt.Fprintf(o.stderr, "orket: warning: cannot write the ORKET_TOUCH_SET file: %v\n", err)
	}
	defer os.Remove(touchFile)
	steps := verify.Run(ctx, prof, verify.Options{
		Root: r.Root, Env: append(append([]string{}, env...), "ORKET_TOUCH_SET="+touchFile),
		TouchSet: res.Plan.TouchSet, Skip: skip, Tail: cfg.Lessons.Tail,
		Output: out.liveStep, Start: out.stepStart, Done: out.stepDone,
	})
	if steps == nil {
		steps = []*verify.StepResult{}
	}
	return steps
}

// verifyOnly runs the profile on the tree as it is.
func verifyOnly(ctx context.Context, o *options, r *txn.Repo, cfg *config.Config, prof *config.Resolved, skip map[string]bool,
	res *runResult, env []string, out *runPrinter) error {
	t := time.Now()
	res.Steps = runSteps(ctx, o, r, cfg, prof, skip, res, env, out)
	res.phase("verify", t)
	if ctx.Err() != nil {
		return interrupted(ctx, "during verification")
	}
	if failed := failedSteps(res.Steps); len(failed) > 0 {
		return &Error{Code: EVerifyFailed, Msg: failureText(failed), Hint: "fix what the failing step reports and run again"}
	}
	return nil
}

// advisoriesFile writes the markdown an edit command finds through
// ORKET_ADVISORIES. It lives in the git directory, outside the tree.
func advisoriesFile(o *options, r *txn.Repo, res *runResult) (string, func()) {
	p := filepath.Join(r.GitDir, "orket", "advisories-"+res.RunID+".md")
	var b strings.Builder
	fmt.Fprintf(&b, "# orket advisories for run %s\n\nScope: %s. Verify profile: %s.\n\n", res.RunID, strings.Join(res.Request.Scope, ", "), res.Request.Profile)
	if len(res.Advisories) == 0 {
		b.WriteString("No past failures are relevant to this run.\n")
	}
	for i, a := range res.Advisories {
		fmt.Fprintf(&b, "## %d. %s\n\n", i+1, a.Title)
		fmt.Fprintf(&b, "Seen %d time(s), last %s; the step `%s` failed", a.Count, a.LastSeen.Format("2006-01-02"), a.FailedCommand)
		if len(a.Tags) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(a.Tags, ", "))
		}
		b.WriteString(".\n")
		if a.FirstError != "" {
			fmt.Fprintf(&b, "First error: `%s`\n", a.FirstError)
		}
		for _, s := range a.SuggestedActions {
			fmt.Fprintf(&b, "- %s\n", s)
		}
		b.WriteString("\n")
	}
	for _, c := range res.Preflight {
		state := "ok"
		if !c.OK {
			state = "FAILED"
		}
		fmt.Fprintf(&b, "- preflight %s: %s (%s)\n", state, c.Detail, c.Source)
	}
	if err := writeRunFile(p, b.String()); err != nil {
		fmt.Fprintf(o.stderr, "orket: warning: cannot write the ORKET_ADVISORIES file: %v\n", err)
	}
	return p, func() { os.Remove(p) }
}

// finishRecord writes the run record (and the failed change's patch) under
// .orket/runs, after any revert, and returns the run's error unchanged.
func finishRecord(o *options, r *txn.Repo, cfg *config.Config, res *runResult, runErr error, out *runPrinter) error {
	res.setOutcome(runErr)
	if res.RunID == "" {
		return runErr
	}
	red := lessons.NewRedactor(os.Environ())
	redactRecord(res, red)
	if err := recordLessons(o, r, cfg, res, red); err != nil {
		fmt.Fprintf(o.stderr, "orket: warning: could not record the lesson: %v\n", err)
	}
	printLessons(out, res)
	res.Timings["total_ms"] = time.Since(res.start).Milliseconds()
	dir := filepath.Join(r.Root, txn.OrketDir, "runs")
	res.RecordFile = filepath.ToSlash(filepath.Join(txn.OrketDir, "runs", res.RunID+".json"))
	err := ensureOrketDir(r)
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err == nil && res.patchText != "" {
		pdir := filepath.Join(dir, res.RunID)
		if err = os.MkdirAll(pdir, 0o755); err == nil {
			err = txn.WriteFileAtomic(filepath.Join(pdir, "change.patch"), []byte(res.patchText), 0o644)
		}
	}
	if err == nil {
		var b []byte
		if b, err = json.MarshalIndent(res, "", "  "); err == nil {
			err = txn.WriteFileAtomic(filepath.Join(r.Root, filepath.FromSlash(res.RecordFile)), append(b, '\n'), 0o644)
		}
	}
	if err != nil {
		fmt.Fprintf(o.stderr, "orket: warning: could not write the run record: %v\n", err)
		res.RecordFile = ""
	}
	pruneRuns(dir, cfg.Lessons.Retention)
	githubReport(o, r, res)
	if runErr == nil && !o.quiet {
		fmt.Fprintln(o.stderr, okText(res))
	}
	return runErr
}

func okText(res *runResult) string {
	switch {
	case res.Request.EditSource == "none":
		return fmt.Sprintf("orket: OK: profile %s passed", res.Request.Profile)
	case res.Commit != "":
		return fmt.Sprintf("orket: OK: profile %s passed; committed %d file(s) as %.12s", res.Request.Profile, res.Plan.TouchCount, res.Commit)
	}
	return fmt.Sprintf("orket: OK: profile %s passed; the change to %d file(s) is kept", res.Request.Profile, res.Plan.TouchCount)
}

// ensureOrketDir creates .orket with its .gitignore, so orket's own state
// never shows up in git status even without orket init.
func ensureOrketDir(r *txn.Repo) error {
	ignore := filepath.Join(r.Root, txn.OrketDir, ".gitignore")
	if _, err := os.Lstat(ignore); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(ignore), 0o755); err != nil {
		return err
	}
	// Unlike the one orket init writes to be committed, this one hides
	// itself too: orket's state never shows up in git status unasked.
	return txn.WriteFileAtomic(ignore, []byte("# orket's local state (run records, lessons); see orket init.\n*\n"), 0o644)
}

// pruneRuns applies retention to run records: the newest max_entries,
// none older than max_age.
func pruneRuns(dir string, keep config.Retention) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	var runs []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			runs = append(runs, strings.TrimSuffix(e.Name(), ".json"))
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(runs))) // run ids sort by time
	cutoff := time.Now().Add(-keep.MaxAge).UTC().Format("20060102T150405Z")
	for i, id := range runs {
		if i < keep.MaxEntries && id >= cutoff {
			continue
		}
		os.Remove(filepath.Join(dir, id+".json"))
		os.RemoveAll(filepath.Join(dir, id))
	}
}

func joinLines(l []string) string {
	if len(l) == 0 {
		return ""
	}
	return strings.Join(l, "\n") + "\n"
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// writeRunFile writes one of a run's files in the git directory (outside
// the tree, so never part of the transaction).
func writeRunFile(p, content string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(content), 0o644)
}
