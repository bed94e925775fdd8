package orket

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/orket/orket/config"
	"github.com/orket/orket/internal/inert"
	"github.com/orket/orket/patch"
	"github.com/orket/orket/txn"
	"github.com/orket/orket/verify"
)

// A Problem is an outcome other than OK as a person or an agent reads it:
// its code and exit status, what happened, and what to do next.
type Problem struct {
	Code   Code
	Exit   int
	Msg    string         // what happened: lowercase, no final period
	Hint   string         // what to do next; may be empty
	Fields map[string]any // extra members of the JSON object (file, line, paths)
}

// Line is the problem as one line of text: CODE: what; what next.
func (p Problem) Line() string {
	s := string(p.Code) + ": " + p.Msg
	if p.Hint != "" {
		s += "; " + p.Hint
	}
	// A message names paths and quotes tools: one inert line.
	return inert.Text(strings.ReplaceAll(s, "\n", " "))
}

// A Coded error says what it is as a Problem: the typed errors of this
// package and of package learn, and *Error.
type Coded interface {
	error
	Problem() Problem
}

// Describe maps an error to its Problem (nil is OK). It is the one place where errors
// become codes and exit statuses: coded errors say what they are (package
// learn gives its domain's errors their codes as they leave it), errors
// of the transaction's domain packages are recognised here, and anything
// else is E_INTERNAL, with its text (never a stack trace).
func Describe(err error) Problem {
	if err == nil {
		return Problem{Code: OK}
	}
	var (
		pr   Coded
		ce   *config.Error
		ue   *txn.UnsupportedError
		le   *txn.LockedError
		re   *txn.RevisionError
		upe  *config.UnknownProfileError
		unsp *patch.UnsafePathError
		slp  *patch.SymlinkPathError
		pe   *patch.Error
		ste  *patch.StripError
	)
	var p Problem
	switch {
	case errors.As(err, &pr):
		p = pr.Problem()
	case errors.As(err, &ce):
		p = Problem{Code: EConfigInvalid, Msg: ce.Error(), Hint: ce.Hint, Fields: map[string]any{"file": ce.File, "line": ce.Line}}
	case errors.As(err, &upe):
		p = Problem{Code: EUsage, Msg: upe.Error(), Hint: "defined profiles: " + strings.Join(upe.Known, ", ")}
	case errors.As(err, &ue):
		p = Problem{Code: ERepoUnsupported, Msg: ue.Error(), Hint: "orket refuses what it cannot restore exactly; change the setting or run without orket"}
	case errors.As(err, &le):
		p = Problem{Code: ELocked, Msg: le.Error(), Hint: "wait for it to finish, or pass --wait"}
	case errors.As(err, &re):
		p = Problem{Code: EUsage, Msg: re.Error(), Hint: "name a branch, tag or commit that exists (git fetch first in CI)"}
	case errors.As(err, &unsp):
		p = Problem{Code: EWriteOutOfScope, Msg: "the patch writes outside the repository: " + unsp.Error(),
			Hint: "nothing was written; make the patch with repository-relative paths", Fields: map[string]any{"outside": []string{unsp.Path}}}
	case errors.As(err, &slp):
		p = Problem{Code: EWriteOutOfScope, Msg: "the patch writes through a symlink: " + slp.Error(),
			Hint: "nothing was written; patch the symlink's target path instead", Fields: map[string]any{"outside": []string{slp.Path}}}
	case errors.As(err, &ste):
		p = Problem{Code: EPatchInvalid, Msg: ste.Error(),
			Hint:   "nothing was written; make the patch with git diff, or from the repository's top directory with its names as git writes them (--- a/PATH, +++ b/PATH)",
			Fields: map[string]any{"paths": ste.Paths}}
	case errors.As(err, &pe):
		p = Problem{Code: EPatchInvalid, Msg: "the patch does not apply: " + pe.Error(),
			Hint: "nothing was written; regenerate the patch against the current tree (git diff --binary)"}
	case errors.Is(err, context.Canceled):
		// Interrupted while it waited (for a lock, say), with no more said.
		p = (&InterruptedError{During: "while it waited"}).Problem()
	default:
		p = Problem{Code: EInternal, Msg: err.Error(), Hint: "this is a bug in orket; please report it with the command you ran"}
	}
	if p.Code == EInternal {
		// A full, read-only or failing disk is the environment, not a
		// bug: its own code, and what to free.
		if hint, ok := ioHint(err); ok {
			p.Code, p.Exit = EIO, 0
			hint += ", then run the command again"
			if p.Hint == "" || strings.Contains(p.Hint, "bug in orket") {
				p.Hint = hint
			} else {
				p.Hint = hint + "; " + p.Hint
			}
		}
	}
	if p.Exit == 0 {
		p.Exit = p.Code.Exit()
	}
	return p
}

// ioHint says what to do about an error that a file system gave (no
// space, quota, read-only, an I/O error) before anything else, naming
// where when the error does; ok is false for any other error.
func ioHint(err error) (hint string, ok bool) {
	where := "the file system"
	var pe *os.PathError
	if errors.As(err, &pe) && filepath.Dir(pe.Path) != "." {
		where = "the file system holding " + filepath.Dir(pe.Path)
	}
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "free space on " + where + " (df shows how much is left)", true
	case errors.Is(err, syscall.EDQUOT):
		return "your disk quota on " + where + " is used up: free some of it (quota shows it)", true
	case errors.Is(err, syscall.EROFS):
		return where + " is read-only: run where it is writable, or remount it read-write", true
	case errors.Is(err, syscall.EIO):
		return "the device behind " + where + " reported an I/O error: check it (dmesg) before anything else", true
	}
	return "", false
}

// An Error is a coded outcome without more structure: what happened and
// what to do next.
type Error struct {
	Code   Code
	Msg    string
	Hint   string
	Err    error // the cause, for errors.Is and errors.As
	Fields map[string]any
}

// Errorf returns an *Error with a formatted message.
func Errorf(code Code, hint, format string, args ...any) *Error {
	return &Error{Code: code, Hint: hint, Msg: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }
func (e *Error) Problem() Problem {
	return Problem{Code: e.Code, Msg: e.Msg, Hint: e.Hint, Fields: e.Fields}
}

// internal wraps an error of an operation that should not fail, with what
// to do about it.
func internal(what, hint string, err error) *Error {
	return &Error{Code: EInternal, Msg: what + ": " + err.Error(), Hint: hint, Err: err}
}

// A scopeRequiredError is a mutating run without a scope.
type scopeRequiredError struct{}

func (*scopeRequiredError) Error() string { return "a mutating run needs a scope" }
func (e *scopeRequiredError) Problem() Problem {
	return Problem{Code: EScopeRequired, Msg: e.Error(), Hint: "pass --scope DIR (repeatable) or set scope in orket.yaml"}
}

// An outOfScopeError is an edit that writes outside its scope, or into
// git's configuration, hooks or info files.
type outOfScopeError struct {
	Outside  []string // paths outside the scope
	Guarded  []string // git files an edit may never write
	Reverted bool     // the edit had written, and was reverted
	Saved    string   // where the reverted change is kept, if it is
	// DuringVerify: the writes happened while the verify steps ran.
	DuringVerify bool
	// Denied: the kernel sandbox refused the writes (these lines of the
	// edit's output say which); nothing got out.
	Denied []string
	// Base: a verify-only run's --base (there is no edit: the changes
	// since that revision are the change under review).
	Base string
	// Ignored: git-ignored paths outside the scope the kernel sandbox
	// refused (build directories it did not open); WriteYAML is the
	// sandbox section that opens them.
	Ignored   []string
	WriteYAML string
}

func (e *outOfScopeError) Error() string {
	if len(e.Denied) > 0 && len(e.Outside) == 0 && len(e.Ignored) > 0 {
		return "the kernel sandbox refused the edit's writes to git-ignored paths outside its scope: " + strings.Join(e.Ignored, ", ")
	}
	if len(e.Denied) > 0 {
		if len(e.Outside) > 0 {
			return "the edit tried to write outside its scope: " + strings.Join(e.Outside, ", ") + " (the kernel sandbox refused)"
		}
		return "the edit tried to write outside its scope and the kernel sandbox refused: " + e.Denied[0]
	}
	all := append(append([]string{}, e.Outside...), e.Guarded...)
	if e.Base != "" {
		return "the changes since " + e.Base + " touch paths outside the scope: " + strings.Join(all, ", ")
	}
	if e.DuringVerify {
		return "verification wrote outside the scope: " + strings.Join(all, ", ")
	}
	return "the edit writes outside its scope: " + strings.Join(all, ", ")
}

func (e *outOfScopeError) Problem() Problem {
	hint := "nothing was written; widen --scope deliberately or change the edit"
	if e.Base != "" {
		return Problem{Code: EWriteOutOfScope, Msg: e.Error(),
			Hint: "no step ran; widen --scope deliberately, or take these paths out of the branch"}
	}
	if e.DuringVerify {
		hint = "the change was reverted; list generated paths steps may write in verify.writes in orket.yaml"
		if e.Saved != "" {
			hint += "; the change is kept in " + e.Saved
		}
		return Problem{Code: EWriteOutOfScope, Msg: e.Error(), Hint: hint}
	}
	if e.Reverted && len(e.Outside) == 0 && len(e.Ignored) > 0 {
		hint = "the change was reverted; these paths are ignored by git (a build or cache directory): not the edit's fault, and not counted against it. " +
			"To let the edit's tools write there, put this in orket.yaml: " + e.WriteYAML
		if e.Saved != "" {
			hint += "; the change is kept in " + e.Saved
		}
		return Problem{Code: EWriteOutOfScope, Msg: e.Error(), Hint: hint}
	}
	if e.Reverted {
		hint = "the change was reverted; widen --scope deliberately or change the edit"
		if len(e.Ignored) > 0 {
			hint += " (" + strings.Join(e.Ignored, ", ") + " are ignored by git: " + e.WriteYAML + " in orket.yaml opens them)"
		}
		for _, p := range e.Outside {
			if len(e.Denied) > 0 && (strings.HasPrefix(p, "/") || strings.HasPrefix(p, "../")) {
				hint += " (a cache the edit's tools need outside the repository goes in sandbox.write in orket.yaml)"
				break
			}
		}
		if e.Saved != "" {
			hint += "; it is kept in " + e.Saved
		}
	}
	return Problem{Code: EWriteOutOfScope, Msg: e.Error(), Hint: hint}
}

// A protectedWriteError is an edit that modified or deleted paths under
// protect:, even inside its scope (docs/transactions.md, Never allowed).
type protectedWriteError struct {
	Paths    []string
	Reverted bool   // the edit had written, and was reverted
	Saved    string // where the reverted change is kept
}

func (e *protectedWriteError) Error() string {
	return "the edit modifies protected paths: " + strings.Join(e.Paths, ", ")
}

func (e *protectedWriteError) Problem() Problem {
	hint := "nothing was written"
	if e.Reverted {
		hint = "the change was reverted"
		if e.Saved != "" {
			hint += " (kept in " + e.Saved + ")"
		}
	}
	hint += "; an edit may add files there, not change them: if the change is meant, a person runs it with --allow-protected GLOB"
	return Problem{Code: EWriteProtected, Msg: e.Error(), Hint: hint, Fields: map[string]any{"protected": e.Paths}}
}

// A sandboxUnavailableError is a run that requires the kernel sandbox
// (sandbox: required) on a kernel that has none.
type sandboxUnavailableError struct{ Reason string }

func (e *sandboxUnavailableError) Error() string {
	return "sandbox: required, but the kernel sandbox is unavailable: " + e.Reason
}

func (e *sandboxUnavailableError) Problem() Problem {
	return Problem{Code: ESandboxUnavailable, Msg: e.Error(),
		Hint: "nothing was written; run on a kernel with Landlock (Linux 5.19 or later, enabled), or set sandbox: auto in orket.yaml"}
}

// A touchsetEmptyError is a mutating run whose edit changed nothing.
type touchsetEmptyError struct{ Worktree bool }

func (e *touchsetEmptyError) Error() string {
	if e.Worktree {
		return "--worktree: there are no uncommitted changes"
	}
	return "the edit changed no file"
}

func (e *touchsetEmptyError) Problem() Problem {
	hint := "check that the edit command edits files in this repository"
	if e.Worktree {
		hint = "make the change first, or use -- EDIT-COMMAND"
	}
	return Problem{Code: ETouchsetEmpty, Msg: e.Error(), Hint: hint}
}

// A PreflightFailedError is a failed preflight check in strict mode.
type PreflightFailedError struct {
	Failed []string // each failed check, described
	Run    bool     // stopped a run (nothing was written)
}

func (e *PreflightFailedError) Error() string {
	msg := "preflight check failed: " + strings.Join(e.Failed, "; ")
	if e.Run {
		msg += "; nothing was written"
	}
	return msg
}

func (e *PreflightFailedError) Problem() Problem {
	hint := "satisfy the check before starting"
	if e.Run {
		hint = "satisfy the check and run again (strict mode comes from --strict-preflight, preflight.strict or ORKET_STRICT_PREFLIGHT=1)"
	}
	return Problem{Code: EPreflightFailed, Msg: e.Error(), Hint: hint}
}

// A ConfirmationError is a mutating run that was not confirmed.
type ConfirmationError struct {
	NoTerminal bool // there was no terminal to ask on
}

func (e *ConfirmationError) Error() string {
	if e.NoTerminal {
		return "a mutating run needs confirmation and stdin is not a terminal"
	}
	return "not confirmed; nothing was written"
}

func (e *ConfirmationError) Problem() Problem {
	hint := "answer y to proceed, or pass --yes"
	if e.NoTerminal {
		hint = "pass --yes to run without asking"
	}
	return Problem{Code: EConfirmationRequired, Msg: e.Error(), Hint: hint}
}

// A recoveryNeededError is an unfinished transaction found by a run.
type recoveryNeededError struct {
	Journal *txn.Journal // nil when the journal is unreadable
	Err     error        // why it is unreadable
}

func (e *recoveryNeededError) Error() string {
	if e.Journal == nil {
		return "an unfinished transaction's journal is unreadable: " + e.Err.Error()
	}
	j := e.Journal
	return fmt.Sprintf("run %s did not finish (it stopped during %s); its snapshot is %s", j.RunID, j.Phase, j.Ref)
}

func (e *recoveryNeededError) Unwrap() error { return e.Err }

func (e *recoveryNeededError) Problem() Problem {
	if e.Journal == nil {
		return Problem{Code: ERecoveryNeeded, Msg: e.Error(), Hint: "run orket recover, or orket recover --discard to forget it"}
	}
	return Problem{Code: ERecoveryNeeded, Msg: e.Error(),
		Hint:   "run orket recover to restore the tree as it was before that run, or orket recover --discard to keep the tree as it is",
		Fields: map[string]any{"snapshot_ref": e.Journal.Ref, "unfinished_run": e.Journal.RunID}}
}

// An unsavedChangeError is a change that should have been taken out of the
// tree but could not be saved first: durable before destructive, so it
// was left in place, with the snapshot, for the user to decide.
type unsavedChangeError struct {
	Cause error  // why the change was to be taken out (a failed step...)
	Err   error  // why it could not be saved
	Ref   string // the snapshot, kept
}

func (e *unsavedChangeError) Error() string {
	cause := ""
	if e.Cause != nil {
		cause = notTakenOut(e.Cause) + "; but "
	}
	return cause + "the change could not be saved (" + e.Err.Error() + "), so nothing was taken out: the tree holds the change and the snapshot " + e.Ref + " is kept"
}

func (e *unsavedChangeError) Unwrap() error { return e.Err }

// notTakenOut is what cause says, without the revert it would have led
// to: the change could not be saved, so it was not taken out.
func notTakenOut(cause error) string {
	var vf *verifyFailedError
	var df *draftFailedError
	switch {
	case errors.As(cause, &vf):
		c := *vf
		c.Disposition = ""
		return c.Error()
	case errors.As(cause, &df):
		return fmt.Sprintf("the edit command failed (%s)", df.Edit.ExitText())
	}
	msg := Describe(cause).Msg
	for _, s := range []string{"; the change was reverted", "; the tree was reverted", "; its changes were reverted"} {
		msg = strings.ReplaceAll(msg, s, "")
	}
	return msg
}

func (e *unsavedChangeError) Problem() Problem {
	fix := "fix what stopped the save"
	if hint, ok := ioHint(e.Err); ok {
		fix = hint
	}
	return Problem{Code: ERecoveryNeeded, Msg: e.Error(),
		Hint:   fix + ", then orket recover saves the change and restores the tree as it was before the run (orket recover --discard keeps the tree as it is)",
		Fields: map[string]any{"snapshot_ref": e.Ref}}
}

// A commitRefusedError is a passed change whose commit git refused: the
// change stays in the tree, uncommitted.
type commitRefusedError struct {
	Output string // what git (or a hook) said
}

func (e *commitRefusedError) Error() string {
	first, _, _ := strings.Cut(strings.TrimSpace(e.Output), "\n")
	if first == "" {
		first = "git commit failed"
	}
	return "verification passed and the change is kept in the tree, but the commit was refused: " + first
}

func (e *commitRefusedError) Problem() Problem {
	return Problem{Code: ECommitRefused, Msg: e.Error(),
		Hint: "see commit_refused in --json for all git said; fix it and commit the change yourself (it is staged)"}
}

// A revertError is a revert that failed or could not be proven; the
// snapshot is kept for recovery.
type revertError struct {
	Err   error
	Ref   string
	Saved string // where the change was saved before the revert, if it was
}

func (e *revertError) Error() string { return "the revert failed: " + e.Err.Error() }
func (e *revertError) Unwrap() error { return e.Err }
func (e *revertError) Problem() Problem {
	saved := ""
	if e.Saved != "" {
		saved = "; the change is saved in " + e.Saved
	}
	if errors.Is(e.Err, txn.ErrObjectsMissing) {
		// Not orket's failure: what it would put back was taken from the
		// object store meanwhile, and nothing was written. The
		// transaction stays open, as for a change it could not save.
		return Problem{Code: ERecoveryNeeded, Msg: e.Error(), Fields: map[string]any{"snapshot_ref": e.Ref},
			Hint: "the snapshot " + e.Ref + " is kept, but orket recover cannot restore it until those objects are back " +
				"(git fetch from another clone brings back committed ones); orket recover --discard keeps the tree as it is" + saved}
	}
	hint := "the snapshot is kept as " + e.Ref + "; run orket recover to retry, or restore by hand as its commit message says" + saved
	return Problem{Code: EInternal, Msg: e.Error(), Hint: hint, Fields: map[string]any{"snapshot_ref": e.Ref}}
}

// A draftFailedError is an edit command that exited non-zero.
type draftFailedError struct {
	Edit  *verify.StepResult
	Saved string // where the reverted change is kept, if it changed anything
}

func (e *draftFailedError) Error() string {
	return fmt.Sprintf("the edit command failed (%s); its changes were reverted", e.Edit.ExitText())
}

func (e *draftFailedError) Problem() Problem {
	return Problem{Code: EDraftFailure, Msg: e.Error(), Hint: "see the edit's output above (or edit.output_tail in --json)" + keptIn(e.Saved)}
}

// What happened to a change whose verification failed.
const (
	Reverted   = "reverted"    // the change was reverted
	Kept       = "kept"        // --keep-on-fail kept it
	TakenOut   = "taken out"   // --worktree: the uncommitted changes were taken out
	NotWritten = "verify-only" // a verify-only run: nothing was written
)

// A verifyFailedError is a run whose verification failed.
type verifyFailedError struct {
	Failed      []*verify.StepResult // the failing required steps
	Disposition string               // Reverted, Kept, TakenOut or NotWritten
	Saved       string               // where the failed change is kept
}

func (e *verifyFailedError) Error() string {
	var parts []string
	for _, s := range e.Failed {
		part := fmt.Sprintf("step %s failed (%s)", s.Name, s.ExitText())
		switch s.Baseline {
		case verify.FailsToo:
			part += " and fails without your change too"
		case verify.NewFailures:
			part += " and fails without your change too, but your change adds: " + s.BaselineNew
		}
		parts = append(parts, part)
	}
	msg := strings.Join(parts, ", ")
	switch e.Disposition {
	case Reverted:
		msg += "; the change was reverted"
	case TakenOut:
		msg += "; the uncommitted changes were taken out"
	case Kept:
		msg += "; the change was kept (--keep-on-fail)"
	}
	return msg
}

func (e *verifyFailedError) Problem() Problem {
	switch e.Disposition {
	case Kept:
		return Problem{Code: EVerifyFailedKept, Msg: e.Error(), Hint: "fix the tree, or restore it with git"}
	case NotWritten:
		return Problem{Code: EVerifyFailed, Msg: e.Error(), Hint: "fix what the failing step reports and run again"}
	}
	return Problem{Code: EVerifyFailedReverted, Msg: e.Error(), Hint: "fix what the failing step reports and run again" + keptIn(e.Saved)}
}

func keptIn(saved string) string {
	if saved == "" {
		return ""
	}
	return "; the failed change is kept in " + saved + " (git apply " + saved + " brings it back)"
}

// An InterruptedError is a run stopped by a signal (or a cancelled
// context). A caller that cancels a run's context on a signal gives an
// InterruptedError with Sig set as the cause (context.WithCancelCause).
type InterruptedError struct {
	Sig    os.Signal // nil: the context was cancelled without a signal as its cause
	During string    // "during the edit; the tree was reverted"
}

// interrupted returns the outcome of ctx's cancellation.
func interrupted(ctx context.Context, during string) *InterruptedError {
	e := &InterruptedError{During: during}
	var cause *InterruptedError
	if errors.As(context.Cause(ctx), &cause) {
		e.Sig = cause.Sig
	}
	return e
}

func (e *InterruptedError) name() string {
	switch e.Sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	}
	return "SIGINT"
}

func (e *InterruptedError) Error() string { return "interrupted by " + e.name() + " " + e.During }

func (e *InterruptedError) Problem() Problem {
	exit := 130
	if s, ok := e.Sig.(syscall.Signal); ok && s != syscall.SIGINT {
		exit = 128 + int(s)
	}
	return Problem{Code: EInterrupted, Exit: exit, Msg: e.Error(), Hint: "run again when ready"}
}
