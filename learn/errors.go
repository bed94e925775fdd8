package learn

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/orket/orket"
	"github.com/orket/orket/config"
	"github.com/orket/orket/guardrails"
	"github.com/orket/orket/store"
	"github.com/orket/orket/txn"
)

// coded gives the errors of the loop's domain packages (guardrails,
// memsync) their codes as they leave this package: an *orket.Error that
// keeps the error for errors.Is and errors.As. Coded errors and nil are
// returned as they are; anything else is left to orket.Describe.
func coded(err error) error {
	if err == nil {
		return nil
	}
	var c orket.Coded
	if errors.As(err, &c) {
		return err
	}
	if p, ok := syncProblem(err); ok {
		return &orket.Error{Code: p.Code, Msg: p.Msg, Hint: p.Hint, Fields: p.Fields, Err: err}
	}
	var p orket.Problem
	switch {
	case errors.Is(err, guardrails.ErrNotFound):
		p = orket.Problem{Code: orket.EUsage, Msg: err.Error(), Hint: "orket lessons review lists the pending proposals; an id may be shortened to a unique prefix"}
	case errors.Is(err, guardrails.ErrNoVersion):
		p = orket.Problem{Code: orket.EUsage, Msg: err.Error(), Hint: "orket guardrails log lists the versions (and which are still kept)"}
	case errors.Is(err, guardrails.ErrTransition):
		p = orket.Problem{Code: orket.EUsage, Msg: err.Error(), Hint: "only a proposed or deferred proposal can be approved or rejected; a rejected cluster comes back as a new proposal once it grows"}
	case errors.Is(err, guardrails.ErrReasonRequired):
		p = orket.Problem{Code: orket.EUsage, Msg: err.Error(), Hint: `say why with --reason "..."`}
	case errors.Is(err, guardrails.ErrNoChange):
		p = orket.Problem{Code: orket.EUsage, Msg: "that version's text is the current text: " + err.Error(), Hint: "orket guardrails log lists the versions; name another with --to N"}
	case errors.Is(err, guardrails.ErrNoSigner), errors.Is(err, guardrails.ErrSigning):
		p = orket.Problem{Code: orket.EUsage, Msg: err.Error(),
			Hint: "nothing was written; approvals are signed as git signs commits with ssh keys (docs/guardrails.md, Approvals and signatures)"}
	case errors.Is(err, guardrails.ErrUnapproved):
		p = orket.Problem{Code: orket.EUsage, Msg: err.Error(), Hint: "orket guardrails show N says why; roll back to an approved version"}
	case errors.Is(err, guardrails.ErrBadVersion):
		p = orket.Problem{Code: orket.EConfigInvalid, Msg: store.Dir + "/" + err.Error(),
			Hint: "fix that file's JSON, or restore it (git show refs/orket/memory:guardrails/... after orket sync, or a backup); v<N>.md holds the text"}
	case errors.Is(err, store.ErrSymlink):
		p = orket.Problem{Code: orket.ERepoUnsupported, Msg: err.Error(), Hint: "replace the symlink under .orket/guardrails with the file itself"}
	case errors.Is(err, guardrails.ErrAlreadyThere), errors.Is(err, guardrails.ErrLineGone):
		p = orket.Problem{Code: orket.EUsage, Msg: "the proposal no longer applies: " + err.Error(),
			Hint: `nothing was written; orket guardrails show has the current text; orket lessons reject ID --reason "..." closes the proposal`}
	default:
		return err
	}
	return &orket.Error{Code: p.Code, Msg: p.Msg, Hint: p.Hint, Fields: p.Fields, Err: err}
}

// internal wraps an error of an operation that should not fail, with what
// to do about it.
func internal(what, hint string, err error) *orket.Error {
	return &orket.Error{Code: orket.EInternal, Msg: what + ": " + err.Error(), Hint: hint, Err: err}
}

// An EscalatedError is a run of an escalated task: either the run whose
// rejection escalated it (Err is its own failure; the change was reverted
// and its lesson recorded), or a later run, stopped before the snapshot
// with nothing written (Refused).
type EscalatedError struct {
	Task, Agent string
	Report      string // the report's Markdown file
	// Elsewhere: the report is not in this clone (the escalation came
	// with orket sync; reports stay on the clone that wrote them).
	Elsewhere bool
	Attempts  int // consecutive rejections that escalated it (0: by hand)
	Refused   bool
	// Red names the steps that fail without any change, when that is
	// why the task went to a person (E_BASELINE_RED).
	Red []string
	// Sandbox names the git-ignored paths the kernel sandbox refused,
	// when that is why the task went to a person; SandboxWrite says so
	// for a run the escalation refused (its paths are in the report).
	Sandbox      []string
	SandboxWrite bool
	Err          error
}

func (e *EscalatedError) Error() string {
	switch {
	case e.Refused && e.SandboxWrite:
		return "task " + quoteTask(e.Task) + " is escalated to a person: the kernel sandbox refuses its edits' writes to git-ignored paths that sandbox.write does not open (" +
			reportNote(e.Task, e.Report, e.Elsewhere) + "); nothing was written"
	case len(e.Sandbox) > 0:
		return fmt.Sprintf("the kernel sandbox refused the edit's writes to git-ignored paths outside its scope (%s), %d runs in a row: orket.yaml's sandbox.write does not open them, and agent %s cannot; task %s is escalated to a person (report: %s); this change was reverted",
			strings.Join(e.Sandbox, ", "), e.Attempts, e.Agent, quoteTask(e.Task), e.Report)
	case e.Refused && len(e.Red) > 0:
		return "task " + quoteTask(e.Task) + " is escalated to a person: step " + strings.Join(e.Red, ", ") +
			" fails without any change (" + reportNote(e.Task, e.Report, e.Elsewhere) + "); nothing was written"
	case len(e.Red) > 0:
		return fmt.Sprintf("step %s failed without the change too, %d runs in a row: main or the environment is broken, not agent %s; task %s is escalated to a person (report: %s); this change was reverted",
			strings.Join(e.Red, ", "), e.Attempts, e.Agent, quoteTask(e.Task), e.Report)
	}
	if e.Refused {
		return "task " + quoteTask(e.Task) + " is escalated to a person (" + reportNote(e.Task, e.Report, e.Elsewhere) + "); nothing was written"
	}
	return fmt.Sprintf("agent %s was rejected %d times in a row on task %s: escalated to a person (%s); this change was reverted",
		e.Agent, e.Attempts, quoteTask(e.Task), reportNote(e.Task, e.Report, e.Elsewhere))
}

// reportNote names an escalation's report, and when it is not in this
// clone says so and where its attempts' failures are.
func reportNote(task, report string, elsewhere bool) string {
	if !elsewhere {
		return "report: " + report
	}
	return "report: " + report + ", written on another clone and not in this one; " +
		config.ShellQuote([]string{"orket", "lessons", "list", "--task", task}) + " shows its attempts' failures"
}

// reportElsewhere reports whether an escalation's report (as its task
// event names it) is missing from this clone's .orket/escalations: the
// escalation came with orket sync, its report did not.
func reportElsewhere(repo *txn.Repo, report string) bool {
	if report == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(mainRoot(repo), filepath.FromSlash(EscalationsDir), filepath.Base(filepath.FromSlash(report))))
	return errors.Is(err, os.ErrNotExist)
}

func (e *EscalatedError) Unwrap() error { return e.Err }

func (e *EscalatedError) Problem() orket.Problem {
	hint := "stop retrying: a person reads the report and runs orket task resolve " + config.ShellQuote([]string{e.Task}) + " --reason \"...\""
	code := orket.EEscalated
	if len(e.Sandbox) > 0 && e.Err != nil {
		// The refusal's own advice names the orket.yaml line to write.
		hint = "stop retrying: a person reads the report; " + orket.Describe(e.Err).Hint + "; then orket task resolve " +
			config.ShellQuote([]string{e.Task}) + " --reason \"...\""
	}
	if len(e.Red) > 0 {
		code = orket.EBaselineRed
		hint = "stop retrying: the repository fails without any change; a person fixes main or the environment (the report names the step) and runs orket task resolve " +
			config.ShellQuote([]string{e.Task}) + " --reason \"...\""
	}
	fields := map[string]any{"task": e.Task, "report": e.Report}
	if e.Elsewhere {
		fields["report_elsewhere"] = true // written on another clone
	}
	return orket.Problem{Code: code, Msg: e.Error(), Hint: hint, Fields: fields}
}

func quoteTask(t string) string { return strconv.Quote(t) }

// A NotifyError is an escalation.notify command that failed: the
// escalation stands.
type NotifyError struct{ Err error }

func (e *NotifyError) Error() string { return "escalation.notify failed: " + e.Err.Error() }
func (e *NotifyError) Unwrap() error { return e.Err }

// storeError is a failure to read or write the guardrails' files, unless
// it has a code of its own.
func storeError(err error) error {
	if err = coded(err); err == nil || orket.Describe(err).Code != orket.EInternal {
		return err
	}
	return &orket.Error{Code: orket.EInternal, Err: err, Msg: "the guardrails store: " + err.Error(), Hint: "check that .orket/guardrails and .orket/memory are readable and writable"}
}

// StoreError is storeError for the command line's guardrails commands.
func StoreError(err error) error { return storeError(err) }
