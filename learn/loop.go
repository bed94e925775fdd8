// Package learn is orket's learning loop (docs/design.md): what a run is
// told before it starts and what it teaches when it ends (orket.Learner),
// and the use cases of the loop that people and agents run between runs:
// reviewing and correcting kept runs, tasks and escalations, guardrails
// proposals, the agent memory, the lessons themselves, sharing the memory
// through git. Each use case takes a request with the repository and its
// configuration and returns a typed result, the --json object of its
// command; its errors are coded (orket.Coded) as they leave the package.
package learn

import (
	"context"
	"os"
	"path/filepath"
	"strconv"

	"github.com/orket/orket"
	"github.com/orket/orket/guardrails"
	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/lessons"
	"github.com/orket/orket/redact"
	"github.com/orket/orket/store"
	"github.com/orket/orket/txn"
)

// Loop is orket's learning loop as a run meets it.
type Loop struct{}

var _ orket.Learner = Loop{}

// Advise is step 3 of a run: with memory.sync: auto, what the team
// learned comes first; then the advisories of past lessons and their
// preflight checks, what earlier reviews said of the area, the agent's
// guardrails and the task's attempts. An escalated task stops a mutating
// run.
func (Loop) Advise(ctx context.Context, info *orket.RunInfo) (orket.Learning, error) {
	r := &run{RunInfo: info, red: redact.New(redact.Options{Environ: info.Env.Environ})}
	r.autoSync(ctx, "start")
	return r, r.advise(ctx)
}

// run is what the loop keeps of one run.
type run struct {
	*orket.RunInfo
	red *redact.Redactor

	guardCheck     *guardrails.Checker
	guardrailsText string // the agent's approved guardrails as the edit reads them (inert)
	// exposure is what the edit was told, recorded; exposedTo the
	// guardrails version it names (nil: none). The run's votes follow
	// from them.
	exposure  *guardrails.Exposure
	exposedTo *guardrails.Version

	newLessons []*lessons.Lesson // what this run recorded
}

func (r *run) advise(ctx context.Context) error {
	a := Advise(AdviceQuery{Repo: r.Repo, Config: r.Config, Profile: r.Profile, Scope: r.Record.Request.Scope,
		TouchSet: r.touchSet(), Getenv: r.Env.Getenv, Now: r.Env.Now(), Strict: r.Strict})
	if a.Err != nil {
		r.Warn("cannot read lessons: " + a.Err.Error())
	}
	if len(a.Damaged) > 0 {
		r.Warn(damagedText(r.Config.Lessons.Path, a.Damaged))
	}
	r.Record.Advisories, r.Record.Preflight = a.Advisories, a.Preflight
	if !r.DryRun {
		r.reviewRejected(ctx)
	}
	r.Record.Feedback = r.feedbackAdvice()
	r.prepareGuardrails(ctx)
	return r.checkAttempts()
}

func damagedText(file string, d []lessons.Damaged) string {
	return file + ": skipped " + itoa(len(d)) + " damaged line(s) (first: line " + itoa(d[0].Line) + ")"
}

// Brief gives an edit command, under the lock, its agent's guardrails as
// they are now and what they were told (recorded, for the votes), and the
// advisories file: ORKET_ADVISORIES and ORKET_GUARDRAILS.
func (r *run) Brief(ctx context.Context) ([]string, func(), error) {
	r.exposeGuardrails(ctx)
	dir := filepath.Join(r.Repo.GitDir, "orket")
	adv := filepath.Join(dir, "advisories-"+r.Record.RunID+".md")
	guard := filepath.Join(dir, "guardrails-"+r.Record.RunID+".md")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	done := func() { os.Remove(adv); os.Remove(guard) }
	env := []string{"ORKET_ADVISORIES=" + adv}
	if r.guardrailsText != "" {
		// The edit reads the run's own copy of the version checked just
		// now: a sync replacing v<N>.md meanwhile changes nothing it is
		// given.
		if err := os.WriteFile(guard, []byte(r.guardrailsText), 0o644); err != nil {
			os.Remove(guard)
			return nil, nil, err
		}
		env = append(env, "ORKET_GUARDRAILS="+guard)
	}
	md := AdvisoriesMarkdown(r.Record, memoryMarkdown(r.Repo), r.guardrailsText)
	return env, done, os.WriteFile(adv, []byte(md), 0o644)
}

// Learn is the end of a run that took the lock: its lessons, the output
// of the steps that passed (the next failure's evidence), its verdict and
// what follows from it.
func (r *run) Learn(ctx context.Context, outcome error) error {
	if err := r.recordLessons(); err != nil {
		r.Warn("could not record the lesson: " + err.Error())
	}
	if err := r.recordRefusal(); err != nil {
		r.Warn("could not record the refusal: " + err.Error())
	}
	if err := r.keepPassing(); err != nil {
		r.Warn("could not keep the passing steps' output: " + err.Error())
	}
	return r.judge(ctx, outcome)
}

// Finish is memory.sync: auto's push, once the run's records are written.
func (r *run) Finish(ctx context.Context) bool {
	if r.Config.Memory.Sync != "auto" || r.DryRun {
		return false
	}
	r.autoSync(ctx, "end")
	return true
}

// ensureOrketDir creates .orket with its .gitignore (store.Ensure).
func ensureOrketDir(root *fsroot.Root) error { return store.Ensure(root) }

// nonNil is l, or an empty list for nil: JSON says [] rather than null.
func nonNil[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}

func itoa(i int) string { return strconv.Itoa(i) }

// lockToWrite takes the repository lock for a person's command that
// writes the tree (reject, override --apply): exclusive, not waiting, and
// refused while an interrupted transaction waits for orket recover.
func lockToWrite(ctx context.Context, repo *txn.Repo, h txn.Holder) (func(), error) {
	return orket.LockRepo(ctx, repo, true, false, h)
}

// touchSet is what the run's advisories are weighed against: the planned
// touch set (a patch's), else the paths the edit declared (--touch).
func (r *run) touchSet() []string {
	if len(r.Record.Plan.TouchSet) > 0 {
		return r.Record.Plan.TouchSet
	}
	return r.Record.Request.Touch
}
