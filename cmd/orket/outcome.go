package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// A Code is the stable machine name of an outcome (SPEC section 3.5). Codes
// never change meaning once released: agents and CI jobs branch on them.
type Code string

const (
	OK                    Code = "OK"
	EVerifyFailedReverted Code = "E_VERIFY_FAILED_REVERTED"
	EVerifyFailedKept     Code = "E_VERIFY_FAILED_KEPT"
	EVerifyFailed         Code = "E_VERIFY_FAILED"
	EDraftFailure         Code = "E_DRAFT_FAILURE"
	EUsage                Code = "E_USAGE"
	EConfigInvalid        Code = "E_CONFIG_INVALID"
	EGitRequired          Code = "E_GIT_REQUIRED"
	ERepoUnsupported      Code = "E_REPO_UNSUPPORTED"
	EConfirmationRequired Code = "E_CONFIRMATION_REQUIRED"
	EPatchInvalid         Code = "E_PATCH_INVALID"
	EScopeRequired        Code = "E_SCOPE_REQUIRED"
	ETouchsetEmpty        Code = "E_TOUCHSET_EMPTY"
	EWriteOutOfScope      Code = "E_WRITE_OUT_OF_SCOPE"
	EPreflightFailed      Code = "E_PREFLIGHT_FAILED"
	ELocked               Code = "E_LOCKED"
	ERecoveryNeeded       Code = "E_RECOVERY_NEEDED"
	EInterrupted          Code = "E_INTERRUPTED"
	EInternal             Code = "E_INTERNAL"
)

// codes is the one table of outcomes: exit status and a one-line meaning.
// E_INTERRUPTED's status depends on the signal (130 for SIGINT, 143 for
// SIGTERM); the table holds the SIGINT value.
var codes = map[Code]struct {
	Exit    int
	Meaning string
}{
	OK:                    {0, "the run passed; the change (if any) is kept"},
	EVerifyFailedReverted: {1, "verification failed; the change was reverted and a lesson recorded"},
	EVerifyFailedKept:     {1, "verification failed; the change was kept (--keep-on-fail) and a lesson recorded"},
	EVerifyFailed:         {1, "verification failed on a verify-only run; a lesson was recorded"},
	EDraftFailure:         {1, "the edit command exited non-zero; its changes were reverted and a lesson recorded"},
	EUsage:                {2, "the command line is wrong"},
	EConfigInvalid:        {2, "orket.yaml is invalid"},
	EGitRequired:          {2, "not inside a git work tree"},
	ERepoUnsupported:      {2, "the repository uses a setting orket cannot honour exactly"},
	EConfirmationRequired: {2, "a mutating run needs confirmation and there is no terminal"},
	EPatchInvalid:         {2, "the patch does not parse or does not apply; nothing was written"},
	EScopeRequired:        {3, "a mutating run needs --scope (or scope in orket.yaml)"},
	ETouchsetEmpty:        {3, "the edit changed nothing"},
	EWriteOutOfScope:      {3, "the edit wrote outside its scope; it was reverted"},
	EPreflightFailed:      {4, "a preflight check failed in strict mode; nothing was written"},
	ELocked:               {5, "another orket run holds the repository lock"},
	ERecoveryNeeded:       {5, "an interrupted transaction must be recovered first"},
	EInterrupted:          {130, "interrupted by SIGINT (130) or SIGTERM (143); the change was reverted"},
	EInternal:             {70, "orket failed internally"},
}

// exitStatus returns the process exit status for a code.
func exitStatus(c Code) int {
	if e, ok := codes[c]; ok {
		return e.Exit
	}
	return codes[EInternal].Exit
}

// exitStatusOf is an error's exit status: its own (E_INTERRUPTED after
// SIGTERM is 143) or its code's.
func exitStatusOf(e *Error) int {
	if e.Exit != 0 {
		return e.Exit
	}
	return exitStatus(e.Code)
}

// An Error is an outcome other than OK, as the user sees it: a code, what
// happened and what to do next. Commands return it; Main renders it.
type Error struct {
	Code Code
	Msg  string // what happened, lowercase, no final period
	Hint string // what to do next; may be empty
	Err  error  // the cause, kept for errors.Is/As
	// Exit overrides the code's exit status (E_INTERRUPTED after SIGTERM).
	Exit int
	// Fields are extra members of the JSON object (file, line, paths...).
	Fields map[string]any
	// Result, if set, is rendered as the JSON object instead of the bare
	// error members (a failed run still reports its plan and steps).
	Result any
}

func (e *Error) Error() string {
	if e.Hint == "" {
		return string(e.Code) + ": " + e.Msg
	}
	return string(e.Code) + ": " + e.Msg + "; " + e.Hint
}

func (e *Error) Unwrap() error { return e.Err }

func errorf(code Code, hint string, format string, args ...any) *Error {
	return &Error{Code: code, Hint: hint, Msg: fmt.Sprintf(format, args...)}
}

// asError turns any error into an *Error: ours pass through, anything else
// is E_INTERNAL with its text (never a stack trace).
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: EInternal, Msg: err.Error(), Err: err,
		Hint: "this is a bug in orket; please report it with the command you ran"}
}

// render writes the outcome of a command: the JSON object on stdout under
// --json, the one-line error on stderr otherwise. It returns the exit status.
func render(o *options, result any, err error) int {
	if err == nil {
		if o.json {
			if result == nil {
				result = map[string]any{"code": OK}
			}
			writeJSON(o.stdout, result)
		}
		return 0
	}
	e := asError(err)
	status := exitStatusOf(e)
	fmt.Fprintln(o.stderr, "orket: "+strings.ReplaceAll(e.Error(), "\n", " "))
	if o.json {
		var obj any = e.Result
		if obj == nil {
			m := map[string]any{"code": e.Code, "exit_status": status, "error": e.Msg}
			if e.Hint != "" {
				m["hint"] = e.Hint
			}
			for k, v := range e.Fields {
				m[k] = v
			}
			obj = m
		}
		writeJSON(o.stdout, obj)
	}
	return status
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		// Every result type is plain data; failing here is a programming
		// error, but the stdout contract still asks for one object.
		fmt.Fprintf(w, "{\"code\":%q,\"error\":%q}\n", EInternal, "encode result: "+err.Error())
	}
}
