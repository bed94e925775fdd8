package learn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/orket/orket"
	"github.com/orket/orket/config"
	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/internal/testhook"
	"github.com/orket/orket/lessons"
	"github.com/orket/orket/store"
	"github.com/orket/orket/txn"
	"github.com/orket/orket/verdict"
	"github.com/orket/orket/verify"
)

// EscalationsDir is where escalation reports are written,
// repository-relative.
const EscalationsDir = store.Dir + "/" + store.EscalationsDir

// MemoryDir is the directory of the evaluation log and the task events:
// the main work tree's .orket/memory, shared by its linked work trees as
// the lesson log is.
func MemoryDir(r *txn.Repo) string {
	return filepath.Dir(store.Path(OrketDir(r), store.EvaluationsFile))
}

// Verdicts opens the repository's evaluation log and task events.
func Verdicts(r *txn.Repo) *verdict.Store { return verdict.Open(MemoryDir(r)) }

// escalateAfter is verdict.escalate_after (config.Defaults holds its
// default); 0 never escalates.
func escalateAfter(cfg *config.Config) int { return cfg.Verdict.EscalateAfter }

// checkAttempts reads where the run's task stands (step 3): the attempt
// block the edit is told, and an escalation, which stops a mutating run
// before anything is written. A verify-only run of an escalated task goes
// on: it writes nothing and counts for nothing.
func (r *run) checkAttempts() error {
	req := r.Record.Request
	st, err := Verdicts(r.Repo).State(req.Task, req.Agent)
	if err != nil {
		r.Warn("cannot read the evaluation log: " + err.Error())
		return nil
	}
	if e := st.Escalation; e != nil {
		esc := escalationOf(e)
		esc.Elsewhere = reportElsewhere(r.Repo, e.Report)
		r.Record.Escalation = esc
		if r.Mutating() {
			err := &EscalatedError{Task: req.Task, Agent: req.Agent, Report: esc.Report, Elsewhere: esc.Elsewhere, Refused: true}
			switch e.Trigger {
			case verdict.TriggerRedBaseline:
				err.Red = []string{e.FailedStep}
			case verdict.TriggerSandboxWrite:
				err.SandboxWrite = true
			}
			return err
		}
		r.Warn(fmt.Sprintf("task %q is escalated (%s); this verify-only run goes on and counts for nothing", req.Task,
			reportNote(req.Task, esc.Report, esc.Elsewhere)))
		return nil
	}
	if !r.Mutating() {
		return nil
	}
	a := &orket.Attempt{Task: req.Task, Agent: req.Agent, Number: len(st.Attempts) + 1, Maximum: escalateAfter(r.Config),
		Previous: []orket.PreviousAttempt{}}
	for _, e := range st.Attempts {
		a.Previous = append(a.Previous, orket.PreviousAttempt{RunID: e.RunID, Verdict: e.Verdict, Score: e.Score,
			FailedStep: e.FailedStep, Tags: nonNil(e.Tags), Summary: e.Summary})
	}
	r.Record.Attempt = a
	return nil
}

func escalationOf(e *verdict.TaskEvent) *orket.Escalation {
	trigger := verdict.TriggerRejections
	switch {
	case e.Trigger != "":
		trigger = e.Trigger
	case e.RunID == "":
		trigger = verdict.TriggerHuman
	}
	md := e.Report
	return &orket.Escalation{Report: md, ReportJSON: strings.TrimSuffix(md, ".md") + ".json", Trigger: trigger}
}

// judgedCodes are the outcomes of runs that verified, or whose edit
// failed or escaped: they get a verdict.
var judgedCodes = map[orket.Code]bool{orket.OK: true, orket.ECommitRefused: true, orket.EVerifyFailedReverted: true, orket.EVerifyFailedKept: true,
	orket.EVerifyFailed: true, orket.EDraftFailure: true, orket.EWriteOutOfScope: true, orket.EWriteProtected: true}

// judge gives the run its verdict and score, appends its evaluation, and
// escalates the task on its agent's escalate_after-th consecutive counted
// rejection: the run's outcome becomes E_ESCALATED (it was reverted, its
// lesson recorded all the same). The evaluation is one line, appended
// whole: a crash leaves the run counted once or not at all.
func (r *run) judge(ctx context.Context, runErr error) error {
	rec := r.Record
	if !judgedCodes[rec.Code] || rec.RunID == "" {
		return runErr
	}
	in, excused := r.verdictInput()
	j := verdict.Judge(in)
	ev := r.evaluation(j)
	store := Verdicts(r.Repo)
	var esc *EscalatedError
	ev.Red, ev.Excused = j.Red, excused
	if a := rec.Attempt; a != nil {
		n := 0
		if j.Red || ev.Excused != "" || j.Counted {
			// Read under the lock: the count the run started with may
			// have changed (a person's reset) while it ran.
			st, err := store.State(a.Task, a.Agent)
			if err != nil {
				r.Warn("cannot read the evaluation log: " + err.Error())
				st = &verdict.TaskState{}
			}
			open := a.Maximum > 0 && st.Escalation == nil
			switch {
			case j.Red:
				if open && len(st.Red)+1 >= verdict.RedAfter {
					esc = r.escalateRed(ev, append(st.Red, ev), runErr)
				}
			case ev.Excused != "":
				if open && len(st.Excused)+1 >= verdict.ExcusedAfter {
					esc = r.escalateSandbox(ev, append(st.Excused, ev), runErr)
				}
			case j.Counted:
				n = len(st.Attempts) + 1
				if open && n >= a.Maximum {
					esc = r.escalate(ev, append(st.Attempts, ev), runErr)
				}
			}
		}
		a.Rejections = &n
	}
	testhook.Point("judge:before-evaluation")
	if err := store.Record(ev); err != nil {
		r.Warn("could not append to the evaluation log: " + err.Error())
	}
	testhook.Point("judge:after-evaluation")
	// Flaky first: a lesson marked flaky weighs less, and folds apart,
	// in the proposals this run's learning makes.
	marked, resolved, err := r.markFlaky(store)
	if err != nil {
		r.Warn("could not mark flaky lessons: " + err.Error())
	}
	rec.FlakyLessons, rec.ResolvedLessons = marked, resolved
	r.learnFromRun(ctx, ev)
	if err := pruneEvaluations(store, r.Config.Lessons.Retention, r.Env.Now()); err != nil {
		r.Warn("could not prune the evaluation log: " + err.Error())
	}
	rec.Verdict, rec.Score, rec.VerdictNotes = ev.Verdict, &ev.Score, j.Notes
	if esc == nil {
		return runErr
	}
	r.notify(ctx, rec.Escalation)
	return esc
}

// verdictInput is what the verdict of the run is judged from, and why
// the run is not counted though the agent cannot mend it (a trigger of
// escalation), if it is not.
func (r *run) verdictInput() (in verdict.Input, excused string) {
	rec := r.Record
	in = verdict.Input{Steps: rec.Steps, Weights: map[string]int{}, Failed: rec.Code != orket.OK && rec.Code != orket.ECommitRefused,
		Edited: r.Mutating(), Approve: r.Config.Verdict.Approve, Notes: r.Notes}
	for _, s := range r.Profile.Steps {
		in.Weights[s.Name] = s.ScoreWeight()
	}
	switch rec.Code {
	case orket.EDraftFailure:
		in.Reason = "the edit command failed (" + rec.Edit.ExitText() + ")"
	case orket.EWriteOutOfScope:
		in.Reason = "the edit wrote outside its scope"
		if b := rec.Barrier; b != nil && len(b.Ignored) > 0 && len(b.Outside) == 0 && len(b.Guarded) == 0 {
			// Only git-ignored build directories the sandbox did not
			// open: orket.yaml's sandbox.write, not the agent.
			in.Reason = "the kernel sandbox refused writes to git-ignored paths outside the scope (" + strings.Join(b.Ignored, ", ") + ")"
			in.Excused = "a matter of sandbox.write in orket.yaml, not of the edit"
			excused = verdict.TriggerSandboxWrite
		}
	case orket.EWriteProtected:
		in.Reason = "the edit modified protected paths"
	}
	return in, excused
}

// pruneEvaluations applies lessons.retention to the evaluation log (per
// agent) once it may hold more lines than that (an evaluation is some
// 400 bytes) and has grown since it was last pruned (dueForPrune).
func pruneEvaluations(s *verdict.Store, keep config.Retention, now time.Time) error {
	return store.PruneIfDue(s.Evaluations.Path, 256, keep.MaxEntriesPerAgent, keep.MaxAge, now, func() error {
		_, err := s.Prune(keep.MaxEntriesPerAgent, keep.MaxAge, now)
		return err
	})
}

// evaluation is the run's line of the evaluation log.
func (r *run) evaluation(j verdict.Judgement) *verdict.Evaluation {
	rec := r.Record
	ev := &verdict.Evaluation{Time: r.Env.Now().UTC(), RunID: rec.RunID, Task: rec.Request.Task, Agent: rec.Request.Agent,
		Profile: rec.Request.Profile, EditSource: rec.Request.EditSource, Verdict: j.Verdict, Score: j.Score, Notes: j.Notes,
		Counted: j.Counted, Code: string(rec.Code), PatchFile: rec.PatchFile, Content: r.Content, DurationMS: r.Env.Now().Sub(r.Started).Milliseconds()}
	if g := rec.Guardrails; g != nil {
		ev.Guardrails = g.Version
	}
	var failed *verify.StepResult
	if rec.Code == orket.EDraftFailure {
		failed = rec.Edit
	} else if f := rec.FailedSteps(); len(f) > 0 {
		failed = f[0]
	}
	if failed != nil {
		ev.FailedStep, ev.FailedCommand = failed.Name, failed.Command
	}
	cause := ""
	for _, l := range rec.Lessons {
		if failed != nil && l.Step == failed.Name {
			ev.Tags = l.Tags
			ev.FirstError = l.FirstError
			cause = l.Title
			for _, nl := range r.newLessons {
				if nl.ID == l.ID {
					ev.Fold = lessons.FoldCause(nl)
				}
			}
			break
		}
	}
	for _, c := range rec.Preflight {
		if !c.OK {
			ev.Checks = append(ev.Checks, c.Detail)
		}
	}
	line := cause // the lesson's title: its cause line
	if line == "" {
		line = ev.FirstError
	}
	if line == "" && failed != nil {
		line = lastLine(failed.OutputTail)
	}
	ev.Summary = summary(rec, failed, line)
	return ev
}

// lastLine is the last line of output with something on it, as a
// terminal shows it: what a failure printed last, when no rule found its
// first error.
func lastLine(out string) string {
	lines := strings.Split(lessons.StripANSI(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return ""
}

// summary is one line on what failed: the step and how, and its first
// error; or the run's own message.
func summary(rec *orket.Record, failed *verify.StepResult, firstError string) string {
	var s string
	switch {
	case rec.Code == orket.EWriteOutOfScope && rec.Barrier != nil && len(rec.Barrier.Outside)+len(rec.Barrier.Guarded) == 0 && len(rec.Barrier.Ignored) > 0:
		s = "the sandbox refused git-ignored paths (sandbox.write): " + strings.Join(rec.Barrier.Ignored, ", ")
	case rec.Code == orket.EWriteOutOfScope && rec.Barrier != nil:
		s = "wrote outside the scope: " + strings.Join(append(append([]string{}, rec.Barrier.Outside...), rec.Barrier.Guarded...), ", ")
	case rec.Code == orket.EWriteProtected && rec.Barrier != nil:
		s = "modified protected paths: " + strings.Join(rec.Barrier.Protected, ", ")
	case failed != nil && failed.Name == "edit" && rec.Code == orket.EDraftFailure:
		s = "the edit command failed (" + failed.ExitText() + ")"
	case failed != nil:
		s = "step " + failed.Name + " failed (" + failed.ExitText() + ")"
	case rec.Code == orket.OK:
		return "passed"
	default:
		s = rec.Error
	}
	if firstError != "" {
		s += ": " + firstError
	}
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return strings.ReplaceAll(s, "\n", " ")
}

// escalate writes the escalation report of the run that escalates its
// task (before its evaluation line, so that the line never names a report
// that is not there) and makes the evaluation an ESCALATE.
func (r *run) escalate(ev *verdict.Evaluation, attempts []*verdict.Evaluation, runErr error) *EscalatedError {
	a := r.Record.Attempt
	ev.Verdict = verdict.Escalate
	rep := verdict.NewReport("esc-"+r.Record.RunID, r.Env.Now(), a.Task, a.Agent, attempts, "")
	r.currentOutputs(rep)
	addOutputs(r.Repo, rep)
	esc := &orket.Escalation{Trigger: rep.Trigger.Type}
	md, js, err := WriteReport(r.Repo, rep)
	if err != nil {
		r.Warn("could not write the escalation report: " + err.Error())
	}
	esc.Report, esc.ReportJSON = md, js
	ev.Report = md
	r.Record.Escalation = esc
	return &EscalatedError{Task: a.Task, Agent: a.Agent, Report: md, Attempts: len(attempts), Err: runErr}
}

// escalateSandbox escalates a task whose edits' writes to git-ignored
// paths the kernel sandbox refused, run after run: orket.yaml's
// sandbox.write does not open them, and only a person changes it. The
// run's outcome is E_ESCALATED; its report names the paths.
func (r *run) escalateSandbox(ev *verdict.Evaluation, runs []*verdict.Evaluation, runErr error) *EscalatedError {
	a := r.Record.Attempt
	var paths []string
	if b := r.Record.Barrier; b != nil {
		paths = b.Ignored
	}
	md := r.escalateFor(ev, runs, verdict.Trigger{Type: verdict.TriggerSandboxWrite, Description: fmt.Sprintf(
		"the kernel sandbox refused the edit's writes to git-ignored paths outside the scope (%s) in %d runs in a row: orket.yaml's sandbox.write does not open them, and agent %s cannot",
		strings.Join(paths, ", "), len(runs), a.Agent)},
		"add the directory to sandbox.write in orket.yaml (the run's output gives the line), or tell the agent to write elsewhere", "")
	return &EscalatedError{Task: a.Task, Agent: a.Agent, Report: md, Attempts: len(runs), Sandbox: paths, Err: runErr}
}

// escalateRed escalates a task whose runs fail without their change too,
// run after run: main or the environment is broken, not the agent. The
// run's outcome is E_BASELINE_RED; its report names the failing steps.
func (r *run) escalateRed(ev *verdict.Evaluation, reds []*verdict.Evaluation, runErr error) *EscalatedError {
	a := r.Record.Attempt
	var steps []string
	for _, s := range r.Record.FailedSteps() {
		steps = append(steps, s.Name)
	}
	md := r.escalateFor(ev, reds, verdict.Trigger{Type: verdict.TriggerRedBaseline, Description: fmt.Sprintf(
		"step %s failed on the tree without the change in %d runs in a row: main or the environment is broken, not agent %s",
		strings.Join(steps, ", "), len(reds), a.Agent)},
		"fix what makes step "+strings.Join(steps, ", ")+" fail without any change (main, or the environment it runs in)", " (E_BASELINE_RED)")
	return &EscalatedError{Task: a.Task, Agent: a.Agent, Report: md, Attempts: len(reds), Red: steps, Err: runErr}
}

// escalateFor makes the run's evaluation an ESCALATE for what no attempt
// of the agent can mend, and writes its report: the runs in a row, the
// trigger, and what a person does (then resolves the task; until then
// its runs stop, with stopCode). It returns the report's Markdown file.
func (r *run) escalateFor(ev *verdict.Evaluation, runs []*verdict.Evaluation, t verdict.Trigger, do, stopCode string) string {
	a := r.Record.Attempt
	ev.Verdict = verdict.Escalate
	rep := verdict.NewReport("esc-"+r.Record.RunID, r.Env.Now(), a.Task, a.Agent, runs, "")
	rep.Trigger = t
	rep.ActionRequired = "Human intervention needed: " + do + ", then `orket task resolve " +
		config.ShellQuote([]string{a.Task}) + " --reason \"...\"`; until then runs of this task stop" + stopCode + "."
	r.currentOutputs(rep)
	addOutputs(r.Repo, rep)
	md, js, err := WriteReport(r.Repo, rep)
	if err != nil {
		r.Warn("could not write the escalation report: " + err.Error())
	}
	ev.Report = md
	r.Record.Escalation = &orket.Escalation{Report: md, ReportJSON: js, Trigger: t.Type}
	return md
}

// maxInlinePatch bounds an attempt's change carried in the report
// itself; a bigger one is only in the file beside it.
const maxInlinePatch = 64 << 10

// reportTailLines is how much of a failed step's output a report shows.
const reportTailLines = 20

// currentOutputs gives the escalating run's own attempt (the last) its
// output from the record in memory, which is not written yet.
func (r *run) currentOutputs(rep *verdict.Report) {
	if n := len(rep.Attempts); n > 0 {
		c := *rep.Attempts[n-1]
		c.OutputTail = failedTail(r.Record)
		rep.Attempts[n-1] = &c
	}
}

// addOutputs completes a report's attempts from their run records: the
// failed step's last lines, and each attempt's change, copied beside the
// report (run records are pruned by retention; reports stay). The
// attempts are copies: the evaluation log is not changed.
func addOutputs(repo *txn.Repo, rep *verdict.Report) {
	root, err := repo.FS()
	if err != nil {
		return
	}
	for i, a := range rep.Attempts {
		c := *a
		if c.OutputTail == "" {
			if rec, err := orket.LoadRecord(repo, c.RunID); err == nil {
				c.OutputTail = failedTail(rec)
			}
		}
		if c.PatchFile != "" {
			dst := EscalationsDir + "/" + rep.ID + "/" + c.RunID + ".patch"
			if b, err := copyPatch(repo, root, c.PatchFile, dst); err == nil {
				c.PatchFile = repo.DisplayPath(filepath.Join(mainRoot(repo), filepath.FromSlash(dst)))
				if len(b) <= maxInlinePatch {
					c.Patch = string(b)
				}
			}
		}
		rep.Attempts[i] = &c
	}
}

// failedTail is the last lines of what a run's failing step (or edit)
// printed.
func failedTail(rec *orket.Record) string {
	var s *verify.StepResult
	if rec.Code == orket.EDraftFailure && rec.Edit != nil {
		s = rec.Edit
	} else if f := rec.FailedSteps(); len(f) > 0 {
		s = f[0]
	}
	if s == nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(s.OutputTail, "\n"), "\n")
	if len(lines) > reportTailLines {
		lines = lines[len(lines)-reportTailLines:]
	}
	return strings.Join(lines, "\n")
}

// copyPatch copies a run's kept change (in the work tree) to dst in the
// main work tree's .orket, durably, and returns its first bytes (up to
// maxInlinePatch+1).
func copyPatch(repo *txn.Repo, root *fsroot.Root, src, dst string) ([]byte, error) {
	f, err := root.Open(src)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	main, err := fsroot.Open(mainRoot(repo))
	if err != nil {
		return nil, err
	}
	defer main.Close()
	var head bytes.Buffer
	err = main.WriteFrom(dst, 0o644, fsroot.Options{Sync: true}, func(w io.Writer) error {
		_, err := io.Copy(io.MultiWriter(w, &limitWriter{w: &head, n: maxInlinePatch + 1}), f)
		return err
	})
	return head.Bytes(), err
}

// limitWriter keeps the first n bytes written to it and drops the rest.
type limitWriter struct {
	w io.Writer
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

// WriteReport writes an escalation report as .orket/escalations/<id>.md
// and .json in the main work tree, synced, and returns their paths as a
// person in this work tree names them.
func WriteReport(repo *txn.Repo, rep *verdict.Report) (md, js string, err error) {
	root := mainRoot(repo)
	fs, err := fsroot.Open(root)
	if err != nil {
		return "", "", err
	}
	defer fs.Close()
	if err := ensureOrketDir(fs); err != nil {
		return "", "", err
	}
	base := EscalationsDir + "/" + rep.ID
	if err := fs.WriteFile(base+".json", rep.JSON(), 0o644, fsroot.Options{Sync: true}); err != nil {
		return "", "", err
	}
	if err := fs.WriteFile(base+".md", []byte(rep.Markdown()), 0o644, fsroot.Options{Sync: true}); err != nil {
		return "", "", err
	}
	name := func(p string) string { return repo.DisplayPath(filepath.Join(root, filepath.FromSlash(p))) }
	return name(base + ".md"), name(base + ".json"), nil
}

// notifyTimeout bounds escalation.notify.
const notifyTimeout = time.Minute

// notify hands the report to escalation.notify, when it is set: the
// command gets the report's path as its last argument and in
// ORKET_ESCALATION_REPORT. Its failure is a warning; the escalation
// stands.
func (r *run) notify(ctx context.Context, e *orket.Escalation) {
	if e == nil || e.Report == "" {
		return
	}
	status, err := Notify(ctx, r.Repo, r.Config, r.Environ, e.Report)
	if status == "" {
		return
	}
	e.Notified = status
	if err != nil {
		r.Warn("escalation.notify failed: " + err.Error())
	}
}

// Notify runs escalation.notify for a report; it returns "" when none is
// set, "ok", or what failed (and the error).
func Notify(ctx context.Context, repo *txn.Repo, cfg *config.Config, environ []string, report string) (string, error) {
	n := cfg.Escalation
	var argv []string
	switch {
	case n.NotifyArgv != nil:
		argv = append(append([]string{}, n.NotifyArgv...), report)
	case n.NotifyShell != "":
		argv = []string{"sh", "-c", n.NotifyShell + ` "$@"`, "sh", report}
	default:
		return "", nil
	}
	abs := report
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(repo.Root, abs)
	}
	ctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = repo.Root
	cmd.Env = append(append([]string{}, environ...), "ORKET_ESCALATION_REPORT="+abs)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if err == nil {
		return "ok", nil
	}
	var ee *exec.ExitError
	what := err.Error()
	if errors.As(err, &ee) {
		what = ee.ProcessState.String()
	}
	if ctx.Err() != nil {
		what = "timed out after " + notifyTimeout.String()
	}
	tail := strings.TrimSpace(lastBytes(out.String(), 500))
	if tail != "" {
		what += ": " + strings.ReplaceAll(tail, "\n", " | ")
	}
	return "failed: " + what, fmt.Errorf("%s: %s", config.ShellQuote(argv), what)
}

func lastBytes(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
