package learn

import (
	"context"
	"time"

	"github.com/orket/orket"
	"github.com/orket/orket/config"
	"github.com/orket/orket/feedback"
	"github.com/orket/orket/redact"
	"github.com/orket/orket/txn"
)

// A CorrectRequest is a person's note on what they changed after a run
// kept its change (orket correct RUN --note, docs/guardrails.md).
type CorrectRequest struct {
	Repo   *txn.Repo
	Config *config.Config
	RunID  string // or a unique prefix; "" is the latest kept run
	Note   string
	By     string
	Env    orket.Env
}

// A CorrectResult is the correction recorded, and what it taught.
type CorrectResult struct {
	Code  orket.Code      `json:"code"`
	Entry *feedback.Entry `json:"entry"`
	// Proposals are new guardrails proposals the correction completed.
	Proposals []orket.ProposalView `json:"proposals,omitempty"`
	Warnings  []string             `json:"warnings,omitempty"`
}

// Correct records a human correction of a kept run: the note, and what
// the person changed since the run in the paths it touched, as a patch
// from the run's result to the tree now.
func Correct(ctx context.Context, req CorrectRequest) (_ *CorrectResult, err error) {
	defer func() { err = coded(err) }()
	if req.Note == "" {
		return nil, orket.Errorf(orket.EUsage, "say what you changed and why with --note \"...\"", "orket correct needs a note")
	}
	if req.Env.Now == nil {
		req.Env.Now = time.Now
	}
	repo := req.Repo
	rec, err := orket.KeptRun(repo, req.RunID, nil)
	if err != nil {
		return nil, err
	}
	cat, err := feedback.NewCategorizer(req.Config.Feedback.Keywords)
	if err != nil {
		return nil, &orket.Error{Code: orket.EConfigInvalid, Err: err, Msg: "feedback.keywords: " + err.Error(), Hint: "see docs/feedback.md"}
	}
	changed, patch, err := rec.ChangedSince(repo)
	if err != nil {
		return nil, err
	}
	var commands []string
	for _, s := range rec.Plan.Steps {
		commands = append(commands, s.Command)
	}
	e := cat.Entry(feedback.Rejection{Time: req.Env.Now().UTC(), RunID: rec.RunID, Task: rec.Request.Task, Agent: rec.Request.Agent,
		Reason: req.Note, By: req.By, Scope: rec.Request.Scope, Touched: changed,
		Run: feedback.RunContext{Profile: rec.Request.Profile, Toolchain: feedback.Toolchain(commands), Commands: commands, Paths: rec.Plan.TouchSet}})
	e.Type, e.Correction = feedback.TypeHumanCorrection, patch
	red := redact.New(redact.Options{Environ: req.Env.Environ})
	e.Seal(red)
	if err := feedback.OpenLog(OrketDir(repo)).Record(e, red); err != nil {
		return nil, internal("append to the feedback log", "check that .orket/memory is writable", err)
	}
	res := &CorrectResult{Code: orket.OK, Entry: e}
	ps, errs := learnFromFeedback(ctx, repo, req.Config, red, e, req.Env.Now())
	res.Proposals = proposalViews(ps)
	for _, err := range errs {
		res.Warnings = append(res.Warnings, err.Error())
	}
	return res, nil
}
