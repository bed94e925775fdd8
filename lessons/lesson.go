// Package lessons keeps orket's memory of failures: one JSON line per
// lesson in .orket/memory/failure_lessons.jsonl (schema
// orket.failure_lesson/v1), appended safely by concurrent writers, read
// back line by line, and scored against a run about to start. Memory is
// advisory: nothing here can widen a scope, skip a step or stop a revert.
package lessons

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/orket/orket/classify"
	"github.com/orket/orket/store"
)

// A Lesson is one failure, as recorded. Key names are fixed: other tools
// read the log. Readers ignore keys they do not know.
type Lesson struct {
	SchemaVersion  string          `json:"schema_version"`
	ID             string          `json:"id"`
	CreatedAt      time.Time       `json:"created_at"`
	Command        string          `json:"command"`
	Request        Request         `json:"request"`
	Repo           RepoContext     `json:"repo"`
	Plan           Plan            `json:"plan"`
	Verify         Verify          `json:"verify"`
	Classification Classification  `json:"classification"`
	Advice         classify.Advice `json:"advice"`
	Outcome        Outcome         `json:"outcome"`
}

// Request is the command context.
type Request struct {
	EditSource    string   `json:"edit_source"`
	Argv          []string `json:"argv,omitempty"`
	Instruction   string   `json:"instruction,omitempty"`
	Scope         []string `json:"scope"`
	VerifyProfile string   `json:"verify_profile"`
	DryRun        bool     `json:"dry_run"`
	AutoConfirm   bool     `json:"auto_confirm"`
	Agent         string   `json:"agent,omitempty"` // who made the edit (docs/verdicts.md)
	Task          string   `json:"task,omitempty"`  // the piece of work across attempts
}

// RepoContext is the repository context.
type RepoContext struct {
	HeadPre          string `json:"head_pre"`
	HeadPost         string `json:"head_post"`
	DirtyAfterRevert bool   `json:"dirty_after_revert"`
	RootFingerprint  string `json:"root_fingerprint,omitempty"`
}

// Plan is the plan context.
type Plan struct {
	TouchSet   []string `json:"touch_set"`
	TouchCount int      `json:"touch_count"`
}

// Verify is the verify context: the profile, and the step that failed.
type Verify struct {
	Profile       string   `json:"profile"`
	Commands      []string `json:"commands"`
	FailedStep    string   `json:"failed_step"`
	FailedCommand string   `json:"failed_command"`
	// FailedDir is the directory the failed command ran in (its step's
	// dir; "" for the root): the same command in another directory is
	// another command.
	FailedDir   string `json:"failed_dir,omitempty"`
	ExitCode    int    `json:"exit_code"`
	Signal      string `json:"signal,omitempty"`
	TimedOut    bool   `json:"timed_out,omitempty"`
	OutputTail  string `json:"output_tail"`
	OutputBytes int64  `json:"output_bytes"`
	DurationMS  int64  `json:"duration_ms"`
	// Baseline is how the step did on the tree without the change
	// (fails_too: the failure was there before; new_failures: it was,
	// and the change added BaselineNew).
	Baseline    string `json:"baseline,omitempty"`
	BaselineNew string `json:"baseline_new_failure,omitempty"`
	// Environment is what the failing step's environment was, as far as
	// the lesson can tell (docs/verdicts.md, Flaky steps): the variables
	// it names, the ports and addresses its checks name, its command's
	// executable. A later pass on the same content in another environment
	// resolves the lesson instead of making it flaky. It holds no value:
	// a variable is unset, or set with a keyed hash of its value.
	Environment []EnvState `json:"environment,omitempty"`
}

// An EnvState is one thing a step's environment is fingerprinted by, and
// its state then.
type EnvState struct {
	Kind  string `json:"kind"`  // env, port, tcp, file, command
	Name  string `json:"name"`  // the variable, port, address, path or command
	State string `json:"state"` // unset | set <keyed hash>; free | in use; ...
}

// Classification is what the rules said.
type Classification struct {
	Tags       []string          `json:"tags"`
	Confidence float64           `json:"confidence"`
	Signals    []classify.Signal `json:"signals"`
	FirstError string            `json:"first_error,omitempty"`
	// Cause is the line that says why the step failed, as a senior
	// engineer would quote it (see classify.Cause): the exception under a
	// test's header, the compiler's first error, the linter's line. It is
	// the lesson's title and what its fold is keyed on (see FoldKey).
	Cause string `json:"cause,omitempty"`
	// Location is where the failure lives, which is not where the run
	// that met it was scoped: the failing test and the repository's files
	// the cause names.
	Location *Location `json:"location,omitempty"`
	// Unclassified says, when no rule tags the failure, its cause line and
	// which families of tools it looked like, so a person knows to add a
	// rule.
	Unclassified *classify.Unclassified `json:"unclassified,omitempty"`
}

// A Location is where a failure lives.
type Location struct {
	Test  string   `json:"test,omitempty"`  // the failing test's id, as its runner names it
	Files []string `json:"files,omitempty"` // repository-relative, slash-separated, most relevant first
}

// Outcome is how the run ended.
type Outcome struct {
	Code  string `json:"code"`
	RunID string `json:"run_id"`
}

// Seal strips terminal escapes from the lesson's free text and redacts
// it, and sets its schema and its content-derived id. Call it last,
// before Append.
func (l *Lesson) Seal(r *Redactor) {
	l.SchemaVersion = store.LessonSchema
	l.stripANSI()
	l.Request.Argv = r.Argv(l.Request.Argv)
	l.Request.Instruction = r.Redact(l.Request.Instruction)
	l.Verify.Commands = r.All(l.Verify.Commands)
	l.Verify.FailedCommand = r.Redact(l.Verify.FailedCommand)
	l.Verify.OutputTail = r.Redact(l.Verify.OutputTail)
	for i := range l.Classification.Signals {
		l.Classification.Signals[i].Match = r.Redact(l.Classification.Signals[i].Match)
	}
	l.Classification.FirstError = r.Redact(l.Classification.FirstError)
	l.Classification.Cause = r.Redact(l.Classification.Cause)
	if loc := l.Classification.Location; loc != nil {
		loc.Test = r.Redact(loc.Test)
	}
	if u := l.Classification.Unclassified; u != nil {
		u.Cause = r.Redact(u.Cause)
		for i := range u.Families {
			u.Families[i].Text = r.Redact(u.Families[i].Text)
			u.Families[i].Why = r.Redact(u.Families[i].Why)
		}
	}
	l.Advice.Title = r.Redact(l.Advice.Title)
	l.Advice.Summary = r.Redact(l.Advice.Summary)
	l.Advice.SuggestedActions = r.All(l.Advice.SuggestedActions)
	l.ID = ""
	b, _ := json.Marshal(l)
	sum := sha256.Sum256(b)
	l.ID = hex.EncodeToString(sum[:16])
}

// stripANSI removes terminal escapes from the free text a tool may have
// coloured: the output tail, the first error, the matches, the advice.
// Lessons are stripped when they are sealed and again when they are read,
// so that logs written before escapes were stripped show none either.
func (l *Lesson) stripANSI() {
	l.Verify.OutputTail = StripANSI(l.Verify.OutputTail)
	l.Classification.FirstError = StripANSI(l.Classification.FirstError)
	l.Classification.Cause = StripANSI(l.Classification.Cause)
	if u := l.Classification.Unclassified; u != nil {
		u.Cause = StripANSI(u.Cause)
		for i := range u.Families {
			u.Families[i].Text = StripANSI(u.Families[i].Text)
			u.Families[i].Why = StripANSI(u.Families[i].Why)
		}
	}
	for i := range l.Classification.Signals {
		l.Classification.Signals[i].Match = StripANSI(l.Classification.Signals[i].Match)
	}
	l.Advice.Title = StripANSI(l.Advice.Title)
	l.Advice.Summary = StripANSI(l.Advice.Summary)
	l.Advice.SuggestedActions = stripAll(l.Advice.SuggestedActions)
}
