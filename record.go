package orket

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/orket/orket/config"
	"github.com/orket/orket/feedback"
	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/lessons"
	"github.com/orket/orket/preflight"
	"github.com/orket/orket/redact"
	"github.com/orket/orket/store"
	"github.com/orket/orket/txn"
	"github.com/orket/orket/verify"
)

// An Attempt is where a run stands among its agent's consecutive attempts
// at its task (docs/verdicts.md, Attempts): what the edit was told of the
// earlier ones, and the count after this run's verdict. An agent reads it
// to decide whether to try again.
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
	// Elsewhere: the report is not in this clone (the escalation came
	// with orket sync; reports stay on the clone that wrote them).
	Elsewhere bool `json:"report_elsewhere,omitempty"`
	// Notified says how escalation.notify went: "ok", or what failed.
	Notified string `json:"notified,omitempty"`
}

// A GuardrailsView is what a run or an agent is given of its guardrails:
// the version, the file ORKET_GUARDRAILS names, and the lines demoted
// because what they cite is gone.
type GuardrailsView struct {
	Agent   string `json:"agent"`
	Version int    `json:"version"`
	// File is the version's text, v<N>.md (0 and "": no approved
	// version). An edit command reads a copy of it made for the run,
	// checked, inert, with the demoted lines marked.
	File    string   `json:"file"`
	Rules   int      `json:"rules"`
	Demoted []string `json:"demoted,omitempty"` // why, one per demoted line
	// Text is the guardrails as the agent reads them (not in --json of a
	// run: the file holds it).
	Text string `json:"text,omitempty"`
	// Who approved the version, on which clone (Synced: another one,
	// the version came by orket sync), and whether its signature was
	// checked (guardrails.require_signed).
	ApprovedBy string `json:"approved_by,omitempty"`
	Clone      string `json:"clone,omitempty"`
	Synced     bool   `json:"synced,omitempty"`
	Signed     bool   `json:"signed,omitempty"`
	// Unapproved are newer versions that are not given, and why.
	Unapproved []UnapprovedVersion `json:"unapproved,omitempty"`
}

// An UnapprovedVersion is a guardrails version without a valid approval:
// never given to an edit command.
type UnapprovedVersion struct {
	Version int    `json:"version"`
	Why     string `json:"why"`
}

// A ProposalView is a guardrails proposal a run or a review made.
type ProposalView struct {
	ID      string `json:"id"`
	Agent   string `json:"agent"`
	Type    string `json:"type"` // addition, modification, removal
	Section string `json:"section"`
	Text    string `json:"text"`
	Count   int    `json:"count"`
}

// A SyncView is what memory.sync: auto did around a run.
type SyncView struct {
	When     string `json:"when"` // start (pull) or end (push)
	Remote   string `json:"remote"`
	Received int    `json:"received"`
	Sent     int    `json:"sent"`
	Pushed   bool   `json:"pushed"`
	// Error is why the sync failed; the run went on.
	Error string `json:"error,omitempty"`
	Code  Code   `json:"code,omitempty"`
}

// runsDir is where run records are kept, repository-relative.
const runsDir = store.Dir + "/" + store.RunsDir

// A Record is a run as it happened: the file .orket/runs/<run-id>.json and
// the --json object are this one schema. Readers ignore keys they do not
// know, so it can grow.
type Record struct {
	Schema     string             `json:"schema_version"`
	Code       Code               `json:"code"`
	ExitStatus int                `json:"exit_status"`
	Error      string             `json:"error,omitempty"`
	Hint       string             `json:"hint,omitempty"`
	RunID      string             `json:"run_id"`
	Request    RecordRequest      `json:"request"`
	Plan       Plan               `json:"plan"`
	Advisories []lessons.Advisory `json:"advisories"`
	// Feedback is what earlier reviews say of this run: the agent's
	// patterns and past rejections of the area (docs/feedback.md).
	Feedback []feedback.Advisory `json:"feedback,omitempty"`
	// Reviewed are files of .orket/rejected/ reviewed into the agent
	// memory at the start of this run.
	Reviewed  []feedback.Reviewed  `json:"reviewed,omitempty"`
	Preflight []preflight.Result   `json:"preflight"`
	Edit      *verify.StepResult   `json:"edit,omitempty"`
	Steps     []*verify.StepResult `json:"steps"`
	Barrier   *Barrier             `json:"barrier,omitempty"`
	// Sandbox is the kernel sandbox of the edit command (command edits).
	Sandbox    *SandboxView `json:"sandbox,omitempty"`
	GitChanges []string     `json:"git_changes,omitempty"`
	StepWrites []string     `json:"step_writes,omitempty"` // paths verify steps wrote besides the edit's
	// IgnoredWrites names the ignored files and directories ("dir/") the
	// edit deleted, rewrote or made: outside the transaction, but seen.
	IgnoredWrites []string `json:"ignored_writes,omitempty"`
	// OwnOutput names the files in the work tree that are orket's own
	// output (run.log in orket run ... > run.log): left out of the
	// transaction, neither the edit's writes nor reverted.
	OwnOutput []string `json:"own_output,omitempty"`
	Snapshot  string   `json:"snapshot_ref,omitempty"`
	Revert    *Revert  `json:"revert,omitempty"`
	// Baseline is how the tree without the change was verified after a
	// failure.
	Baseline  *BaselineRun `json:"baseline,omitempty"`
	PatchFile string       `json:"patch_file,omitempty"`
	Commit    string       `json:"commit,omitempty"`
	// CommitBranch is the branch the --commit commit went on.
	CommitBranch string `json:"commit_branch,omitempty"`
	// Kept lists, for a kept change, what each touched path held before
	// the run and after it; KeptDirs the directories the run made. orket
	// reject undoes the change from them.
	Kept     []KeptPath `json:"kept,omitempty"`
	KeptDirs []string   `json:"kept_dirs,omitempty"`
	// CommitRefused is what git said when it refused the commit (a hook,
	// signing, no identity); the change stays in the tree.
	CommitRefused string       `json:"commit_refused,omitempty"`
	HeadPre       string       `json:"head_pre,omitempty"`
	LessonID      *string      `json:"lesson_id"`
	LessonIDs     []string     `json:"lesson_ids"`
	Lessons       []LessonView `json:"lessons,omitempty"`
	// FlakyLessons are earlier lessons this run marked flaky: their
	// command passed here on the content it failed on then.
	FlakyLessons []string `json:"flaky_lessons,omitempty"`
	// ResolvedLessons are earlier lessons whose command passed here on the
	// content it failed on then, in a changed environment: not flaky, the
	// change resolved them (docs/verdicts.md, Flaky steps).
	ResolvedLessons []ResolvedLesson `json:"resolved_lessons,omitempty"`
	// Verdict and Score judge a run that verified (docs/verdicts.md);
	// Notes say what kept it from APPROVE.
	Verdict      string   `json:"verdict,omitempty"`
	Score        *int     `json:"score,omitempty"`
	VerdictNotes []string `json:"verdict_notes,omitempty"`
	// Attempt is where the run stands among its agent's attempts at its
	// task: what it was told before, and the count after its verdict.
	Attempt *Attempt `json:"attempt,omitempty"`
	// Guardrails are the agent's approved rules the edit was given
	// (ORKET_GUARDRAILS); Proposals, the new ones its feedback made
	// (orket lessons review decides).
	Guardrails *GuardrailsView `json:"guardrails,omitempty"`
	Proposals  []ProposalView  `json:"proposals,omitempty"`
	// Sync is what memory.sync: auto did before and after the run.
	Sync []SyncView `json:"sync,omitempty"`
	// Escalation names the report of the task's escalation, when this
	// run escalated it or was stopped by it.
	Escalation *Escalation      `json:"escalation,omitempty"`
	Timings    map[string]int64 `json:"timings_ms"`
	RecordFile string           `json:"record,omitempty"`
}

// A ResolvedLesson is a lesson a changed environment resolved, and what
// changed ("CLICK_TEST_DSN is set").
type ResolvedLesson struct {
	ID      string   `json:"id"`
	Changed []string `json:"changed"`
}

// RecordRequest is what the run was asked to do.
type RecordRequest struct {
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
	Agent       string   `json:"agent"`
	Task        string   `json:"task"`
	// AllowProtected are the protect: globs this run may change.
	AllowProtected []string `json:"allow_protected,omitempty"`
	// Touch are the paths the edit declared it would change (--touch).
	Touch []string `json:"touch,omitempty"`
}

// Plan is the run's touch set and steps.
type Plan struct {
	TouchSet   []string   `json:"touch_set"`
	TouchCount int        `json:"touch_count"`
	Measured   bool       `json:"measured"` // false: planned from a patch, or not known yet
	Steps      []PlanStep `json:"steps"`
	// ScopeUnmatched lists scope patterns that match nothing in the tree
	// nor in the plan: a typo, or something the edit is to create.
	ScopeUnmatched []string `json:"scope_unmatched,omitempty"`
	// Protect is protect: of orket.yaml: what the edit may add to but
	// not change.
	Protect []string `json:"protect,omitempty"`
}

// A PlanStep is a verify step as planned.
type PlanStep struct {
	Name    string `json:"name"`
	Command string `json:"command"`
	Skip    string `json:"skip,omitempty"` // "skip" (--skip) or "when" (no touched path matches)
}

// Barrier lists the writes the barrier refused.
type Barrier struct {
	Outside []string `json:"outside,omitempty"`
	Guarded []string `json:"guarded,omitempty"`
	// Protected lists protected paths the edit modified or deleted.
	Protected []string `json:"protected,omitempty"`
	// Denied are the edit's output lines where the kernel sandbox refused
	// a write.
	Denied []string `json:"denied,omitempty"`
	// Ignored lists git-ignored paths outside the scope that the kernel
	// sandbox refused: sandbox.write would open them; not the edit's
	// fault, so a run stopped by them alone is not counted.
	Ignored []string `json:"ignored,omitempty"`
	// CaughtBy names the line of defence that caught the violation:
	// "sandbox" (the kernel refused the write) or "measurement" (the
	// write happened, was seen, and was reverted).
	CaughtBy string `json:"caught_by,omitempty"`
	// DuringVerify: the writes happened while the verify steps ran.
	DuringVerify bool `json:"during_verify,omitempty"`
}

// Revert says what a revert did.
type Revert struct {
	Reverted bool     `json:"reverted"`
	Verified bool     `json:"revert_verified"`
	Paths    []string `json:"paths"`
	// NotRestored names git files left as they are, and why: a branch
	// checked out in another work tree, a ref changed during the revert.
	NotRestored []string `json:"not_restored,omitempty"`
}

// LessonView is a lesson as a run reports it.
type LessonView struct {
	ID         string   `json:"id"`
	Step       string   `json:"step"`
	Tags       []string `json:"tags"`
	Title      string   `json:"title"`
	FirstError string   `json:"first_error,omitempty"`
}

func newRecord() *Record {
	return &Record{Schema: store.RunSchema, Code: OK, Advisories: []lessons.Advisory{}, Preflight: []preflight.Result{},
		Steps: []*verify.StepResult{}, LessonIDs: []string{}, Timings: map[string]int64{},
		Plan: Plan{TouchSet: []string{}, Steps: []PlanStep{}}}
}

// setOutcome fills the record's outcome from the run's error.
func (rec *Record) setOutcome(err error) {
	rec.Code, rec.ExitStatus, rec.Error, rec.Hint = OK, 0, "", ""
	if err == nil {
		return
	}
	p := Describe(err)
	rec.Code, rec.ExitStatus, rec.Error, rec.Hint = p.Code, p.Exit, p.Msg, p.Hint
}

// FailedSteps returns the record's failing required steps.
func (rec *Record) FailedSteps() []*verify.StepResult {
	return failedSteps(rec.Steps)
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

// writeRecord writes the record as .orket/runs/<run-id>.json, beneath the
// repository root and never through a symlink.
func writeRecord(root *fsroot.Root, rec *Record) error {
	if err := ensureOrketDir(root); err != nil {
		return err
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return root.WriteFile(rec.RecordFile, append(b, '\n'), 0o644, fsroot.Options{Sync: true})
}

// LoadRecord reads the record of a run.
func LoadRecord(r *txn.Repo, runID string) (*Record, error) {
	root, err := r.FS()
	if err != nil {
		return nil, err
	}
	b, err := root.ReadFile(runsDir + "/" + runID + ".json")
	if err != nil {
		return nil, err
	}
	rec := &Record{}
	if err := json.Unmarshal(b, rec); err != nil {
		return nil, fmt.Errorf("%s/%s.json: %w", runsDir, runID, err)
	}
	return rec, nil
}

// ensureOrketDir creates .orket with its .gitignore (store.Ensure).
func ensureOrketDir(root *fsroot.Root) error { return store.Ensure(root) }

// pruneRuns applies retention to run records: the newest max_entries, none
// older than max_age. It reports what it could not remove.
func pruneRuns(repo *txn.Repo, root *fsroot.Root, dir string, keep config.Retention, now time.Time) error {
	if st, err := root.Lstat(dir); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil // no records kept: nothing to prune
	}
	f, err := root.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return err
	}
	var runs []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			runs = append(runs, strings.TrimSuffix(e.Name(), ".json"))
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(runs))) // run ids sort by time
	cutoff := now.Add(-keep.MaxAge).UTC().Format("20060102T150405Z")
	var errs []error
	for i, id := range runs {
		if i < keep.MaxEntries && id >= cutoff {
			continue
		}
		errs = append(errs, root.Remove(path.Join(dir, id+".json")), root.Remove(path.Join(dir, id, "change.patch")), repo.DropKept(id))
		if _, err := root.Rmdir(path.Join(dir, id)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// redactRecord removes secrets from everything a run record (and --json)
// carries of the run's command line and outcome; step output was redacted
// as it streamed.
func redactRecord(rec *Record, red *redact.Redactor) {
	rec.Request.Argv = red.Argv(rec.Request.Argv)
	rec.Request.Instruction = red.Redact(rec.Request.Instruction)
	rec.Error = red.Redact(rec.Error)
	for i := range rec.Plan.Steps {
		rec.Plan.Steps[i].Command = red.Redact(rec.Plan.Steps[i].Command)
	}
	for _, s := range append(append([]*verify.StepResult{}, rec.Steps...), rec.Edit) {
		if s != nil {
			s.Command = red.Redact(s.Command)
		}
	}
}

// rewriteRecord writes the run record again, with the end's sync.
func (r *run) rewriteRecord() {
	root, err := r.req.Repo.FS()
	if err == nil {
		err = writeRecord(root, r.rec)
	}
	if err != nil {
		r.obs.Warn("could not write the run record again after memory.sync: " + err.Error())
	}
}

// StepResult is a verify step (or the edit command) as a run reports it.
type StepResult = verify.StepResult

// The states of a step.
const (
	StepPassed  = verify.Passed
	StepFailed  = verify.Failed
	StepSkipped = verify.Skipped
)

// How a failed step did on the tree without the change (its Baseline);
// any other value says why it was not run there.
const (
	BaselinePasses      = verify.Passes
	BaselineFailsToo    = verify.FailsToo
	BaselineNewFailures = verify.NewFailures
)
