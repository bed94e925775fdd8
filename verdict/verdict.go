// Package verdict judges runs and remembers them: every run that verified
// gets a verdict (APPROVE, CONDITIONAL, REJECT, ESCALATE) and a score
// 0-100 (docs/verdicts.md), appended to the evaluation log; consecutive
// rejections of one task by one agent are counted from that log, and the
// third escalates the task to a person, who resolves it.
//
// Nothing here is a counter that a crash could tear: attempts and
// escalations are derived, each time, from two append-only logs (one line
// per evaluation, one per task event), appended whole under a lock, read
// back skipping damaged lines, and keyed by run id so that no run counts
// twice.
package verdict

import (
	"fmt"
	"strings"

	"github.com/orket/orket/verify"
)

// The verdicts.
const (
	Approve     = "APPROVE"
	Conditional = "CONDITIONAL"
	Reject      = "REJECT"
	Escalate    = "ESCALATE"
	// ReviewRejected is the verdict a task's state gives a run that
	// passed and that a reviewer then rejected (orket reject): a counted
	// rejection, as if verification had rejected it.
	ReviewRejected = "REJECTED (review)"
)

// Defaults of orket.yaml's verdict section.
const (
	DefaultApprove       = 80 // verdict.approve: the least score that approves
	DefaultEscalateAfter = 3  // verdict.escalate_after: consecutive rejections that escalate
	rejectCap            = 59 // a failed required step caps the score here
)

// A Judgement is a run's verdict, its score and the notes that kept it
// from approval.
type Judgement struct {
	Verdict string   `json:"verdict"`
	Score   int      `json:"score"`
	Notes   []string `json:"notes,omitempty"`
	// Counted says whether a REJECT counts as an attempt of the task: not
	// when the failure is not the change's (the step fails without it
	// too, or Input.Excused says why), nor for a run that edited nothing.
	Counted bool `json:"counted"`
	// Red: a REJECT of a run that edited, every failing step of which
	// fails without the change too (main or the environment is broken).
	Red bool `json:"red,omitempty"`
}

// Input is what a run's verdict is made of.
type Input struct {
	Steps   []*verify.StepResult
	Weights map[string]int // by step name; 1 when absent
	Failed  bool           // the run's outcome failed (a required step, the edit, the barrier)
	Reason  string         // what failed when no step did ("the edit command failed")
	Edited  bool           // the run made an edit (verify-only runs are never counted)
	Approve int            // the least score that approves (0: DefaultApprove)
	// Notes are notes from outside the steps (tests modified by the edit).
	Notes []string
	// Excused, when set, says why a failure is not the change's fault
	// (the kernel sandbox refused writes to git-ignored build
	// directories): the REJECT is not counted, and this is its note.
	Excused string
}

// Judge scores a run: the weighted share of the steps that ran and passed
// (skipped steps do not count; no step that ran is a score of 100 for a
// passing run), capped at 59 when a required step failed. A failed outcome
// is REJECT; otherwise APPROVE at or above the approve score with no note,
// else CONDITIONAL with its notes.
func Judge(in Input) Judgement {
	approve := in.Approve
	if approve == 0 {
		approve = DefaultApprove
	}
	total, passed := 0, 0
	requiredFailed := false
	notes := append([]string(nil), in.Notes...)
	for _, s := range in.Steps {
		if s.Status == verify.Skipped {
			continue
		}
		w := 1
		if v, ok := in.Weights[s.Name]; ok {
			w = v
		}
		total += w
		switch {
		case s.Status == verify.Passed:
			passed += w
			if s.Retries > 0 {
				notes = append(notes, fmt.Sprintf("step %s passed only on retry %d (flaky)", s.Name, s.Retries))
			}
		case !s.Required:
			notes = append(notes, fmt.Sprintf("optional step %s failed (%s)", s.Name, exitText(s)))
		default:
			requiredFailed = true
		}
	}
	score := 100
	if total > 0 {
		score = passed * 100 / total
	}
	if requiredFailed && score > rejectCap {
		score = rejectCap
	}
	j := Judgement{Score: score, Notes: notes}
	switch {
	case in.Failed:
		j.Verdict = Reject
		if in.Reason != "" && !requiredFailed {
			j.Score = 0
			j.Notes = append([]string{in.Reason}, j.Notes...)
		}
		j.Red = in.Edited && FailsWithoutChange(in.Steps)
		j.Counted = in.Edited && !j.Red && in.Excused == ""
		if in.Excused != "" && in.Edited {
			j.Notes = append(j.Notes, in.Excused+": not counted against the agent")
		}
		if j.Red {
			j.Notes = append(j.Notes, "every failing step fails without the change too: not counted against the agent")
		}
	case score >= approve && len(notes) == 0:
		j.Verdict = Approve
	default:
		j.Verdict = Conditional
		if score < approve {
			j.Notes = append(j.Notes, fmt.Sprintf("score %d is under %d", score, approve))
		}
	}
	return j
}

// FailsWithoutChange reports whether every failing required step failed
// on the tree without the change too.
func FailsWithoutChange(steps []*verify.StepResult) bool {
	any := false
	for _, s := range steps {
		if s.FailedRequired() {
			if s.Baseline != verify.FailsToo {
				return false
			}
			any = true
		}
	}
	return any
}

func exitText(s *verify.StepResult) string {
	switch {
	case s.TimedOut:
		return "timed out"
	case s.Signal != "":
		return "killed by " + s.Signal
	}
	return fmt.Sprintf("exit %d", s.ExitCode)
}

// TaskKey is the task of a run without an explicit one: the pair (scope,
// verify profile), so that consecutive failures in one area count as
// attempts at one task.
func TaskKey(scope []string, profile string) string {
	return "scope:" + strings.Join(scope, ",") + " profile:" + profile
}
