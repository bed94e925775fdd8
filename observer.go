package orket

import (
	"io"

	"github.com/orket/orket/config"
	"github.com/orket/orket/verify"
)

// A Phase is a step of a run, in the order of docs/design.md (A run).
type Phase string

// The phases of a run. A verify-only run skips confirm, snapshot, edit
// and barrier and never reverts; a dry run stops after advise.
const (
	PhasePlan     Phase = "plan"     // resolve the edit source, plan the touch set and the steps
	PhaseAdvise   Phase = "advise"   // score past lessons, run preflight checks
	PhaseConfirm  Phase = "confirm"  // ask before a mutating run
	PhaseLock     Phase = "lock"     // take the repository lock
	PhaseSnapshot Phase = "snapshot" // make the tree's state durable
	PhaseEdit     Phase = "edit"     // apply the edit
	PhaseBarrier  Phase = "barrier"  // measure the touch set, check the scope
	PhaseVerify   Phase = "verify"   // run the profile's steps
	PhaseKeep     Phase = "keep"     // keep the change (and commit it)
	PhaseRevert   Phase = "revert"   // save the change, put the tree back
	PhaseBaseline Phase = "baseline" // verify the tree without the change (or reuse its result)
	PhaseRecord   Phase = "record"   // lessons and the run record
)

// An Observer hears a run as it goes: it draws progress, it never decides.
// Every method is called from the goroutine that called Execute, except
// StepOutput's writer, which the step's output arrives on.
type Observer interface {
	// Phase is called as each phase begins; rec holds what is known.
	Phase(p Phase, rec *Record)
	// Planned is called once the plan is known: the touch set where it
	// can be known before writing, and the steps.
	Planned(rec *Record)
	// Advised is called with the advisories and preflight results.
	Advised(rec *Record)
	// EditStarted and EditDone frame an edit command.
	EditStarted(rec *Record)
	EditDone(res *verify.StepResult)
	// Touched is called with the measured touch set once it passed the
	// barrier.
	Touched(rec *Record)
	// StepStarted, StepOutput and StepDone follow each verify step (and
	// StepOutput the edit command, as "edit").
	StepStarted(s config.Step)
	StepOutput(name string) io.Writer
	StepDone(res *verify.StepResult)
	// Baselined is called once the tree without the change was verified
	// (rec.Baseline), after PhaseBaseline.
	Baselined(rec *Record)
	// Recorded is called after the lessons and the run record are written.
	Recorded(rec *Record)
	// Warn reports something that went wrong without changing the outcome.
	Warn(msg string)
}

// NopObserver hears nothing; embed it to implement only some methods.
type NopObserver struct{}

func (NopObserver) Phase(Phase, *Record)        {}
func (NopObserver) Planned(*Record)             {}
func (NopObserver) Advised(*Record)             {}
func (NopObserver) EditStarted(*Record)         {}
func (NopObserver) EditDone(*verify.StepResult) {}
func (NopObserver) Touched(*Record)             {}
func (NopObserver) StepStarted(config.Step)     {}
func (NopObserver) StepOutput(string) io.Writer { return nil }
func (NopObserver) StepDone(*verify.StepResult) {}
func (NopObserver) Baselined(*Record)           {}
func (NopObserver) Recorded(*Record)            {}
func (NopObserver) Warn(string)                 {}
