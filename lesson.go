package orket

import (
	"bytes"
	"os"
	"time"

	"github.com/orket/orket/classify"
	"github.com/orket/orket/config"
	"github.com/orket/orket/lessons"
	"github.com/orket/orket/verify"
)

// lessonCodes are the outcomes that record lessons (SPEC 5.1).
var lessonCodes = map[Code]bool{EVerifyFailedReverted: true, EVerifyFailedKept: true, EVerifyFailed: true, EDraftFailure: true}

// recordLessons classifies every failing required step of the run (the
// edit command, for E_DRAFT_FAILURE) and appends one lesson for each.
func (r *Run) recordLessons(red *lessons.Redactor) error {
	rec := r.rec
	if !lessonCodes[rec.Code] {
		return nil
	}
	var failed []*verify.StepResult
	if rec.Code == EDraftFailure && rec.Edit != nil {
		failed = append(failed, rec.Edit)
	} else {
		failed = failedSteps(rec.Steps)
	}
	if len(failed) == 0 {
		return nil
	}
	cfg := r.req.Config
	c := classify.New(cfg.Classify.Rules)
	commands := []string{}
	for _, s := range rec.Plan.Steps {
		commands = append(commands, s.Command)
	}
	headPost := head(r.req.Repo)
	var batch []*lessons.Lesson
	now := r.req.Env.Now().UTC().Truncate(time.Second)
	for _, s := range failed {
		cl := c.Classify(s.OutputTail)
		l := &lessons.Lesson{
			CreatedAt: now, Command: "run",
			Request: lessons.Request{EditSource: rec.Request.EditSource, Argv: append([]string{}, rec.Request.Argv...),
				Instruction: rec.Request.Instruction, Scope: append([]string{}, rec.Request.Scope...),
				VerifyProfile: rec.Request.Profile, DryRun: rec.Request.DryRun, AutoConfirm: rec.Request.AutoConfirm},
			Repo: lessons.RepoContext{HeadPre: rec.HeadPre, HeadPost: headPost, DirtyAfterRevert: r.dirtyBefore},
			Plan: lessons.Plan{TouchSet: append([]string{}, rec.Plan.TouchSet...), TouchCount: rec.Plan.TouchCount},
			Verify: lessons.Verify{Profile: rec.Request.Profile, Commands: commands, FailedStep: s.Name, FailedCommand: s.Command,
				ExitCode: s.ExitCode, Signal: s.Signal, TimedOut: s.TimedOut, OutputTail: s.OutputTail,
				OutputBytes: s.OutputBytes, DurationMS: s.DurationMS},
			Classification: lessons.Classification{Tags: cl.Tags, Confidence: cl.Confidence, Signals: cl.Signals, FirstError: cl.FirstError},
			Advice:         classify.AdviceFor(cl, s.Command),
			Outcome:        lessons.Outcome{Code: string(rec.Code), RunID: rec.RunID},
		}
		l.Seal(red)
		batch = append(batch, l)
	}
	root, err := r.req.Repo.FS()
	if err != nil {
		return err
	}
	if err := ensureOrketDir(root); err != nil {
		return err
	}
	store := &lessons.Store{Path: LessonPath(r.req.Repo, cfg)}
	if err := store.Append(batch...); err != nil {
		return err
	}
	for i, l := range batch {
		rec.LessonIDs = append(rec.LessonIDs, l.ID)
		rec.Lessons = append(rec.Lessons, LessonView{ID: l.ID, Step: failed[i].Name, Tags: l.Classification.Tags, Title: l.Advice.Title})
	}
	id := rec.LessonIDs[0]
	rec.LessonID = &id
	return autoPrune(store, cfg.Lessons.Retention, r.req.Env.Now())
}

// autoPrune applies retention once the log holds more lessons than it
// should; small logs are not even read.
func autoPrune(s *lessons.Store, keep config.Retention, now time.Time) error {
	fi, err := os.Stat(s.Path)
	if err != nil || fi.Size() < int64(keep.MaxEntries)*1024 {
		return nil
	}
	b, err := os.ReadFile(s.Path)
	if err != nil || bytes.Count(b, []byte("\n")) <= keep.MaxEntries {
		return err
	}
	_, err = s.Prune(keep.MaxEntries, keep.MaxAge, now)
	return err
}

// redactRecord removes secrets from everything a run record (and --json)
// carries of the run's output and command line.
func redactRecord(rec *Record, red *lessons.Redactor) {
	rec.Request.Argv = red.All(rec.Request.Argv)
	rec.Request.Instruction = red.Redact(rec.Request.Instruction)
	rec.Error = red.Redact(rec.Error)
	for i := range rec.Plan.Steps {
		rec.Plan.Steps[i].Command = red.Redact(rec.Plan.Steps[i].Command)
	}
	for _, s := range append(append([]*verify.StepResult{}, rec.Steps...), rec.Edit) {
		if s != nil {
			s.OutputTail = red.Redact(s.OutputTail)
			s.Command = red.Redact(s.Command)
		}
	}
}
