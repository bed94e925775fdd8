package verdict

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestReadHead: the head read in place is what decoding the line whole
// gives of the same fields, escapes included; a line that is no
// evaluation, or whose fields do not hold their types, is refused as
// json.Unmarshal refuses it.
func TestReadHead(t *testing.T) {
	whole := &Evaluation{Schema: "orket.evaluation/v1", ID: "ev-1", Time: time.Date(2026, 11, 28, 9, 1, 2, 345, time.UTC),
		RunID: "20261128T090102Z-abc", Task: "fix \"quoted\" \\ task\n", Agent: "agent-é", Profile: "quick",
		EditSource: "command", Verdict: Reject, Score: -3, Notes: []string{"tests modified"}, Counted: true,
		Code: "E_VERIFY_FAILED_REVERTED", FailedStep: "test", FailedCommand: "go test ./...", Tags: []string{"test", "go"},
		Summary: "test failed", FirstError: "x_test.go:3: want 1", Fold: "f", Checks: []string{"c"}, Content: "t",
		DurationMS: 12, EvaluatorVersion: "1", Report: ".orket/reports/x.md", OutputTail: "tail", Patch: "p", Guardrails: 2,
		Red: true, Excused: TriggerSandboxWrite}
	line, err := json.Marshal(whole)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := ReadHead(line)
	if !ok {
		t.Fatalf("ReadHead(%s) refused it", line)
	}
	want := &Evaluation{ID: whole.ID, Time: whole.Time, RunID: whole.RunID, Task: whole.Task, Agent: whole.Agent,
		EditSource: whole.EditSource, Verdict: whole.Verdict, Score: whole.Score, Notes: whole.Notes, Counted: true,
		Code: whole.Code, FailedStep: whole.FailedStep, FailedCommand: whole.FailedCommand, Tags: whole.Tags,
		Summary: whole.Summary, FirstError: whole.FirstError, Report: whole.Report, Red: true, Excused: whole.Excused}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ReadHead (-want +got):\n%s", d)
	}
	for _, bad := range []string{
		`{"task":"t","verdict":"REJECT"}`,   // no run id
		`{"run_id":"r","counted":"yes"}`,    // a flag that is no boolean
		`{"run_id":"r","score":"3"}`,        // a score that is no number
		`{"run_id":"r","time":"yesterday"}`, // a time that is none
		`{"run_id":"r","tags":"go"}`,        // tags that are no list
		`{"run_id":7}`,                      // a run id that is no string
		`["run_id","r"]`,                    // no object
	} {
		if e, ok := ReadHead([]byte(bad)); ok {
			t.Errorf("ReadHead(%s) = %+v, want it refused", bad, e)
		}
		var e Evaluation
		if json.Unmarshal([]byte(bad), &e) == nil && e.RunID != "" {
			t.Errorf("%s: json.Unmarshal accepts it: the case tests nothing", bad)
		}
	}
	if e, ok := ReadHead([]byte(`{"run_id":"r","task":null,"counted":null}`)); !ok || e.Task != "" || e.Counted {
		t.Errorf("nulls: %+v %v, want empty fields", e, ok)
	}
}
