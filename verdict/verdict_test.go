package verdict

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/verify"
)

func step(name, status string, required bool) *verify.StepResult {
	return &verify.StepResult{Name: name, Status: status, Required: required}
}

func TestJudge(t *testing.T) {
	flaky := step("test", verify.Passed, true)
	flaky.Retries = 1
	base := step("test", verify.Failed, true)
	base.Baseline = verify.FailsToo
	for _, tc := range []struct {
		name string
		in   Input
		want Judgement
	}{
		{"all pass", Input{Steps: []*verify.StepResult{step("vet", verify.Passed, true), step("test", verify.Passed, true)}, Edited: true},
			Judgement{Verdict: Approve, Score: 100}},
		{"skipped steps do not count", Input{Steps: []*verify.StepResult{step("vet", verify.Passed, true), step("web", verify.Skipped, true)}, Edited: true},
			Judgement{Verdict: Approve, Score: 100}},
		{"optional failure", Input{Steps: []*verify.StepResult{step("vet", verify.Passed, true), step("test", verify.Passed, true), step("links", verify.Failed, false)}, Edited: true},
			Judgement{Verdict: Conditional, Score: 66, Notes: []string{"optional step links failed (exit 0)", "score 66 is under 80"}}},
		{"weights", Input{Steps: []*verify.StepResult{step("vet", verify.Passed, true), step("docs", verify.Failed, false)}, Weights: map[string]int{"vet": 9}, Edited: true},
			Judgement{Verdict: Conditional, Score: 90, Notes: []string{"optional step docs failed (exit 0)"}}},
		{"required failure caps at 59", Input{Steps: []*verify.StepResult{step("a", verify.Passed, true), step("b", verify.Passed, true), step("c", verify.Passed, true), step("test", verify.Failed, true)}, Failed: true, Edited: true},
			Judgement{Verdict: Reject, Score: 59, Counted: true}},
		{"flaky", Input{Steps: []*verify.StepResult{flaky}, Edited: true},
			Judgement{Verdict: Conditional, Score: 100, Notes: []string{"step test passed only on retry 1 (flaky)"}}},
		{"draft failure", Input{Failed: true, Reason: "the edit command failed (exit 3)", Edited: true},
			Judgement{Verdict: Reject, Score: 0, Notes: []string{"the edit command failed (exit 3)"}, Counted: true}},
		{"fails without the change too", Input{Steps: []*verify.StepResult{base}, Failed: true, Edited: true},
			Judgement{Verdict: Reject, Score: 0, Notes: []string{"every failing step fails without the change too: not counted against the agent"}, Red: true}},
		{"verify-only is not counted", Input{Steps: []*verify.StepResult{step("test", verify.Failed, true)}, Failed: true},
			Judgement{Verdict: Reject, Score: 0}},
		{"tests modified", Input{Steps: []*verify.StepResult{step("test", verify.Passed, true)}, Edited: true, Notes: []string{"tests modified: a_test.go"}},
			Judgement{Verdict: Conditional, Score: 100, Notes: []string{"tests modified: a_test.go"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Judge(tc.in)); diff != "" {
				t.Errorf("Judge (-want +got):\n%s", diff)
			}
		})
	}
}

// TestState: consecutive counted rejections per (task, agent), reset by an
// approval or a person; escalation until resolved; one run counts once.
func TestState(t *testing.T) {
	s := Open(t.TempDir())
	t0 := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Minute) }
	ev := func(i int, run, task, agent, v string, counted bool) {
		if err := s.Record(&Evaluation{Time: at(i), RunID: run, Task: task, Agent: agent, Verdict: v, Counted: counted}); err != nil {
			t.Fatal(err)
		}
	}
	ev(1, "r1", "T", "a", Reject, true)
	ev(2, "r2", "T", "a", Reject, true)
	ev(2, "r2", "T", "a", Reject, true) // the same run twice: counts once
	ev(3, "r3", "T", "b", Reject, true) // another agent
	ev(4, "r4", "U", "a", Reject, true) // another task
	ev(5, "r5", "T", "a", Reject, false)
	st, err := s.State("T", "a")
	if err != nil {
		t.Fatal(err)
	}
	if got := runs(st.Attempts); got != "r1 r2" {
		t.Errorf("attempts %q, want r1 r2", got)
	}
	ev(6, "r6", "T", "a", Conditional, false)
	if st, _ = s.State("T", "a"); len(st.Attempts) != 0 {
		t.Errorf("a CONDITIONAL did not reset: %s", runs(st.Attempts))
	}
	ev(7, "r7", "T", "a", Reject, true)
	s.Event(&TaskEvent{Time: at(8), Type: EventEscalate, Task: "T", Agent: "a"})
	if st, _ = s.State("T", "b"); st.Escalation == nil {
		t.Error("an escalation stops every agent's runs of the task")
	}
	s.Event(&TaskEvent{Time: at(9), Type: EventResolve, Task: "T", Reason: "fixed the env"})
	if st, _ = s.State("T", "a"); st.Escalation != nil || len(st.Attempts) != 0 {
		t.Errorf("after resolve: escalation %v, attempts %s", st.Escalation, runs(st.Attempts))
	}
	// A torn line (a kill -9 in the middle of an append) is skipped.
	f, _ := os.OpenFile(s.Evaluations.Path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"run_id":"torn","task":"T","agent":"a","verdict":"REJ`)
	f.Close()
	ev(10, "r10", "T", "a", Reject, true)
	if st, _ = s.State("T", "a"); runs(st.Attempts) != "r10" {
		t.Errorf("after a torn line: %s", runs(st.Attempts))
	}
}

func runs(es []*Evaluation) string {
	var ids []string
	for _, e := range es {
		ids = append(ids, e.RunID)
	}
	return strings.Join(ids, " ")
}

func TestRecommend(t *testing.T) {
	a := []*Evaluation{
		{FailedCommand: "go test ./...", Tags: []string{"missing_env_var"}, Checks: []string{"environment variable DATABASE_URL is set"}},
		{FailedCommand: "go test ./...", Tags: []string{"missing_env_var"}, Checks: []string{"environment variable DATABASE_URL is set"}},
		{FailedCommand: "go test ./...", Tags: []string{"missing_env_var", "test_assertion_failed"}},
	}
	got := Recommend(a)
	want := []string{
		"A precondition is missing in 2 of 3 attempts: environment variable DATABASE_URL is set. Make it hold before another attempt (orket run --strict-preflight stops on it).",
		"Every attempt failed the same command, `go test ./...`: run it by hand and read its first error before retrying.",
		"The failure is classified missing_env_var in 3 of 3 attempts: the environment lacks a variable the step needs; set it where the agent runs.",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Recommend (-want +got):\n%s", diff)
	}
	r := NewReport("esc-1", time.Now(), "T", "a", a, "")
	md := r.Markdown()
	for _, s := range []string{"# Escalation esc-1: task T", "### Attempt 3", "## Recommendation", "orket task resolve T"} {
		if !strings.Contains(md, s) {
			t.Errorf("the report lacks %q:\n%s", s, md)
		}
	}
}

// TestEscalateLine: the escalating run's evaluation is the escalation; a
// verify-only run neither counts nor resets; retention keeps what a
// task's state rests on.
func TestEscalateLine(t *testing.T) {
	s := Open(t.TempDir())
	t0 := time.Now().Add(-400 * 24 * time.Hour)
	rec := func(i int, run, v, src string, counted bool) {
		if err := s.Record(&Evaluation{Time: t0.Add(time.Duration(i) * time.Minute), RunID: run, Task: "T", Agent: "a",
			Verdict: v, Counted: counted, EditSource: src, Report: map[bool]string{true: ".orket/escalations/x.md"}[v == Escalate]}); err != nil {
			t.Fatal(err)
		}
	}
	rec(1, "r1", Reject, "command", true)
	rec(2, "v1", Approve, "none", false) // verify-only: resets nothing
	rec(3, "r2", Reject, "command", true)
	rec(4, "r3", Escalate, "command", true)
	rec(5, "old", Approve, "command", false)
	rec(6, "r4", Reject, "patch", true)
	st, err := s.State("T", "b")
	if err != nil {
		t.Fatal(err)
	}
	if st.Escalation == nil || st.Escalation.RunID != "r3" || st.Escalation.Report != ".orket/escalations/x.md" {
		t.Fatalf("escalation %+v, want the one of run r3", st.Escalation)
	}
	st, _ = s.State("T", "a")
	if got := runs(st.Attempts); got != "r4" {
		t.Errorf("attempts %q, want r4", got)
	}
	// Everything is a year old: retention drops what no state rests on.
	n, err := s.Prune(100, 30*24*time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	s.EachEvaluation(func(e *Evaluation) error { kept = append(kept, e.RunID); return nil })
	if n != 4 || strings.Join(kept, " ") != "r3 r4" {
		t.Errorf("pruned %d, kept %v; want 4 pruned, r3 r4 kept", n, kept)
	}
}

// TestStateReadsWhatMatters: State skips lines by their bytes before
// decoding them (see mayHold, verifyOnlyField); no line of the task is
// lost that way, whatever its task name holds and whatever its text says.
func TestStateReadsWhatMatters(t *testing.T) {
	s := Open(t.TempDir())
	t0 := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	for i, task := range []string{`scope:<a&b> "q\z"`, "scope:pkg/ünï", "scope:pkg profile:quick"} {
		for j, e := range []*Evaluation{
			{RunID: "r1", Verdict: Reject, Counted: true, EditSource: "command", Summary: `step said "edit_source":"none"`},
			{RunID: "v1", Verdict: Approve, EditSource: "none"}, // verify-only: resets nothing
			{RunID: "r2", Verdict: Reject, Counted: true, EditSource: "patch", FirstError: "edit_source none"},
		} {
			e.Time, e.Task, e.Agent, e.RunID = t0.Add(time.Duration(10*i+j)*time.Minute), task, "a", fmt.Sprint(i)+e.RunID
			if err := s.Record(e); err != nil {
				t.Fatal(err)
			}
		}
		st, err := s.State(task, "a")
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("%dr1 %dr2", i, i)
		if got := runs(st.Attempts); got != want {
			t.Errorf("task %q: attempts %q, want %q", task, got, want)
		}
		if st.Last == nil || st.Last.RunID != fmt.Sprint(i)+"r2" || st.Last.FirstError != "edit_source none" {
			t.Errorf("task %q: last %+v, want run %dr2, decoded whole", task, st.Last, i)
		}
	}
}

// An excused failure (the sandbox's configuration, not the change) is a
// REJECT that is not counted, and says why.
func TestJudgeExcused(t *testing.T) {
	j := Judge(Input{Failed: true, Edited: true, Reason: "the kernel sandbox refused writes", Excused: "a matter of sandbox.write"})
	if j.Verdict != Reject || j.Counted || j.Red {
		t.Fatalf("got %+v, want an uncounted REJECT", j)
	}
	if n := len(j.Notes); n == 0 || j.Notes[n-1] != "a matter of sandbox.write: not counted against the agent" {
		t.Errorf("notes %q", j.Notes)
	}
	if j := Judge(Input{Failed: true, Edited: true, Reason: "the edit wrote outside its scope"}); !j.Counted {
		t.Errorf("an unexcused failure is counted: %+v", j)
	}
}
