package learn

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/orket/orket"
	"github.com/orket/orket/config"
	"github.com/orket/orket/feedback"
	"github.com/orket/orket/redact"
	"github.com/orket/orket/store"
	"github.com/orket/orket/txn"
	"github.com/orket/orket/verdict"
)

// A RejectRequest is a reviewer's "no" to a kept run (docs/feedback.md).
type RejectRequest struct {
	Repo   *txn.Repo
	Config *config.Config
	RunID  string // the run, or a unique prefix of its id; "" is the latest kept run
	Reason string // verbatim; "" asks (AskReason), else "No reason provided"
	Type   string // code, test, docs, config, other; "" is guessed from the paths
	Item   string // what was rejected; "" is the run's scope
	NoUndo bool   // record only
	By     string
	Env    orket.Env
	// AskReason asks a person why, once and briefly; it returns "" when
	// there is no one to ask or no answer.
	AskReason func() string
}

// A RejectResult is orket reject's success object (docs/feedback.md,
// Patterns: rejection_logged, category, learned_action, ...), with what
// the undo did and the learning appended to the agent memory.
type RejectResult struct {
	Code orket.Code `json:"code"`
	feedback.Logged
	Learning string `json:"learning,omitempty"`
	// LearningSource says where the learning came from: the summariser, or
	// the learned action when there is none or it failed.
	LearningSource string `json:"learning_source,omitempty"`
	Memory         string `json:"memory_file"`
	// Warnings are what went wrong without losing the rejection: a
	// summariser that failed, a memory file that wants pruning.
	Warnings []string `json:"warnings,omitempty"`
	// Proposals are new guardrails proposals the rejection completed.
	Proposals []orket.ProposalView `json:"proposals,omitempty"`
	// Attempt is where the run's agent stands on its task now that the
	// rejection counts as one of its rejections; Escalation, the report
	// when it was the one that escalated the task.
	Attempt    *orket.Attempt    `json:"attempt,omitempty"`
	Escalation *orket.Escalation `json:"escalation,omitempty"`
}

// Reject records a reviewer's rejection of a kept run, takes the change
// out while the tree still holds it (as a transaction: lock, snapshot,
// proof; the change kept as .orket/rejected/<run-id>.patch first), and
// learns from it: the feedback log, the agent memory, the patterns the
// next run is told.
func Reject(ctx context.Context, req RejectRequest) (_ *RejectResult, err error) {
	defer func() { err = coded(err) }()
	repo := req.Repo
	repo.UseFSMonitor(req.Config.Snapshot.FSMonitor)
	if req.Env.Now == nil {
		req.Env.Now = time.Now
	}
	cat, err := rejectCategorizer(req)
	if err != nil {
		return nil, err
	}
	unlock, err := lockToWrite(ctx, repo, txn.Holder{RunID: "reject", Command: "orket reject", Started: req.Env.Now()})
	if err != nil {
		return nil, err
	}
	defer unlock()
	orketDir := OrketDir(repo)
	log := feedback.OpenLog(orketDir)
	rejected, err := rejectedRuns(log)
	if err != nil {
		return nil, internal("read the feedback log", "check that .orket/memory is readable", err)
	}
	rec, err := orket.KeptRun(repo, req.RunID, rejected)
	if err != nil {
		return nil, err
	}
	reason := req.Reason
	if reason == "" && req.AskReason != nil {
		reason = strings.TrimSpace(req.AskReason())
	}
	undo, err := rec.TakeBack(ctx, repo, req.NoUndo, req.Env.Now())
	if err != nil {
		return nil, err
	}
	red := redact.New(redact.Options{Environ: req.Env.Environ})
	var commands []string
	for _, s := range rec.Plan.Steps {
		commands = append(commands, s.Command)
	}
	e := cat.Entry(feedback.Rejection{Time: req.Env.Now().UTC(), RunID: rec.RunID, Task: rec.Request.Task, Agent: rec.Request.Agent,
		Item: req.Item, ArtifactType: req.Type, Reason: reason, By: req.By, Scope: rec.Request.Scope, Touched: rec.Plan.TouchSet,
		Undo: undo, Run: feedback.RunContext{Profile: rec.Request.Profile, Toolchain: feedback.Toolchain(commands), Commands: commands}})
	e.Seal(red)
	res := &RejectResult{Code: orket.OK, Memory: repo.DisplayPath(store.Path(orketDir, store.MemoryFile))}
	mem := feedback.OpenMemory(orketDir)
	learnings := summarizeRejection(ctx, req, rec, undo, e, red, mem, res)
	if err := log.Record(e, red); err != nil {
		return nil, internal("append to the feedback log", "check that .orket/memory is writable", err)
	}
	since := time.Time{}
	if age := req.Config.Lessons.Retention.MaxAge; age > 0 {
		since = req.Env.Now().Add(-age)
	}
	a, err := log.Analyze(e.Agent, since)
	if err != nil {
		return nil, internal("read the feedback log", "check that .orket/memory is readable", err)
	}
	appendMemory(ctx, mem, learnings, e, res)
	if _, err := log.Prune(req.Config.Lessons.Retention.MaxEntriesPerAgent, req.Config.Lessons.Retention.MaxAge, req.Env.Now()); err != nil {
		res.Warnings = append(res.Warnings, "could not prune the feedback log: "+err.Error())
	}
	res.Logged = feedback.NewLogged(e, a)
	if err := countReview(ctx, req, rec, e.Reason, res); err != nil {
		res.Warnings = append(res.Warnings, err.Error())
	}
	ps, errs := learnFromFeedback(ctx, repo, req.Config, red, e, req.Env.Now())
	res.Proposals = proposalViews(ps)
	for _, err := range errs {
		res.Warnings = append(res.Warnings, err.Error())
	}
	return res, nil
}

// rejectCategorizer checks the request's artifact type and returns the
// categorizer of its configured keywords.
func rejectCategorizer(req RejectRequest) (*feedback.Categorizer, error) {
	if req.Type != "" {
		if err := feedback.CheckArtifactType(req.Type); err != nil {
			return nil, orket.Errorf(orket.EUsage, "--type is one of "+strings.Join(feedback.ArtifactTypes, ", "), "%v", err)
		}
	}
	cat, err := feedback.NewCategorizer(req.Config.Feedback.Keywords)
	if err != nil {
		return nil, &orket.Error{Code: orket.EConfigInvalid, Err: err, Msg: "feedback.keywords: " + err.Error(), Hint: "see docs/feedback.md"}
	}
	return cat, nil
}

// appendMemory appends the learnings and the rejection's row to the
// agent memory; a failure, or a memory that wants pruning, is a warning
// in res.
func appendMemory(ctx context.Context, mem *feedback.Memory, learnings []feedback.Learning, e *feedback.Entry, res *RejectResult) {
	st, err := mem.Append(ctx, learnings, []feedback.Row{feedback.RowOf(e)})
	if err != nil {
		res.Warnings = append(res.Warnings, "could not append to "+res.Memory+": "+err.Error())
	} else if st.WantsPruning {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s holds %d learnings, more than %d: it wants pruning by a person", res.Memory, st.Learnings, feedback.MaxLearnings))
	}
}

// summarizeRejection is what memory.summarizer learns from a rejection, given the
// rejected change and the agent memory (none without a summariser; the
// learned action when it fails, with a warning in res).
func summarizeRejection(ctx context.Context, req RejectRequest, rec *orket.Record, undo *feedback.Undo, e *feedback.Entry, red *redact.Redactor,
	mem *feedback.Memory, res *RejectResult) []feedback.Learning {
	s := summarizer(req.Config, req.Repo, red)
	if s == nil {
		return nil
	}
	current, _ := mem.Read()
	patch := ""
	if undo.Patch != "" {
		if root, err := req.Repo.FS(); err == nil {
			b, _ := root.ReadFile(undo.Patch)
			patch = string(b)
		}
	}
	text, src, err := s.Learn(ctx, feedback.Review{Subject: "run " + rec.RunID + " (" + strings.Join(rec.Plan.TouchSet, ", ") + ")",
		Content: patch, Reason: e.Reason, Memory: string(current)}, e.Action)
	if err != nil {
		res.Warnings = append(res.Warnings, "memory.summarizer failed ("+err.Error()+"); the learned action is used")
	}
	if src == feedback.SourceSummarizer {
		e.Learning = text
	}
	res.Learning, res.LearningSource = text, src
	return []feedback.Learning{feedback.LearningOf(e, text)}
}

// countReview counts a reviewer's rejection as a rejection of the run's
// task by its agent (docs/verdicts.md, Reviews count): the task's state
// says REJECTED (review) and the count goes on from the runs before; the
// rejection that reaches verdict.escalate_after escalates the task, with a
// report and the notify command, as a run's would.
func countReview(ctx context.Context, req RejectRequest, rec *orket.Record, reason string, res *RejectResult) error {
	task, agent := rec.Request.Task, rec.Request.Agent
	if task == "" {
		return nil
	}
	vs := Verdicts(req.Repo)
	now := req.Env.Now().UTC()
	if err := vs.Event(&verdict.TaskEvent{Time: now, Type: verdict.EventReview, Task: task, Agent: agent, RunID: rec.RunID,
		Reason: reason, By: req.By}); err != nil {
		return fmt.Errorf("could not count the rejection as an attempt at task %q: %w", task, err)
	}
	st, err := vs.State(task, agent)
	if err != nil {
		return fmt.Errorf("could not read task %q: %w", task, err)
	}
	n, max := len(st.Attempts), escalateAfter(req.Config)
	res.Attempt = &orket.Attempt{Task: task, Agent: agent, Number: n, Maximum: max, Rejections: &n, Previous: []orket.PreviousAttempt{}}
	for _, e := range st.Attempts {
		res.Attempt.Previous = append(res.Attempt.Previous, orket.PreviousAttempt{RunID: e.RunID, Verdict: e.Verdict, Score: e.Score,
			FailedStep: e.FailedStep, Tags: nonNil(e.Tags), Summary: e.Summary})
	}
	if max == 0 || n < max || st.Escalation != nil {
		return nil
	}
	rep := verdict.NewReport("esc-"+rec.RunID+"-review", now, task, agent, st.Attempts, "")
	rep.Trigger.Description += " (the last rejected in review)"
	addOutputs(req.Repo, rep)
	md, js, err := WriteReport(req.Repo, rep)
	if err != nil {
		return fmt.Errorf("could not write the escalation report of task %q: %w", task, err)
	}
	if err := vs.Event(&verdict.TaskEvent{Time: now, Type: verdict.EventEscalate, Task: task, Agent: agent, RunID: rec.RunID,
		Reason: "rejected in review: " + reason, By: req.By, Report: md}); err != nil {
		return fmt.Errorf("could not escalate task %q: %w", task, err)
	}
	res.Escalation = &orket.Escalation{Report: md, ReportJSON: js, Trigger: verdict.TriggerRejections}
	status, err := Notify(ctx, req.Repo, req.Config, req.Env.Environ, md)
	res.Escalation.Notified = status
	if err != nil {
		return &NotifyError{Err: err}
	}
	return nil
}

// summarizer is memory.summarizer, or nil.
func summarizer(cfg *config.Config, repo *txn.Repo, red *redact.Redactor) *feedback.Summarizer {
	if len(cfg.Memory.Summarizer) == 0 {
		return nil
	}
	return &feedback.Summarizer{Argv: cfg.Memory.Summarizer, Timeout: cfg.Memory.SummarizerTimeout, Dir: repo.Root, Redactor: red}
}

// rejectedRuns maps the runs the feedback log says were rejected to the
// entry that did.
func rejectedRuns(log *feedback.Log) (map[string]string, error) {
	out := map[string]string{}
	_, err := log.Each(func(e *feedback.Entry) error {
		if e.RunID != "" && e.Type == feedback.TypeReviewRejection {
			out[e.RunID] = e.ID
		}
		return nil
	})
	return out, err
}

// SourceSummarizer is a RejectResult's LearningSource when the learning
// is memory.summarizer's (otherwise it is the learned action).
const SourceSummarizer = feedback.SourceSummarizer
