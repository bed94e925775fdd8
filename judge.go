package orket

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

	"github.com/orket/orket/config"
	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/internal/testhook"
	"github.com/orket/orket/lessons"
	"github.com/orket/orket/store"
	"github.com/orket/orket/txn"
	"github.com/orket/orket/verdict"
	"github.com/orket/orket/verify"
)

// An Attempt is where a run stands among its agent's consecutive attempts
// at its task (SPEC 8.2): what the edit was told of the earlier ones, and
// the count after this run's verdict. An agent reads it to decide whether
// to try again.
type Attempt struct {
	Task     string            `json:"task"`
	Agent    string            `json:"agent"`
	Number   int               `json:"number"`  // this run's number: 1 + the rejections before it
	Maximum  int               `json:"maximum"` // the rejections that escalate (verdict.escalate_after)
	Previous []PreviousAttempt `json:"previous"`
	// Rejections is the count of consecutive rejections once this run
	// was judged: 0 after an approval, Maximum when it escalated.
	Rejections *int `json:"rejections,omitempty"`
}

// A PreviousAttempt is an earlier rejected attempt, as the next one is
// told of it.
type PreviousAttempt struct {
	RunID      string   `json:"run_id"`
	Verdict    string   `json:"verdict"`
	Score      int      `json:"score"`
	FailedStep string   `json:"failed_step,omitempty"`
	Tags       []string `json:"tags"`
	Summary    string   `json:"summary"`
}

// An Escalation names a task's escalation report.
type Escalation struct {
	Report     string `json:"report"`      // the Markdown file
	ReportJSON string `json:"report_json"` // the same as JSON
	Trigger    string `json:"trigger"`     // third_rejection, human_request
	// Notified says how escalation.notify went: "ok", or what failed.
	Notified string `json:"notified,omitempty"`
}

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
func (r *Run) checkAttempts() error {
	req := r.rec.Request
	st, err := Verdicts(r.req.Repo).State(req.Task, req.Agent)
	if err != nil {
		r.obs.Warn("cannot read the evaluation log: " + err.Error())
		return nil
	}
	if e := st.Escalation; e != nil {
		r.rec.Escalation = escalationOf(e)
		if mutating(r.req.Edit) {
			return &EscalatedError{Task: req.Task, Agent: req.Agent, Report: r.rec.Escalation.Report, Refused: true}
		}
		r.obs.Warn(fmt.Sprintf("task %q is escalated (report: %s); this verify-only run goes on and counts for nothing", req.Task, r.rec.Escalation.Report))
		return nil
	}
	if !mutating(r.req.Edit) {
		return nil
	}
	a := &Attempt{Task: req.Task, Agent: req.Agent, Number: len(st.Attempts) + 1, Maximum: escalateAfter(r.req.Config),
		Previous: []PreviousAttempt{}}
	for _, e := range st.Attempts {
		a.Previous = append(a.Previous, PreviousAttempt{RunID: e.RunID, Verdict: e.Verdict, Score: e.Score,
			FailedStep: e.FailedStep, Tags: nonNil(e.Tags), Summary: e.Summary})
	}
	r.rec.Attempt = a
	return nil
}

func escalationOf(e *verdict.TaskEvent) *Escalation {
	trigger := "third_rejection"
	if e.RunID == "" {
		trigger = "human_request"
	}
	md := e.Report
	return &Escalation{Report: md, ReportJSON: strings.TrimSuffix(md, ".md") + ".json", Trigger: trigger}
}

// judgedCodes are the outcomes of runs that verified, or whose edit
// failed or escaped: they get a verdict.
var judgedCodes = map[Code]bool{OK: true, ECommitRefused: true, EVerifyFailedReverted: true, EVerifyFailedKept: true,
	EVerifyFailed: true, EDraftFailure: true, EWriteOutOfScope: true, EWriteProtected: true}

// judge gives the run its verdict and score, appends its evaluation, and
// escalates the task on its agent's escalate_after-th consecutive counted
// rejection: the run's outcome becomes E_ESCALATED (it was reverted, its
// lesson recorded all the same). The evaluation is one line, appended
// whole: a crash leaves the run counted once or not at all.
func (r *Run) judge(runErr error) error {
	rec := r.rec
	if !judgedCodes[rec.Code] || rec.RunID == "" {
		return runErr
	}
	cfg := r.req.Config
	in := verdict.Input{Steps: rec.Steps, Weights: map[string]int{}, Failed: rec.Code != OK && rec.Code != ECommitRefused,
		Edited: mutating(r.req.Edit), Approve: cfg.Verdict.Approve, Notes: r.verdictNotes}
	for _, s := range r.prof.Steps {
		in.Weights[s.Name] = s.ScoreWeight()
	}
	switch rec.Code {
	case EDraftFailure:
		in.Reason = "the edit command failed (" + ExitText(rec.Edit) + ")"
	case EWriteOutOfScope:
		in.Reason = "the edit wrote outside its scope"
	case EWriteProtected:
		in.Reason = "the edit modified protected paths"
	}
	j := verdict.Judge(in)
	ev := r.evaluation(j)
	store := Verdicts(r.req.Repo)
	var esc *EscalatedError
	if a := rec.Attempt; a != nil {
		n := 0
		if j.Counted {
			// Read again under the lock: the count the run started with
			// may have changed (a person's reset) while it ran.
			st, err := store.State(a.Task, a.Agent)
			if err != nil {
				r.obs.Warn("cannot read the evaluation log: " + err.Error())
				st = &verdict.TaskState{}
			}
			n = len(st.Attempts) + 1
			if a.Maximum > 0 && n >= a.Maximum && st.Escalation == nil {
				esc = r.escalate(ev, append(st.Attempts, ev), runErr)
			}
		}
		a.Rejections = &n
	}
	testhook.Point("judge:before-evaluation")
	if err := store.Record(ev); err != nil {
		r.obs.Warn("could not append to the evaluation log: " + err.Error())
	}
	testhook.Point("judge:after-evaluation")
	// Flaky first: a lesson marked flaky weighs less, and folds apart,
	// in the proposals this run's learning makes.
	marked, err := r.markFlaky(store)
	if err != nil {
		r.obs.Warn("could not mark flaky lessons: " + err.Error())
	}
	rec.FlakyLessons = marked
	r.learnFromRun(ev)
	if err := pruneEvaluations(store, r.req.Config.Lessons.Retention, r.req.Env.Now()); err != nil {
		r.obs.Warn("could not prune the evaluation log: " + err.Error())
	}
	rec.Verdict, rec.Score, rec.VerdictNotes = ev.Verdict, &ev.Score, j.Notes
	if esc == nil {
		return runErr
	}
	r.notify(rec.Escalation)
	return esc
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
func (r *Run) evaluation(j verdict.Judgement) *verdict.Evaluation {
	rec := r.rec
	ev := &verdict.Evaluation{Time: r.req.Env.Now().UTC(), RunID: rec.RunID, Task: rec.Request.Task, Agent: rec.Request.Agent,
		Profile: rec.Request.Profile, EditSource: rec.Request.EditSource, Verdict: j.Verdict, Score: j.Score, Notes: j.Notes,
		Counted: j.Counted, Code: string(rec.Code), PatchFile: rec.PatchFile, Content: r.content, DurationMS: r.req.Env.Now().Sub(r.start).Milliseconds()}
	if g := rec.Guardrails; g != nil {
		ev.Guardrails = g.Version
	}
	var failed *verify.StepResult
	if rec.Code == EDraftFailure {
		failed = rec.Edit
	} else if f := rec.FailedSteps(); len(f) > 0 {
		failed = f[0]
	}
	if failed != nil {
		ev.FailedStep, ev.FailedCommand = failed.Name, failed.Command
	}
	for _, l := range rec.Lessons {
		if failed != nil && l.Step == failed.Name {
			ev.Tags = l.Tags
			ev.FirstError = l.FirstError
			break
		}
	}
	for _, c := range rec.Preflight {
		if !c.OK {
			ev.Checks = append(ev.Checks, c.Detail)
		}
	}
	line := ev.FirstError
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
func summary(rec *Record, failed *verify.StepResult, firstError string) string {
	var s string
	switch {
	case rec.Code == EWriteOutOfScope && rec.Barrier != nil:
		s = "wrote outside the scope: " + strings.Join(append(append([]string{}, rec.Barrier.Outside...), rec.Barrier.Guarded...), ", ")
	case rec.Code == EWriteProtected && rec.Barrier != nil:
		s = "modified protected paths: " + strings.Join(rec.Barrier.Protected, ", ")
	case failed != nil && failed.Name == "edit" && rec.Code == EDraftFailure:
		s = "the edit command failed (" + ExitText(failed) + ")"
	case failed != nil:
		s = "step " + failed.Name + " failed (" + ExitText(failed) + ")"
	case rec.Code == OK:
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
func (r *Run) escalate(ev *verdict.Evaluation, attempts []*verdict.Evaluation, runErr error) *EscalatedError {
	a := r.rec.Attempt
	ev.Verdict = verdict.Escalate
	rep := verdict.NewReport("esc-"+r.rec.RunID, r.req.Env.Now(), a.Task, a.Agent, attempts, "")
	r.currentOutputs(rep)
	addOutputs(r.req.Repo, rep)
	esc := &Escalation{Trigger: rep.Trigger.Type}
	md, js, err := WriteReport(r.req.Repo, rep)
	if err != nil {
		r.obs.Warn("could not write the escalation report: " + err.Error())
	}
	esc.Report, esc.ReportJSON = md, js
	ev.Report = md
	r.rec.Escalation = esc
	return &EscalatedError{Task: a.Task, Agent: a.Agent, Report: md, Attempts: len(attempts), Err: runErr}
}

// maxInlinePatch bounds an attempt's change carried in the report
// itself; a bigger one is only in the file beside it.
const maxInlinePatch = 64 << 10

// reportTailLines is how much of a failed step's output a report shows.
const reportTailLines = 20

// currentOutputs gives the escalating run's own attempt (the last) its
// output from the record in memory, which is not written yet.
func (r *Run) currentOutputs(rep *verdict.Report) {
	if n := len(rep.Attempts); n > 0 {
		c := *rep.Attempts[n-1]
		c.OutputTail = failedTail(r.rec)
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
			if rec, err := LoadRecord(repo, c.RunID); err == nil {
				c.OutputTail = failedTail(rec)
			}
		}
		if c.PatchFile != "" {
			dst := EscalationsDir + "/" + rep.ID + "/" + c.RunID + ".patch"
			if b, err := copyPatch(repo, root, c.PatchFile, dst); err == nil {
				c.PatchFile = displayPath(repo, filepath.Join(mainRoot(repo), filepath.FromSlash(dst)))
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
func failedTail(rec *Record) string {
	var s *verify.StepResult
	if rec.Code == EDraftFailure && rec.Edit != nil {
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
	name := func(p string) string { return displayPath(repo, filepath.Join(root, filepath.FromSlash(p))) }
	return name(base + ".md"), name(base + ".json"), nil
}

// notifyTimeout bounds escalation.notify.
const notifyTimeout = time.Minute

// notify hands the report to escalation.notify, when it is set: the
// command gets the report's path as its last argument and in
// ORKET_ESCALATION_REPORT. Its failure is a warning; the escalation
// stands.
func (r *Run) notify(e *Escalation) {
	if e == nil || e.Report == "" {
		return
	}
	status, err := Notify(r.ctx, r.req.Repo, r.req.Config, r.env, e.Report)
	if status == "" {
		return
	}
	e.Notified = status
	if err != nil {
		r.obs.Warn("escalation.notify failed: " + err.Error())
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
