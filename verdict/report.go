package verdict

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/orket/orket/config"
	"github.com/orket/orket/internal/rank"
	"github.com/orket/orket/store"
)

// A Report is what a person gets when a task is escalated: why, every
// attempt's evidence, and what to do (docs/verdicts.md, Escalation).
type Report struct {
	Schema         string        `json:"schema_version"`
	ID             string        `json:"escalation_id"`
	Time           time.Time     `json:"timestamp"`
	Severity       string        `json:"severity"`
	Trigger        Trigger       `json:"trigger"`
	Task           string        `json:"task"`
	Agent          string        `json:"agent"`
	Attempts       []*Evaluation `json:"evaluation_history"`
	Recommendation []string      `json:"recommendation"`
	ActionRequired string        `json:"action_required"`
}

// A Trigger says why a task was escalated.
type Trigger struct {
	Type        string `json:"type"` // third_rejection, red_baseline, sandbox_write, human_request
	Description string `json:"description"`
}

// The triggers of an escalation.
const (
	TriggerRejections  = "third_rejection"
	TriggerRedBaseline = "red_baseline" // the task's steps failed without any change, run after run
	// TriggerSandboxWrite: the kernel sandbox refused the task's edits'
	// writes to git-ignored paths that orket.yaml's sandbox.write does not
	// open, run after run: a person's setting, not the agent's doing.
	TriggerSandboxWrite = "sandbox_write"
	TriggerHuman        = "human_request"
)

// RedAfter is how many consecutive red runs of a task (every failing step
// fails without the change too) escalate it: main or the environment is
// broken, and no attempt of the agent can mend it.
const RedAfter = 2

// ExcusedAfter is how many consecutive excused runs of a task
// (Evaluation.Excused) escalate it: only a person can change what
// excused them.
const ExcusedAfter = 2

// NewReport makes the report of an escalation after consecutive
// rejections (or by hand, with the person's reason).
func NewReport(id string, now time.Time, task, agent string, attempts []*Evaluation, reason string) *Report {
	r := &Report{Schema: store.ReportSchema, ID: id, Time: now.UTC(), Severity: "high", Task: task, Agent: agent, Attempts: attempts,
		ActionRequired: "Human intervention needed: runs of this task stop (E_ESCALATED) until `orket task resolve " + config.ShellQuote([]string{task}) + " --reason \"...\"`."}
	if reason != "" {
		r.Trigger = Trigger{Type: TriggerHuman, Description: "escalated by hand: " + reason}
		r.Severity = "medium"
	} else {
		r.Trigger = Trigger{Type: TriggerRejections, Description: fmt.Sprintf("agent %s failed the task %d times in a row", agent, len(attempts))}
	}
	r.Recommendation = Recommend(attempts)
	return r
}

// Recommend derives what to do from what repeats across the attempts: the
// same tag, the same failing command, a missing precondition and the
// check that would have caught it.
func Recommend(attempts []*Evaluation) []string {
	if len(attempts) == 0 {
		return []string{"Review the task: nothing was recorded about the attempts."}
	}
	tags, commands, checks := map[string]int{}, map[string]int{}, map[string]int{}
	for _, a := range attempts {
		for _, t := range uniq(a.Tags) {
			tags[t]++
		}
		if a.FailedCommand != "" {
			commands[a.FailedCommand]++
		}
		for _, c := range uniq(a.Checks) {
			checks[c]++
		}
	}
	n := len(attempts)
	var out []string
	for _, c := range rank.ByCount(checks) {
		if checks[c] >= 2 || n == 1 {
			out = append(out, fmt.Sprintf("A precondition is missing in %d of %d attempts: %s. Make it hold before another attempt (orket run --strict-preflight stops on it).", checks[c], n, c))
		}
	}
	for _, c := range rank.ByCount(commands) {
		if commands[c] == n && n > 1 {
			out = append(out, fmt.Sprintf("Every attempt failed the same command, `%s`: run it by hand and read its first error before retrying.", c))
		} else if commands[c] >= 2 {
			out = append(out, fmt.Sprintf("`%s` failed in %d of %d attempts.", c, commands[c], n))
		}
	}
	for _, t := range rank.ByCount(tags) {
		if tags[t] >= 2 || n == 1 {
			out = append(out, fmt.Sprintf("The failure is classified %s in %d of %d attempts: %s", t, tags[t], n, tagAdvice(t)))
		}
	}
	if len(out) == 0 {
		out = append(out, "The attempts failed in different ways: the task may be unclear or too large; review it with the agent's output below, split it, or do it by hand.")
	}
	return out
}

func tagAdvice(tag string) string {
	switch tag {
	case "missing_env_var":
		return "the environment lacks a variable the step needs; set it where the agent runs."
	case "missing_dependency":
		return "a dependency is missing; install it or fix the module's requirements."
	case "type_error", "lint_error":
		return "the agent's code does not build or lint; give it the error and the file."
	case "test_assertion_failed":
		return "the tests disagree with the change; check whether the task asks for what the tests expect."
	case "build_config_error":
		return "the build configuration is broken; that is rarely the agent's to fix."
	case "port_in_use", "db_connection_failed":
		return "a service or port the tests need is not as expected on this machine."
	case "flaky":
		return "the step is flaky; fix or quarantine it."
	}
	return "see the first errors below."
}

// Markdown renders the report for a person.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Escalation %s: task %s\n\n", r.ID, r.Task)
	fmt.Fprintf(&b, "- **When:** %s\n- **Agent:** %s\n- **Severity:** %s\n- **Trigger:** %s (%s)\n\n", r.Time.Format(time.RFC3339), r.Agent, r.Severity, r.Trigger.Type, r.Trigger.Description)
	b.WriteString("## Attempts\n\n")
	if len(r.Attempts) == 0 {
		b.WriteString("None recorded.\n\n")
	}
	for i, a := range r.Attempts {
		fmt.Fprintf(&b, "### Attempt %d: run %s, %s, score %d\n\n", i+1, a.RunID, a.Verdict, a.Score)
		if a.FailedStep != "" {
			fmt.Fprintf(&b, "- Failed step: `%s` (`%s`)\n", a.FailedStep, a.FailedCommand)
		}
		if len(a.Tags) > 0 {
			fmt.Fprintf(&b, "- Tags: %s\n", strings.Join(a.Tags, ", "))
		}
		if a.Summary != "" {
			fmt.Fprintf(&b, "- Outcome: %s\n", a.Summary)
		}
		if a.FirstError != "" {
			fmt.Fprintf(&b, "- First error:\n\n  ```\n  %s\n  ```\n", strings.ReplaceAll(a.FirstError, "\n", "\n  "))
		}
		for _, c := range a.Checks {
			fmt.Fprintf(&b, "- Preflight check: %s\n", c)
		}
		if a.OutputTail != "" {
			fmt.Fprintf(&b, "- Output (last lines):\n\n  ```\n  %s\n  ```\n", strings.ReplaceAll(strings.TrimRight(a.OutputTail, "\n"), "\n", "\n  "))
		}
		if a.PatchFile != "" {
			fmt.Fprintf(&b, "- The attempt's change: `%s` (`git apply %s` brings it back)\n", a.PatchFile, a.PatchFile)
		}
		if a.Patch != "" {
			fmt.Fprintf(&b, "\n  ```diff\n  %s\n  ```\n", strings.ReplaceAll(strings.TrimRight(clipLines(a.Patch, maxPatchLines), "\n"), "\n", "\n  "))
		}
		b.WriteString("\n")
	}
	b.WriteString("## Recommendation\n\n")
	for _, rec := range r.Recommendation {
		fmt.Fprintf(&b, "- %s\n", rec)
	}
	fmt.Fprintf(&b, "\n## Action required\n\n%s\n", r.ActionRequired)
	return b.String()
}

// maxPatchLines bounds an attempt's change as the Markdown shows it (the
// file beside the report has all of it).
const maxPatchLines = 80

func clipLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "") + fmt.Sprintf("... (%d more lines)\n", len(lines)-n)
}

// JSON renders the report for tools.
func (r *Report) JSON() []byte {
	b, _ := json.MarshalIndent(r, "", "  ")
	return append(b, '\n')
}

func uniq(l []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range l {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
