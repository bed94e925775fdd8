package orket

import (
	"context"
	"time"

	"github.com/orket/orket/config"
	"github.com/orket/orket/txn"
)

// A Learner is the learning loop as a run meets it (docs/design.md):
// asked for its advice before anything is written, and told the outcome
// at the end. Package learn is orket's; a Request without one is a run
// that is told nothing and learns nothing. Memory is advice, never
// authority: nothing a Learner does widens the scope, skips a step or
// keeps a change the run would revert.
type Learner interface {
	// Advise is step 3 of a run (advisories, preflight checks, earlier
	// reviews, the agent's guardrails and its attempts, written into
	// run.Record) and returns what the learner keeps of the run for its
	// later steps. An error stops the run before it writes anything (a
	// task escalated to a person); Learning may still be non-nil.
	Advise(ctx context.Context, run *RunInfo) (Learning, error)
}

// A Learning is a learner's part in one run, after its advice.
type Learning interface {
	// Brief is called under the repository lock just before an edit
	// command runs: it writes what the edit is told (its advisories, its
	// agent's guardrails) and returns the environment entries that name
	// them, and what to call once the edit is done.
	Brief(ctx context.Context) (env []string, done func(), err error)
	// Learn is called under the lock once the run has its outcome, before
	// its record is written: the lessons, the verdict, what the agent is
	// told next time. It returns the outcome, or the one that replaces it
	// (the run that escalates its task).
	Learn(ctx context.Context, outcome error) error
	// Finish is called after the lock is released (a push may wait on
	// the network); it reports whether it added to the record, which is
	// then written again.
	Finish(ctx context.Context) bool
}

// RunInfo is what a learner is told of a run. The run fills in what it
// learns as it goes: Environ once it holds the lock, Content, Notes and
// DirtyBefore once it has verified.
type RunInfo struct {
	Repo    *txn.Repo
	Config  *config.Config
	Profile *config.Resolved
	Record  *Record
	Env     Env
	Edit    string // the edit source: "command", "patch", "worktree" or "none"
	DryRun  bool
	Strict  bool      // a failed preflight check stops the run
	Started time.Time // when the run started
	Warn    func(msg string)

	// Environ is the environment of the edit command and the steps
	// (ORKET_RUN_ID, ORKET_SCOPE added).
	Environ []string
	// Content names the content of the tree the run verified ("" when it
	// cannot be named cheaply): a step that fails and passes on the same
	// content is flaky.
	Content string
	// Notes are the transaction's notes for the verdict (tests modified,
	// protected paths a person allowed).
	Notes []string
	// DirtyBefore: the tree had uncommitted changes before the run.
	DirtyBefore bool
}

// Mutating reports whether the run writes (it has an edit).
func (ri *RunInfo) Mutating() bool { return ri.Edit != "none" }
