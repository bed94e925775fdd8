package guardrails

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/orket/orket/classify"
	"github.com/orket/orket/feedback"
	"github.com/orket/orket/lessons"
	"github.com/orket/orket/verdict"
)

// A Type is a feedback entry's type (docs/guardrails.md, Feedback
// entries).
type Type string

// The feedback types.
const (
	ValidationFailure Type = "validation_failure" // a verify step that is not a test failed (vet, lint, build, the edit command)
	TestFailure       Type = "test_failure"       // a test step failed
	ReviewRejection   Type = "review_rejection"   // a reviewer rejected a kept run (orket reject)
	HumanCorrection   Type = "human_correction"   // a person changed what a kept run left (orket correct)
	QualityScore      Type = "quality_score"      // a verdict short of APPROVE
	SecurityFinding   Type = "security_finding"   // reserved: nothing produces it yet
)

// A Severity is how much a feedback entry matters.
type Severity string

// The severities, lowest first.
const (
	Low      Severity = "low"
	Medium   Severity = "medium"
	High     Severity = "high"
	Critical Severity = "critical"
)

// Rank orders severities: low 1 ... critical 4; anything else 0.
func (s Severity) Rank() int {
	switch s {
	case Low:
		return 1
	case Medium:
		return 2
	case High:
		return 3
	case Critical:
		return 4
	}
	return 0
}

// Tags whose failure says the code is wrong.
var codeTags = map[string]bool{classify.TestAssertionFailed: true, classify.TypeError: true}

// SeverityRules documents SeverityOf, first matching rule wins.
const SeverityRules = `critical: a security finding, or a verdict of ESCALATE (code E_ESCALATED)
low: a failure tagged flaky, one that fails without the change too (baseline fails_too, or a REJECT not counted), a CONDITIONAL verdict
high: a review rejection; a failure of the edit command itself (step "edit"); a failure tagged test_assertion_failed or type_error; a counted REJECT
medium: everything else (a human correction; environment tags: missing_env_var, missing_dependency, port_in_use, db_connection_failed, build_config_error; lint_error; an unclassified failure)`

// SeverityInput is what severity is derived from.
type SeverityInput struct {
	Type        Type
	Tags        []string
	Step        string // the failed step ("edit": the edit command)
	Verdict     string // APPROVE, CONDITIONAL, REJECT, ESCALATE, or "" (a lesson alone)
	Code        string // the run's outcome code (E_ESCALATED counts as ESCALATE)
	Counted     bool   // a REJECT that counts against the agent
	PreExisting bool   // the step fails without the change too
}

// SeverityOf applies the fixed rules of SeverityRules.
func SeverityOf(in SeverityInput) Severity {
	has := func(set map[string]bool) bool {
		for _, t := range in.Tags {
			if set[t] {
				return true
			}
		}
		return false
	}
	flaky := false
	for _, t := range in.Tags {
		if t == lessons.FlakyTag {
			flaky = true
		}
	}
	switch {
	case in.Type == SecurityFinding, in.Verdict == verdict.Escalate, in.Code == "E_ESCALATED":
		return Critical
	case flaky, in.PreExisting, in.Verdict == verdict.Reject && !in.Counted && in.Type == QualityScore,
		in.Verdict == verdict.Conditional:
		return Low
	case in.Type == ReviewRejection, in.Step == lessons.EditStep, has(codeTags),
		in.Verdict == verdict.Reject && in.Counted:
		return High
	}
	return Medium
}

// Context is where a feedback entry arose.
type Context struct {
	Task         string `json:"task,omitempty"`
	ArtifactPath string `json:"artifact_path,omitempty"`
	// Iteration is the attempt: 1 for a task's first try, n for the
	// n-th consecutive counted rejection's run (0: unknown).
	Iteration int      `json:"iteration,omitempty"`
	RunID     string   `json:"run_id,omitempty"`
	Scope     []string `json:"scope,omitempty"`
}

// Details say what went wrong.
type Details struct {
	ErrorMessage string `json:"error_message,omitempty"`
	Expected     string `json:"expected,omitempty"`
	Actual       string `json:"actual,omitempty"`
	Correction   string `json:"correction,omitempty"`
}

// A Fold names one failure across runs (docs/lessons.md, Scoring): the
// failed command in its directory, the tags, and the first error line
// normalised.
type Fold struct {
	Dir        string   `json:"dir,omitempty"`
	Command    string   `json:"command"`
	Step       string   `json:"step,omitempty"` // shown, not part of the key
	Tags       []string `json:"tags,omitempty"`
	FirstError string   `json:"first_error,omitempty"` // normalised
}

// FoldOf builds a fold; tags are sorted and the first error normalised
// (classify.Normalize of the line without terminal escapes).
func FoldOf(dir, command string, tags []string, firstError string) Fold {
	t := append([]string(nil), tags...)
	sort.Strings(t)
	return Fold{Dir: dir, Command: command, Tags: t, FirstError: classify.Normalize(classify.StripANSI(firstError))}
}

// AdvisoryFold is the fold of a lesson advisory (lessons.Advisory), for
// an Exposure.
func AdvisoryFold(a lessons.Advisory) Fold {
	f := FoldOf(a.FailedDir, a.FailedCommand, a.Tags, a.FirstError)
	f.Step = a.FailedStep
	return f
}

// Empty reports whether f names no failure.
func (f Fold) Empty() bool { return f.Command == "" && len(f.Tags) == 0 && f.FirstError == "" }

// Key is the fold's stable key: "fk-" and 16 hex digits of a hash of
// dir, command, tags and first error.
func (f Fold) Key() string { return foldKey(f.Dir, f) }

// KeyNoDir is the key without the directory: evaluations do not say
// which directory a step ran in, so a failure known from an evaluation
// alone is matched this way.
func (f Fold) KeyNoDir() string { return foldKey("", f) }

func foldKey(dir string, f Fold) string {
	h := sha256.New()
	h.Write([]byte(dir + "\x00" + f.Command + "\x00" + strings.Join(f.Tags, "\x1f") + "\x00" + f.FirstError))
	return "fk-" + hex.EncodeToString(h.Sum(nil)[:8])
}

// Where the signals come from.
const (
	FromLessons     = "lesson"
	FromFeedbackLog = "feedback"
	FromEvaluations = "evaluation"
)

// A Signal is one feedback entry (docs/guardrails.md, Feedback entries:
// an agent, a type, a severity, a context and details), normalised from a
// lesson, a feedback log entry or an evaluation: what proposals are
// clustered from.
type Signal struct {
	ID       string    `json:"id"`     // the source record's id
	Source   string    `json:"source"` // lesson, feedback, evaluation
	Agent    string    `json:"agent"`
	Time     time.Time `json:"timestamp"`
	Type     Type      `json:"type"`
	Severity Severity  `json:"severity"`
	Context  Context   `json:"context"`
	Details  Details   `json:"details"`
	Tags     []string  `json:"tags,omitempty"`
	// Fold is the failure, for lessons and failed evaluations.
	Fold Fold `json:"fold,omitzero"`
	// Category is a review's category (feedback), or "note:" and a
	// CONDITIONAL verdict's first note, normalised.
	Category string `json:"category,omitempty"`
	// Action is what to do about it: the lesson's first suggested
	// action, the feedback's learned action.
	Action string `json:"action,omitempty"`
	Title  string `json:"title,omitempty"`
	// Confidence is how sure the source is: the classification's for a
	// lesson (0.5 when untagged), 1 for a person's word, 0.7 for a
	// verdict.
	Confidence float64 `json:"confidence"`
}

// SignalFromLesson normalises a lesson: a test_failure when the failed
// step is a test (by its name or command, or tagged
// test_assertion_failed), else a validation_failure.
func SignalFromLesson(l *lessons.Lesson) Signal {
	agent := l.Request.Agent
	if agent == "" {
		agent = "default"
	}
	typ := ValidationFailure
	if isTest(l.Verify.FailedStep, l.Verify.FailedCommand, l.Classification.Tags) {
		typ = TestFailure
	}
	first := classify.StripANSI(l.Classification.FirstError)
	msg := first
	if msg == "" {
		msg = l.Advice.Title
	}
	actual := "exit " + itoa(l.Verify.ExitCode)
	switch {
	case l.Verify.TimedOut:
		actual = "timed out"
	case l.Verify.Signal != "":
		actual = "killed by " + l.Verify.Signal
	}
	artifact := lessons.ErrorFile(first)
	if artifact == "" && len(l.Plan.TouchSet) > 0 {
		artifact = l.Plan.TouchSet[0]
	}
	conf := l.Classification.Confidence
	if len(l.Classification.Tags) == 0 || conf <= 0 {
		conf = 0.5
	}
	s := Signal{
		ID: l.ID, Source: FromLessons, Agent: agent, Time: l.CreatedAt.UTC(), Type: typ,
		Context: Context{Task: l.Request.Task, ArtifactPath: artifact, RunID: l.Outcome.RunID, Scope: l.Request.Scope},
		Details: Details{ErrorMessage: oneLine(msg, 300), Expected: "`" + l.Verify.FailedCommand + "` succeeds", Actual: actual},
		Tags:    append([]string(nil), l.Classification.Tags...),
		// One hazard wherever it was met: keyed on the masked cause, not
		// the step's directory.
		Fold:  FoldOf("", l.Verify.FailedCommand, l.Classification.Tags, lessons.FoldCause(l)),
		Title: l.Advice.Title, Confidence: conf,
	}
	s.Fold.Step = l.Verify.FailedStep
	if len(l.Advice.SuggestedActions) > 0 {
		s.Action = l.Advice.SuggestedActions[0]
	}
	s.Severity = SeverityOf(SeverityInput{Type: typ, Tags: s.Tags, Step: l.Verify.FailedStep, Code: l.Outcome.Code,
		PreExisting: l.Verify.Baseline == "fails_too"})
	return s
}

// testCommands are programs and subcommands that run tests.
var testWords = []string{"test", "tests", "pytest", "jest", "vitest", "mocha", "rspec", "phpunit", "ctest", "tox", "nox", "karma", "ava", "bats"}

func isTest(step, command string, tags []string) bool {
	for _, t := range tags {
		if t == classify.TestAssertionFailed {
			return true
		}
	}
	words := strings.FieldsFunc(strings.ToLower(step+" "+command), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_')
	})
	for _, w := range words {
		for _, t := range testWords {
			if w == t {
				return true
			}
		}
	}
	return false
}

// SignalFromFeedback normalises a feedback log entry (a review
// rejection or a human correction; another type keeps its name).
func SignalFromFeedback(e *feedback.Entry) Signal {
	agent := e.Agent
	if agent == "" {
		agent = "default"
	}
	typ := Type(e.Type)
	artifact := e.Item
	if len(e.Touched) > 0 {
		artifact = e.Touched[0]
	}
	s := Signal{
		ID: e.ID, Source: FromFeedbackLog, Agent: agent, Time: e.Time.UTC(), Type: typ,
		Context:  Context{Task: e.Task, ArtifactPath: artifact, RunID: e.RunID, Scope: e.Scope},
		Category: string(e.Category), Action: e.Action, Confidence: 1,
	}
	if s.Context.Scope == nil && e.Item != "" {
		s.Context.Scope = []string{e.Item}
	}
	switch typ {
	case HumanCorrection:
		s.Details = Details{ErrorMessage: oneLine(e.Reason, 300), Expected: e.Action, Correction: oneLine(e.Reason, 300)}
	default:
		s.Details = Details{ErrorMessage: oneLine(e.Reason, 300), Expected: e.Action, Actual: "rejected: " + e.Item}
	}
	if e.Learning != "" {
		s.Action = e.Learning
	}
	s.Severity = SeverityOf(SeverityInput{Type: typ})
	return s
}

// SignalFromEvaluation normalises a verdict short of APPROVE (a
// quality_score entry); ok is false for an APPROVE and for a
// verify-only run, which are not feedback.
func SignalFromEvaluation(e *verdict.Evaluation) (s Signal, ok bool) {
	if e.Verdict == verdict.Approve || e.Verdict == "" || e.EditSource == "none" {
		return Signal{}, false
	}
	agent := e.Agent
	if agent == "" {
		agent = "default"
	}
	id := e.ID
	if id == "" {
		id = "ev-" + e.RunID
	}
	s = Signal{
		ID: id, Source: FromEvaluations, Agent: agent, Time: e.Time.UTC(), Type: QualityScore,
		Context: Context{Task: e.Task, RunID: e.RunID, Scope: taskScope(e.Task)},
		Details: Details{ErrorMessage: oneLine(firstNonEmpty(e.FirstError, e.Summary), 300), Expected: verdict.Approve,
			Actual: e.Verdict + " " + itoa(e.Score)},
		Tags: append([]string(nil), e.Tags...), Confidence: 0.7,
	}
	if e.FailedCommand != "" || len(e.Tags) > 0 {
		fold := e.Fold
		if fold == "" {
			fold = lessons.Mask(classify.StripANSI(e.FirstError))
		}
		s.Fold = FoldOf("", e.FailedCommand, e.Tags, fold)
		s.Fold.Step = e.FailedStep
	} else if e.Verdict == verdict.Conditional && len(e.Notes) > 0 {
		s.Category = "note:" + noteKey(e.Notes[0])
		s.Title = e.Notes[0]
	}
	s.Severity = SeverityOf(SeverityInput{Type: QualityScore, Tags: e.Tags, Step: e.FailedStep, Verdict: e.Verdict,
		Code: e.Code, Counted: e.Counted})
	return s, true
}

// noteKey makes a verdict note comparable: lower case, digits and what
// is in parentheses dropped ("step test passed only on retry 2 (flaky)"
// and "... retry 1 ..." are one note).
func noteKey(n string) string {
	n = strings.ToLower(n)
	if i := strings.IndexByte(n, '('); i > 0 {
		n = n[:i]
	}
	n = strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return -1
		}
		return r
	}, n)
	return strings.Join(strings.Fields(n), " ")
}

// taskScope is the scope of a task named by verdict.TaskKey
// ("scope:pkg/api,pkg/db profile:quick"), else nil.
func taskScope(task string) []string {
	rest, ok := strings.CutPrefix(task, "scope:")
	if !ok {
		return nil
	}
	sc, _, _ := strings.Cut(rest, " profile:")
	if sc == "" {
		return nil
	}
	return strings.Split(sc, ",")
}

// A Collector turns the three logs into signals: add lessons, feedback
// entries and evaluations in any order, then take Signals.
type Collector struct {
	// Agent keeps only this agent's records ("": every agent).
	Agent   string
	signals []Signal
	evals   []*evalStep // for iterations
	seen    map[string]bool
}

type evalStep struct {
	runID, task, agent, verdict string
	counted                     bool
	time                        time.Time
}

func (c *Collector) add(s Signal) {
	if c.Agent != "" && s.Agent != c.Agent {
		return
	}
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	if c.seen[s.ID] {
		return
	}
	c.seen[s.ID] = true
	c.signals = append(c.signals, s)
}

// AddLesson adds a lesson.
func (c *Collector) AddLesson(l *lessons.Lesson) { c.add(SignalFromLesson(l)) }

// AddFeedback adds a feedback entry.
func (c *Collector) AddFeedback(e *feedback.Entry) { c.add(SignalFromFeedback(e)) }

// AddEvaluation adds an evaluation: it numbers attempts, and a verdict
// short of APPROVE is a signal.
func (c *Collector) AddEvaluation(e *verdict.Evaluation) {
	agent := e.Agent
	if agent == "" {
		agent = "default"
	}
	if c.Agent != "" && agent != c.Agent {
		return
	}
	if e.EditSource != "none" {
		c.evals = append(c.evals, &evalStep{runID: e.RunID, task: e.Task, agent: agent, verdict: e.Verdict, counted: e.Counted, time: e.Time})
	}
	if s, ok := SignalFromEvaluation(e); ok {
		c.add(s)
	}
}

// Signals returns the signals oldest first (ties by id), each id once,
// with iterations numbered from the evaluations: a run's attempt is 1
// plus the counted REJECTs of its task and agent since the last verdict
// that was not one. An evaluation's signal is dropped when a lesson of
// the same run says the same thing (the lesson is the richer record).
func (c *Collector) Signals() []Signal {
	sort.SliceStable(c.evals, func(i, j int) bool { return c.evals[i].time.Before(c.evals[j].time) })
	iter := map[string]int{}
	streak := map[string]int{}
	for _, e := range c.evals {
		k := e.task + "\x00" + e.agent
		iter[e.runID] = streak[k] + 1
		if (e.verdict == verdict.Reject || e.verdict == verdict.Escalate) && e.counted {
			streak[k]++
		} else if e.verdict == verdict.Approve || e.verdict == verdict.Conditional {
			streak[k] = 0
		}
	}
	lessonRuns := map[string]bool{}
	for _, s := range c.signals {
		if s.Source == FromLessons && s.Context.RunID != "" {
			lessonRuns[s.Context.RunID] = true
		}
	}
	out := make([]Signal, 0, len(c.signals))
	for _, s := range c.signals {
		if s.Source == FromEvaluations && !s.Fold.Empty() && lessonRuns[s.Context.RunID] {
			continue
		}
		if n, ok := iter[s.Context.RunID]; ok && s.Context.RunID != "" {
			s.Context.Iteration = n
		}
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Time.Equal(out[j].Time) {
			return out[i].Time.Before(out[j].Time)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && s[cut]&0xc0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func itoa(n int) string { return strconv.Itoa(n) }
