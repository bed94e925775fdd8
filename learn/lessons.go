package learn

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/orket/orket"
	"github.com/orket/orket/classify"
	"github.com/orket/orket/config"
	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/lessons"
	"github.com/orket/orket/store"
	"github.com/orket/orket/verify"
)

// FlakyTag marks a lesson of a step that failed and then passed on the
// same tree: it weighs less and never fails a strict preflight.
const FlakyTag = lessons.FlakyTag

// lessonCodes are the outcomes that record lessons (docs/lessons.md).
var lessonCodes = map[orket.Code]bool{orket.EVerifyFailedReverted: true, orket.EVerifyFailedKept: true, orket.EVerifyFailed: true, orket.EDraftFailure: true}

// recordLessons classifies every failing required step of the run (the
// edit command, for E_DRAFT_FAILURE) and every step that passed only on
// retry (flaky, docs/verdicts.md), and appends one lesson for each.
func (r *run) recordLessons() error {
	rec := r.Record
	failed := lessonSteps(rec)
	if len(failed) == 0 {
		return nil
	}
	cfg := r.Config
	m := r.newLessonMaker()
	var batch []*lessons.Lesson
	for _, s := range failed {
		batch = append(batch, m.lesson(s))
	}
	if err := ensureLessonDir(r.Repo); err != nil {
		return err
	}
	store := &lessons.Store{Path: LessonPath(r.Repo, cfg), MaxPerAgent: cfg.Lessons.Retention.MaxEntriesPerAgent}
	if err := store.Append(batch...); err != nil {
		return err
	}
	r.newLessons = batch
	for i, l := range batch {
		rec.LessonIDs = append(rec.LessonIDs, l.ID)
		rec.Lessons = append(rec.Lessons, orket.LessonView{ID: l.ID, Step: failed[i].Name, Tags: l.Classification.Tags, Title: l.Advice.Title,
			FirstError: l.Classification.FirstError})
	}
	id := rec.LessonIDs[0]
	rec.LessonID = &id
	return autoPrune(store, cfg.Lessons.Retention, r.Env.Now())
}

// lessonSteps returns the steps of the run that get a lesson: the
// failing required steps (the edit command, for E_DRAFT_FAILURE) when the
// outcome records lessons, then every step that passed only on retry.
func lessonSteps(rec *orket.Record) []*verify.StepResult {
	var failed []*verify.StepResult
	switch {
	case !lessonCodes[rec.Code]:
	case rec.Code == orket.EDraftFailure && rec.Edit != nil:
		failed = append(failed, rec.Edit)
	default:
		failed = rec.FailedSteps()
	}
	for _, s := range rec.Steps {
		if s.Status == verify.Passed && s.Retries > 0 && s.FirstFailure != "" {
			failed = append(failed, s)
		}
	}
	return failed
}

// A lessonMaker writes the lessons of one run's steps: what they share
// is read once.
type lessonMaker struct {
	r        *run
	c        *classify.Classifier
	commands []string // the plan's verify commands
	headPost string
	now      time.Time
}

// newLessonMaker reads what the run's lessons share: the classifier, the
// plan's commands, HEAD after the run and the time, to the second.
func (r *run) newLessonMaker() *lessonMaker {
	m := &lessonMaker{r: r, c: classify.New(r.Config.Classify.Rules), commands: []string{}}
	for _, s := range r.Record.Plan.Steps {
		m.commands = append(m.commands, s.Command)
	}
	m.headPost = r.Repo.HeadCommit()
	m.now = r.Env.Now().UTC().Truncate(time.Second)
	return m
}

// lesson classifies step s's output and returns its lesson, sealed
// (redacted). A step that passed on retry is a flaky one's lesson, read
// from its first failure.
func (m *lessonMaker) lesson(s *verify.StepResult) *lessons.Lesson {
	r, rec := m.r, m.r.Record
	flaky := s.Status == verify.Passed
	// Classified as printed (in memory); stored redacted.
	text, tail := s.RawTail, s.OutputTail
	if flaky {
		text, tail = s.FirstFailure, s.FirstFailure
	}
	if text == "" {
		text = tail
	}
	// Evidence first: the lines the step's last passing run did not
	// print are what the rules look at first.
	cl := m.c.ClassifyStep(text, r.lastPassing(s), s.Command)
	cl.Checks = append(cl.Checks, sourceChecks(r.Repo.Root, text, cl.Tags, cl.Checks)...)
	advice := classify.AdviceFor(cl, s.Command)
	if c := causeLine(cl, r.Repo.Root); c != "" {
		// The cause names the hazard; the tag's title only its kind.
		advice.Title = c
	}
	tags := cl.Tags
	if flaky {
		tags = append(append([]string{}, tags...), FlakyTag)
		advice.Title = "Flaky step " + s.Name + ": " + advice.Title
		advice.SuggestedActions = append(advice.SuggestedActions,
			fmt.Sprintf("the step failed, then passed on retry %d on the same tree: fix or quarantine what makes it flaky", s.Retries))
	}
	l := &lessons.Lesson{
		CreatedAt: m.now, Command: "run",
		Request: lessons.Request{EditSource: rec.Request.EditSource, Argv: append([]string{}, rec.Request.Argv...),
			Instruction: rec.Request.Instruction, Scope: append([]string{}, rec.Request.Scope...),
			VerifyProfile: rec.Request.Profile, DryRun: rec.Request.DryRun, AutoConfirm: rec.Request.AutoConfirm,
			Agent: rec.Request.Agent, Task: rec.Request.Task},
		Repo: lessons.RepoContext{HeadPre: rec.HeadPre, HeadPost: m.headPost, DirtyAfterRevert: r.DirtyBefore},
		Plan: lessons.Plan{TouchSet: append([]string{}, rec.Plan.TouchSet...), TouchCount: rec.Plan.TouchCount},
		Verify: lessons.Verify{Profile: rec.Request.Profile, Commands: m.commands, FailedStep: s.Name, FailedCommand: s.Command, FailedDir: s.Dir,
			ExitCode: s.ExitCode, Signal: s.Signal, TimedOut: s.TimedOut, OutputTail: tail,
			OutputBytes: s.OutputBytes, DurationMS: s.DurationMS, Baseline: s.Baseline, BaselineNew: s.BaselineNew},
		Classification: lessons.Classification{Tags: tags, Confidence: cl.Confidence, Signals: cl.Signals, FirstError: cl.FirstError,
			Cause: causeLine(cl, r.Repo.Root), Location: locate(r.Repo.Root, s.Dir, cl.Cause, rec.Plan.TouchSet), Unclassified: cl.Unclassified},
		Advice:  advice,
		Outcome: lessons.Outcome{Code: string(rec.Code), RunID: rec.RunID},
	}
	adviseCallers(l)
	red := r.red.WithValues(r.stepEnvValues(s.Name)...)
	if !flaky {
		// The variables named in the output are read from it redacted:
		// a secret that looks like a name is not kept as one.
		l.Verify.Environment = r.envFingerprint(s.Name, s.Command, s.Dir, cl.Checks, red.Redact(text))
	}
	l.Seal(red)
	return l
}

// callersAction is what a lesson of lessons.BrokeCallers asks first.
const callersAction = "before you change a function's signature or what a module exports, find the code that calls it and update it in the same change (or keep the old form beside the new)"

// adviseCallers puts callersAction first in the advice of a lesson whose
// change broke the code that calls what it changed (the lesson's
// location names that code).
func adviseCallers(l *lessons.Lesson) {
	if lessons.BrokeCallers(l) && !slices.Contains(l.Advice.SuggestedActions, callersAction) {
		l.Advice.SuggestedActions = append([]string{callersAction}, l.Advice.SuggestedActions...)
	}
}

// autoPrune applies retention once the log holds more lessons than it
// should; small logs are not even read.
func autoPrune(s *lessons.Store, keep config.Retention, now time.Time) error {
	return store.PruneIfDue(s.Path, 1024, keep.MaxEntries, keep.MaxAge, now, func() error {
		b, err := os.ReadFile(s.Path)
		if err != nil {
			return err
		}
		if keep.MaxAge == 0 && bytes.Count(b, []byte("\n")) <= keep.MaxEntries {
			return nil // counted: not again before it grows by an eighth
		}
		_, err = pruneLessons(s, keep, now)
		return err
	})
}

// passingDir keeps the last passing output of each verify step, redacted
// and bounded like any tail, by the step's directory and command.
const passingDir = store.Dir + "/" + store.PassingDir

func passingFile(s *verify.StepResult) string {
	sum := sha256.Sum256([]byte(s.Dir + "\x00" + s.Command))
	return passingDir + "/" + hex.EncodeToString(sum[:8]) + ".txt"
}

// lastPassing returns what the step printed the last time it passed, or "".
func (r *run) lastPassing(s *verify.StepResult) string {
	root, err := r.Repo.FS()
	if err != nil || s.Name == "edit" && s == r.Record.Edit {
		return ""
	}
	b, err := root.ReadFile(passingFile(s))
	if err != nil {
		return ""
	}
	return string(b)
}

// keepPassing keeps the output of the steps that passed, for the next
// failure's evidence.
func (r *run) keepPassing() error {
	root, err := r.Repo.FS()
	if err != nil {
		return err
	}
	for _, s := range r.Record.Steps {
		if s.Status != verify.Passed {
			continue
		}
		if err := ensureOrketDir(root); err != nil {
			return err
		}
		if err := root.WriteFile(passingFile(s), []byte(s.OutputTail), 0o644, fsroot.Options{}); err != nil {
			return err
		}
	}
	return nil
}

// stepEnvValues are the values of a step's own env: in orket.yaml.
func (r *run) stepEnvValues(name string) []string {
	var out []string
	for _, s := range r.Profile.Steps {
		if s.Name == name {
			for _, v := range s.Env {
				out = append(out, v)
			}
		}
	}
	return out
}

// causeLine is a classification's cause line, "" when it has none, with
// the paths under the repository's root made relative to it (eslint and
// tracebacks print absolute ones).
func causeLine(cl *classify.Result, root string) string {
	if cl.Cause == nil {
		return ""
	}
	if root == "" || root == "/" {
		return cl.Cause.Line
	}
	return strings.ReplaceAll(cl.Cause.Line, strings.TrimSuffix(root, "/")+"/", "")
}
