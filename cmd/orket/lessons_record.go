package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/orket/orket/classify"
	"github.com/orket/orket/config"
	"github.com/orket/orket/lessons"
	"github.com/orket/orket/txn"
	"github.com/orket/orket/verify"
)

// lessonView is a recorded lesson as a run reports it.
type lessonView struct {
	ID    string   `json:"id"`
	Step  string   `json:"step"`
	Tags  []string `json:"tags"`
	Title string   `json:"title"`
}

// lessonCodes are the outcomes that record lessons (SPEC 5.1).
var lessonCodes = map[Code]bool{EVerifyFailedReverted: true, EVerifyFailedKept: true, EVerifyFailed: true, EDraftFailure: true}

// recordLessons classifies every failing required step of the run (the edit
// command, for E_DRAFT_FAILURE) and appends one lesson for each.
func recordLessons(o *options, r *txn.Repo, cfg *config.Config, res *runResult, red *lessons.Redactor) error {
	if !lessonCodes[res.Code] {
		return nil
	}
	var failed []*verify.StepResult
	if res.Code == EDraftFailure && res.Edit != nil {
		failed = append(failed, res.Edit)
	} else {
		failed = failedSteps(res.Steps)
	}
	if len(failed) == 0 {
		return nil
	}
	c := classify.New(cfg.Classify.Rules)
	var commands []string
	for _, s := range res.Plan.Steps {
		commands = append(commands, s.Command)
	}
	headPost := head(r)
	var batch []*lessons.Lesson
	now := time.Now().UTC().Truncate(time.Second)
	for _, s := range failed {
		cl := c.Classify(s.OutputTail)
		l := &lessons.Lesson{
			CreatedAt: now, Command: "run",
			Request: lessons.Request{EditSource: res.Request.EditSource, Argv: append([]string{}, res.Request.Argv...),
				Instruction: res.Request.Instruction, Scope: append([]string{}, res.Request.Scope...),
				VerifyProfile: res.Request.Profile, DryRun: res.Request.DryRun, AutoConfirm: res.Request.AutoConfirm},
			Repo: lessons.RepoContext{HeadPre: res.headPre, HeadPost: headPost, DirtyAfterRevert: res.dirtyBefore},
			Plan: lessons.Plan{TouchSet: append([]string{}, res.Plan.TouchSet...), TouchCount: res.Plan.TouchCount},
			Verify: lessons.Verify{Profile: res.Request.Profile, Commands: commands, FailedStep: s.Name, FailedCommand: s.Command,
				ExitCode: s.ExitCode, Signal: s.Signal, TimedOut: s.TimedOut, OutputTail: s.OutputTail,
				OutputBytes: s.OutputBytes, DurationMS: s.DurationMS},
			Classification: lessons.Classification{Tags: cl.Tags, Confidence: cl.Confidence, Signals: cl.Signals, FirstError: cl.FirstError},
			Advice:         classify.AdviceFor(cl, s.Command),
			Outcome:        lessons.Outcome{Code: string(res.Code), RunID: res.RunID},
		}
		if l.Verify.Commands == nil {
			l.Verify.Commands = []string{}
		}
		l.Seal(red)
		batch = append(batch, l)
	}
	store := &lessons.Store{Path: lessonPath(r, cfg)}
	if err := ensureOrketDir(r); err != nil {
		return err
	}
	if err := store.Append(batch...); err != nil {
		return err
	}
	for i, l := range batch {
		res.LessonIDs = append(res.LessonIDs, l.ID)
		res.Lessons = append(res.Lessons, lessonView{ID: l.ID, Step: failed[i].Name, Tags: l.Classification.Tags, Title: l.Advice.Title})
	}
	id := res.LessonIDs[0]
	res.LessonID = &id
	autoPrune(store, cfg.Lessons.Retention)
	return nil
}

func lessonPath(r *txn.Repo, cfg *config.Config) string {
	p := cfg.Lessons.Path
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.Root, filepath.FromSlash(p))
	}
	return p
}

// autoPrune applies retention once the log holds more lessons than it
// should; small logs are not even read.
func autoPrune(s *lessons.Store, keep config.Retention) {
	fi, err := os.Stat(s.Path)
	if err != nil || fi.Size() < int64(keep.MaxEntries)*1024 {
		return
	}
	b, err := os.ReadFile(s.Path)
	if err != nil || bytes.Count(b, []byte("\n")) <= keep.MaxEntries {
		return
	}
	s.Prune(keep.MaxEntries, keep.MaxAge, time.Now())
}

func head(r *txn.Repo) string {
	ref, err := r.Git.Head()
	if err != nil {
		return ""
	}
	return ref.Hash().String()
}

// redactRecord removes secrets from everything a run record (and --json)
// carries of the run's output and command line.
func redactRecord(res *runResult, red *lessons.Redactor) {
	res.Request.Argv = red.All(res.Request.Argv)
	res.Request.Instruction = red.Redact(res.Request.Instruction)
	res.Error = red.Redact(res.Error)
	for i := range res.Plan.Steps {
		res.Plan.Steps[i].Command = red.Redact(res.Plan.Steps[i].Command)
	}
	for _, s := range append(append([]*verify.StepResult{}, res.Steps...), res.Edit) {
		if s != nil {
			s.OutputTail = red.Redact(s.OutputTail)
			s.Command = red.Redact(s.Command)
		}
	}
}

func printLessons(p *runPrinter, res *runResult) {
	for _, l := range res.Lessons {
		tags := "no tag"
		if len(l.Tags) > 0 {
			tags = fmt.Sprint(l.Tags)
		}
		p.line("  lesson %.8s recorded for %s: %s %s", l.ID, l.Step, l.Title, tags)
	}
}
