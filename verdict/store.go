package verdict

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"sort"
	"time"

	"github.com/orket/orket/store"
)

// EvaluatorVersion names the rules Judge applies, for the evaluation log.
const EvaluatorVersion = "orket-verdict/1"

// An Evaluation is one run's verdict, a line of
// .orket/memory/evaluations.jsonl.
type Evaluation struct {
	Schema        string    `json:"schema_version"`
	ID            string    `json:"id"`
	Time          time.Time `json:"time"`
	RunID         string    `json:"run_id"`
	Task          string    `json:"task"`
	Agent         string    `json:"agent"`
	Profile       string    `json:"profile"`
	EditSource    string    `json:"edit_source"` // none: a verify-only run, never an attempt
	Verdict       string    `json:"verdict"`
	Score         int       `json:"score"`
	Notes         []string  `json:"notes,omitempty"`
	Counted       bool      `json:"counted"` // a REJECT that counts as an attempt
	Code          string    `json:"code"`
	FailedStep    string    `json:"failed_step,omitempty"`
	FailedCommand string    `json:"failed_command,omitempty"`
	Tags          []string  `json:"tags,omitempty"`
	Summary       string    `json:"summary,omitempty"` // one line: what failed
	FirstError    string    `json:"first_error,omitempty"`
	// Fold is what the failure's hazard is, as its lesson folds
	// (lessons.FoldCause): the masked cause, or an environment's checks.
	Fold      string   `json:"fold,omitempty"`
	Checks    []string `json:"preflight_checks,omitempty"`
	PatchFile string   `json:"patch_file,omitempty"`
	// Content names the content of the tree the run verified: a command
	// that failed on it and later passes on it is flaky.
	Content          string `json:"tree_content,omitempty"`
	DurationMS       int64  `json:"duration_ms"`
	EvaluatorVersion string `json:"evaluator_version"`
	// Report is the escalation report an ESCALATE verdict wrote,
	// repository-relative (its .md; the .json beside it).
	Report string `json:"escalation_report,omitempty"`
	// OutputTail and Patch are filled in escalation reports only: the
	// failed step's last lines and the attempt's change, from its run
	// record (run records are pruned; reports stay).
	OutputTail string `json:"output_tail,omitempty"`
	Patch      string `json:"patch,omitempty"`
	// Guardrails is the version of the agent's guardrails the run was
	// given (0: none).
	Guardrails int `json:"guardrails_version,omitempty"`
	// Red: every failing step of the run fails without its change too
	// (Judgement.Red); two such runs in a row escalate the task.
	Red bool `json:"baseline_red,omitempty"`
	// Excused names why a rejected run was not counted against the agent
	// though no attempt of its can mend it (TriggerSandboxWrite: the
	// kernel sandbox refused writes to git-ignored paths orket.yaml does
	// not open); two such runs in a row escalate the task.
	Excused string `json:"excused,omitempty"`
	// Review is, in a task's state only, the reviewer's reason of a run
	// that passed and was then rejected (its Verdict is ReviewRejected).
	Review string `json:"review,omitempty"`
}

// Task event types.
const (
	EventEscalate = "escalate" // the task is escalated (by the third rejection, or by hand)
	EventResolve  = "resolve"  // a person resolved it: runs go on, the count starts over
	EventReset    = "reset"    // a person reset the count
	EventOverride = "override" // a person accepted a rejected run anyway
	EventReview   = "review"   // a reviewer rejected a kept run (orket reject): it counts as a rejection
)

// A TaskEvent is a person's (or an escalation's) word on a task, a line of
// .orket/memory/tasks.jsonl.
type TaskEvent struct {
	Schema string    `json:"schema_version"`
	ID     string    `json:"id"`
	Time   time.Time `json:"time"`
	Type   string    `json:"type"`
	Task   string    `json:"task"`
	Agent  string    `json:"agent,omitempty"` // empty: every agent
	RunID  string    `json:"run_id,omitempty"`
	Reason string    `json:"reason,omitempty"`
	By     string    `json:"by,omitempty"`
	Report string    `json:"report,omitempty"` // an escalation's report, repository-relative
	// Trigger is why an escalation's run escalated: TriggerRedBaseline,
	// or "" for its attempts (read from the run's evaluation, never
	// written to the log).
	Trigger string `json:"-"`
	// FailedStep is the escalating run's failed step (read from its
	// evaluation, never written to the log).
	FailedStep string `json:"-"`
}

// A Store is the evaluation log and the task events of a repository.
type Store struct {
	Evaluations *store.Log
	Events      *store.Log
}

// Open returns the store kept in dir (.orket/memory).
func Open(dir string) *Store {
	return &Store{Evaluations: &store.Log{Path: filepath.Join(dir, "evaluations.jsonl")},
		Events: &store.Log{Path: filepath.Join(dir, "tasks.jsonl")}}
}

// Record appends an evaluation.
func (s *Store) Record(e *Evaluation) error {
	e.Schema, e.EvaluatorVersion = store.EvaluationSchema, EvaluatorVersion
	if e.ID == "" {
		e.ID = "ev-" + e.RunID
	}
	return s.Evaluations.Append(e)
}

// Event appends a task event.
func (s *Store) Event(e *TaskEvent) error {
	e.Schema = store.TaskEventSchema
	if e.ID == "" {
		e.ID = e.Type + "-" + e.Time.UTC().Format("20060102T150405.000000000Z")
	}
	return s.Events.Append(e)
}

// EachEvaluation streams the evaluation log; damaged lines are skipped.
func (s *Store) EachEvaluation(fn func(*Evaluation) error) ([]store.Damaged, error) {
	return s.EachEvaluationOf("", fn)
}

// EachEvaluationOf is EachEvaluation of the lines that can hold the string
// value (all of them when value is ""): a log of a thousand evaluations
// is decoded only where it can matter (see mayHold).
func (s *Store) EachEvaluationOf(value string, fn func(*Evaluation) error) ([]store.Damaged, error) {
	return s.Evaluations.Each(func(line []byte) error {
		if !mayHold(line, value) {
			return nil
		}
		var e Evaluation
		if json.Unmarshal(line, &e) != nil || e.RunID == "" {
			return nil
		}
		return fn(&e)
	})
}

// mayHold reports whether a JSON line can hold the string value: only if
// it contains value's bytes, when JSON writes them as they are (orket's
// encoder escapes control characters, quotes, backslashes, <, > and &,
// and U+2028 and U+2029, so a value with any of those, or with any
// non-ASCII byte, is decoded to be sure).
func mayHold(line []byte, value string) bool {
	for i := 0; i < len(value); i++ {
		switch c := value[i]; {
		case c < 0x20, c >= 0x80, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return true
		}
	}
	return bytes.Contains(line, []byte(value))
}

// EachEvent streams the task events.
func (s *Store) EachEvent(fn func(*TaskEvent) error) ([]store.Damaged, error) {
	return s.Events.Each(func(line []byte) error {
		var e TaskEvent
		if json.Unmarshal(line, &e) != nil || e.Type == "" {
			return nil
		}
		return fn(&e)
	})
}

// A TaskState is what the logs say of a task for an agent.
type TaskState struct {
	Task  string
	Agent string
	// Attempts are the agent's consecutive counted rejections of the
	// task, oldest first, since its last approval or a person's word.
	Attempts []*Evaluation
	// Escalation is the event that escalated the task, while no one has
	// resolved it (any agent's run of it stops).
	Escalation *TaskEvent
	// Last is the agent's latest evaluation of the task (verify-only runs
	// aside).
	Last *Evaluation
	// Red are the agent's consecutive red runs of the task (Evaluation.Red),
	// oldest first, since its last other verdict or a person's word.
	Red []*Evaluation
	// Excused are the agent's consecutive excused runs of the task
	// (Evaluation.Excused), the same way.
	Excused []*Evaluation
}

// State reads what the logs say of a task for an agent. One run counts
// once, however many lines name it.
func (s *Store) State(task, agent string) (*TaskState, error) {
	items, err := s.taskItems(task)
	if err != nil {
		return nil, err
	}
	st := &TaskState{Task: task, Agent: agent}
	r := st.replay(items)
	if r.last != nil {
		st.Last = wholeEvaluation(r.last)
	}
	st.Red, st.Excused, st.Attempts = wholeEvaluations(r.red), wholeEvaluations(r.excused), wholeEvaluations(r.attempts)
	return st, nil
}

// wholeEvaluations decodes lines, leaving out those that do not decode.
func wholeEvaluations(lines [][]byte) []*Evaluation {
	var out []*Evaluation
	for _, line := range lines {
		if e := wholeEvaluation(line); e != nil {
			out = append(out, e)
		}
	}
	return out
}

// replayed is what replay finds of the agent's runs of a task: the line
// of its last evaluation, and those of its counted rejections since its
// last approval or a person's word, and of its red and its excused runs
// in a row since its last other verdict or a person's word.
type replayed struct {
	last                   []byte
	attempts, red, excused [][]byte
}

// A taskItem is a line of the logs about a task: an evaluation (its head,
// and its line to decode whole if the state keeps it) or a task event.
type taskItem struct {
	t    time.Time
	head *Evaluation // its head (ReadHead)
	line []byte
	te   *TaskEvent
}

// taskItems returns the lines of both logs about a task, oldest first. The
// log holds a thousand evaluations at its bound, of many tasks, most of
// them passing: a line is decoded only as far as the state needs (its
// head), and only if it can be of the task and not of a verify-only run.
func (s *Store) taskItems(task string) ([]taskItem, error) {
	var items []taskItem
	seen := map[string]bool{}
	if err := s.Evaluations.Scan(func(line []byte) error {
		if !mayHold(line, task) || bytes.Contains(line, verifyOnlyField) {
			return nil
		}
		h, ok := ReadHead(line)
		if !ok {
			return nil
		}
		if h.Task == task && !seen[h.RunID] {
			seen[h.RunID] = true
			items = append(items, taskItem{t: h.Time, head: h, line: bytes.Clone(line)})
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if _, err := s.EachEvent(func(e *TaskEvent) error {
		if e.Task == task {
			items = append(items, taskItem{t: e.Time, te: e})
		}
		return nil
	}); err != nil {
		return nil, err
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].t.Before(items[j].t) })
	return items, nil
}

// replay goes through a task's items in order, setting st's escalation,
// and returns what it found of the agent's runs.
func (st *TaskState) replay(items []taskItem) (r replayed) {
	agent := st.Agent
	// A run a reviewer rejected is a rejection where it stands among the
	// runs, whenever the review came.
	reviewed := map[string]*TaskEvent{}
	for _, it := range items {
		if e := it.te; e != nil && e.Type == EventReview && e.RunID != "" {
			reviewed[e.RunID] = e
		}
	}
	for _, it := range items {
		if e := it.te; e != nil {
			switch e.Type {
			case EventEscalate:
				st.Escalation = e
			case EventResolve, EventOverride:
				st.Escalation = nil
				if e.Agent == "" || e.Agent == agent {
					r.attempts, r.red, r.excused = nil, nil, nil
				}
			case EventReset:
				if e.Agent == "" || e.Agent == agent {
					r.attempts, r.red, r.excused = nil, nil, nil
				}
			}
			continue
		}
		e := it.head
		if e.EditSource == "none" {
			continue // a verify-only run is no attempt, and resets none
		}
		if e.Verdict == Escalate {
			// The escalating run's one line is the escalation: a crash
			// cannot leave one without the other.
			st.Escalation = &TaskEvent{Time: e.Time, Type: EventEscalate, Task: e.Task, Agent: e.Agent, RunID: e.RunID, Report: e.Report}
			switch {
			case e.Red:
				st.Escalation.Trigger, st.Escalation.FailedStep = TriggerRedBaseline, e.FailedStep
			case e.Excused != "":
				st.Escalation.Trigger = e.Excused
			}
		}
		if e.Agent != agent {
			continue
		}
		if rv := reviewed[e.RunID]; rv != nil && (e.Verdict == Approve || e.Verdict == Conditional) {
			it.line = reviewedLine(it.line, rv)
			e.Verdict, e.Counted = Reject, true
		}
		r.last = it.line
		r.red = streak(r.red, e.Red, it.line)
		r.excused = streak(r.excused, e.Excused != "", it.line)
		switch {
		case e.Verdict == Reject || e.Verdict == Escalate:
			if e.Counted {
				r.attempts = append(r.attempts, it.line)
			}
		case e.Verdict == Approve || e.Verdict == Conditional:
			r.attempts = nil
		}
	}
	return r
}

// streak is lines with line added when it is one of them, else none: the
// runs of a kind in a row.
func streak(lines [][]byte, is bool, line []byte) [][]byte {
	if !is {
		return nil
	}
	return append(lines, line)
}

// reviewedLine is an evaluation's line as a reviewer's rejection makes it:
// verdict ReviewRejected, counted, the review's reason as its summary.
func reviewedLine(line []byte, rv *TaskEvent) []byte {
	e := wholeEvaluation(line)
	if e == nil {
		return line
	}
	e.Verdict, e.Counted, e.Review = ReviewRejected, true, rv.Reason
	if e.Review == "" {
		e.Review = "rejected in review"
	}
	e.Summary = "rejected in review: " + e.Review
	b, err := json.Marshal(e)
	if err != nil {
		return line
	}
	return b
}

// wholeEvaluation decodes an evaluation's line whole; nil when its other
// fields do not decode (skipped, as readers skip a damaged line).
func wholeEvaluation(line []byte) *Evaluation {
	var e Evaluation
	if json.Unmarshal(line, &e) != nil {
		return nil
	}
	return &e
}

// verifyOnlyField is how orket writes a verify-only run's edit source. A
// line that holds these bytes holds that field: inside a JSON string a
// quote is always escaped, so they cannot be part of one.
var verifyOnlyField = []byte(`"edit_source":"none"`)

// Reviewed reports whether a reviewer rejected the run (a review task
// event names it).
func (s *Store) Reviewed(runID string) (bool, error) {
	found := false
	_, err := s.EachEvent(func(e *TaskEvent) error {
		found = found || e.Type == EventReview && e.RunID == runID
		return nil
	})
	return found, err
}

// Find returns the evaluation of a run, or nil.
func (s *Store) Find(runID string) (*Evaluation, error) {
	var found *Evaluation
	_, err := s.EachEvaluationOf(runID, func(e *Evaluation) error {
		if e.RunID == runID {
			found = e
		}
		return nil
	})
	return found, err
}

// Tasks lists every task the logs know, with its latest state per agent.
func (s *Store) Tasks() ([]*TaskState, error) {
	pairs := map[[2]string]bool{}
	tasks := map[string]bool{}
	if _, err := s.EachEvaluation(func(e *Evaluation) error {
		pairs[[2]string{e.Task, e.Agent}] = true
		tasks[e.Task] = true
		return nil
	}); err != nil {
		return nil, err
	}
	if _, err := s.EachEvent(func(e *TaskEvent) error {
		if !tasks[e.Task] {
			pairs[[2]string{e.Task, e.Agent}] = true
			tasks[e.Task] = true
		}
		return nil
	}); err != nil {
		return nil, err
	}
	var out []*TaskState
	for p := range pairs {
		st, err := s.State(p[0], p[1])
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Task != out[j].Task {
			return out[i].Task < out[j].Task
		}
		return out[i].Agent < out[j].Agent
	})
	return out, nil
}

// OpenRuns are the runs whose evaluations a task's state rests on: its
// open attempts and its escalation. Retention keeps them whatever their
// age, here and in what orket sync shares.
func (s *Store) OpenRuns() (map[string]bool, error) {
	open := map[string]bool{}
	tasks, err := s.Tasks()
	if err != nil {
		return nil, err
	}
	for _, t := range tasks {
		for _, a := range t.Attempts {
			open[a.RunID] = true
		}
		if t.Escalation != nil && t.Escalation.RunID != "" {
			open[t.Escalation.RunID] = true
		}
	}
	return open, nil
}

// Prune applies retention to the evaluation log: none older than maxAge
// (0: no age limit), at most maxPerAgent per agent (the newest). The
// evaluations a task's state rests on (its open attempts, its escalation)
// are kept whatever their age: retention never resets a count.
func (s *Store) Prune(maxPerAgent int, maxAge time.Duration, now time.Time) (int, error) {
	open, err := s.OpenRuns()
	if err != nil {
		return 0, err
	}
	return s.Evaluations.Prune(store.Retention{MaxPerAgent: maxPerAgent, MaxAge: maxAge}, now, func(line []byte) (store.Meta, bool) {
		var e Evaluation
		if json.Unmarshal(line, &e) != nil {
			return store.Meta{}, false
		}
		return store.Meta{Agent: e.Agent, Time: e.Time, Pinned: open[e.RunID]}, true
	})
}
