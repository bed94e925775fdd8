package verdict

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkState: where a task stands, read at every mutating run (its
// attempts before the run, again under the lock after it), from an
// evaluation log at its bound: 1,000 runs of 100 tasks, each ending in an
// approval after two rejections, and the task asked for with two
// rejections since its last approval.
func BenchmarkState(b *testing.B) {
	s := Open(b.TempDir())
	t0 := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	for i := 0; i < 1000; i++ {
		e := &Evaluation{Time: t0.Add(time.Duration(i) * time.Second), RunID: fmt.Sprintf("run-%04d", i),
			Task: fmt.Sprintf("task-%02d", i%100), Agent: "default", Profile: "quick", EditSource: "command",
			Verdict: Reject, Counted: true, Code: "E_VERIFY_FAILED_REVERTED", FailedStep: "test",
			FailedCommand: "go test ./...", Tags: []string{"test", "go"}, Summary: "step test failed (exit 1)",
			FirstError: "pkg/api/x_test.go:12: got 1, want 2", Fold: "got N, want N", PatchFile: ".orket/runs/x/change.patch",
			Content: "4c4bae1b81a14", DurationMS: 2100}
		if i/100%3 == 2 && i < 900 {
			e.Verdict, e.Counted, e.Code, e.Tags, e.FailedStep, e.FirstError = Approve, false, "OK", nil, "", ""
		}
		if err := s.Record(e); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st, err := s.State("task-07", "default")
		if err != nil || len(st.Attempts) != 1 {
			b.Fatalf("State: %v, %d attempts", err, len(st.Attempts))
		}
	}
}
