package guardrails

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/verdict"
)

// history writes n runs of agent from start, one a minute, the first
// errs of every 10 rejected (on the kafka fold, with an exposure that
// warned about it when warned), given guardrails version.
func history(t *testing.T, r *repo, agent string, start time.Time, n, errs, version int, warned bool) time.Time {
	t.Helper()
	s := verdict.Open(filepath.Join(r.orket, "memory"))
	xs := OpenExposures(r.orket)
	at := start
	for i := 0; i < n; i++ {
		at = start.Add(time.Duration(i) * time.Minute)
		id := fmt.Sprintf("%s-%d-%d", agent, start.Unix(), i)
		e := &verdict.Evaluation{Time: at, RunID: id, Task: "T-ok", Agent: agent, Profile: "quick", EditSource: "command",
			Verdict: verdict.Approve, Score: 90, Guardrails: version}
		if i%10 < errs {
			e.Verdict, e.Score, e.Task, e.Counted = verdict.Reject, 40, "T-fail", true
			e.FailedStep, e.FailedCommand, e.Tags, e.FirstError = "test", kafka.cmd, []string{kafka.tag}, kafka.first
			if warned {
				x := &Exposure{RunID: id, Agent: agent, Time: at, Version: version,
					Folds: []string{FoldOf("pkg/api", kafka.cmd, []string{kafka.tag}, kafka.first).KeyNoDir()}}
				if err := xs.Record(x); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := s.Record(e); err != nil {
			t.Fatal(err)
		}
	}
	// A verify-only run is not the agent's.
	if err := s.Record(&verdict.Evaluation{Time: at, RunID: "verify-" + agent + at.Format("150405"), Agent: agent, EditSource: "none", Verdict: verdict.Reject}); err != nil {
		t.Fatal(err)
	}
	return at.Add(time.Minute)
}

// orket stats on a generated history whose rates are known: v1 made
// things better, v2 worse (flagged, rollback to v1 suggested).
func TestStatsKnownHistory(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	s := r.store()
	addRule := func(text string) string {
		c := Cluster{Kind: KindCategory, Key: hashKey("ck-", text), Label: "x", Section: Everywhere}
		p := &Proposal{Agent: "claude", CreatedAt: t0, Cluster: c, LessonText: text, ConstraintUpdate: Change{Type: Addition, Section: Everywhere, NewText: text}}
		p.ID = proposalID("claude", c, 0)
		must[[]*Proposal](t)(s.Proposals.Add(p))
		return p.ID
	}
	a, b := addRule("Rule A"), addRule("Rule B")

	next := history(t, r, "claude", t0, 40, 3, 0, false) // 30% before v1
	must[*Version](t)(approve(s, a, "Ana", next))
	next = history(t, r, "claude", next.Add(time.Minute), 20, 1, 1, false) // 10% with v1
	must[*Version](t)(approve(s, b, "Ana", next))
	history(t, r, "claude", next.Add(time.Minute), 20, 5, 2, true) // 50% with v2, every failure warned
	history(t, r, "codex", t0, 10, 2, 0, false)

	st := must[*Stats](t)(s.Stats(ctx, ""))
	if diff := cmp.Diff(map[string]float64{"claude": 0.3, "codex": 0.2}, st.ErrorRateByAgent); diff != "" {
		t.Errorf("error_rate_by_agent (-want +got):\n%s", diff)
	}
	// claude: 24 runs at 40, 56 at 90; codex: 2 at 40, 8 at 90.
	if st.AverageScore != round(float64(26*40+64*90)/90, 2) || st.AverageScoreByAgent["claude"] != 75 ||
		st.LessonsAppliedCount != 2 || st.PromptVersionsCount != 2 || st.RollbackFrequency != 0 || st.Runs != 90 {
		t.Errorf("stats: %+v", st)
	}
	c := st.Agents[0]
	if c.Agent != "claude" || len(c.Comparisons) != 2 || c.CurrentVersion != 2 {
		t.Fatalf("claude: %+v", c)
	}
	v1, v2 := c.Comparisons[0], c.Comparisons[1]
	want1 := Comparison{Version: 1, Kind: KindApproval, CreatedAt: v1.CreatedAt, Kept: true,
		Before: Sample{Runs: 20, ErrorRate: 0.3, MeanScore: 75, TaskCompletionRate: 0.5},
		After:  Sample{Runs: 20, ErrorRate: 0.1, MeanScore: 85, TaskCompletionRate: 0.5}, Full: true}
	if diff := cmp.Diff(want1, v1); diff != "" {
		t.Errorf("v1 (-want +got):\n%s", diff)
	}
	if !v2.Worse || !v2.Full || !v2.Current || v2.After.ErrorRate != 0.5 || v2.Before.ErrorRate != 0.1 ||
		v2.After.RepeatFailureRate != 0.5 || v2.Before.RepeatFailureRate != 0 || v2.SuggestedRollback == nil || v2.SuggestedRollback.To != 1 {
		t.Errorf("v2: %+v", v2)
	}
	if len(st.Flagged) != 1 || st.Flagged[0].Agent != "claude" || st.Flagged[0].Version != 2 || st.Flagged[0].Suggest.To != 1 {
		t.Errorf("flagged: %+v", st.Flagged)
	}
	if p := v2.Performance(); *p.ErrorRateBefore != 0.1 || *p.ErrorRateAfter != 0.5 || p.RunsAfter != 20 {
		t.Errorf("performance: %+v", p)
	}
	if err := s.UpdatePerformance(ctx, "claude", 2, v2.Performance()); err != nil {
		t.Fatal(err)
	}
	if got := must[*Version](t)(s.Version("claude", 2)); got.Performance == nil || *got.Performance.QualityAfter != 65 || got.Edited {
		t.Errorf("v2.json performance: %+v", got.Performance)
	}

	// A person follows the suggestion: the rollback is counted.
	must[*Version](t)(s.Rollback(ctx, "claude", 1, "Ana", "v2 is worse", next.Add(time.Hour)))
	st = must[*Stats](t)(s.Stats(ctx, "claude"))
	if st.PromptVersionsCount != 3 || st.RollbackFrequency != round(1.0/3, 4) || len(st.Agents) != 1 {
		t.Errorf("after the rollback: %+v", st)
	}
	// Not a full sample: no flag.
	short := ComputeStats([]Run{{Agent: "x", Time: t0, Verdict: verdict.Approve}, {Agent: "x", Time: t0.Add(2 * time.Hour), Verdict: verdict.Reject}},
		map[string][]Event{"x": {{Version: 1, Time: t0.Add(time.Hour), Kind: KindApproval}}}, 20)
	if short.Agents[0].Comparisons[0].Worse || len(short.Flagged) != 0 {
		t.Errorf("a partial sample was flagged")
	}
}

func TestParseTime(t *testing.T) {
	for _, s := range []string{"2026-05-01T09:00:00Z", "2026-05-01T09:00:00.5Z", "2026-12-31T23:59:59.123456789Z",
		"2026-05-01T09:00:00.1234567891Z", "2026-05-01T09:00:00+02:00", "2026-05-01T09:00:00.25-07:30"} {
		want, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		if got := parseTime([]byte(`"` + s + `"`)); !got.Equal(want) {
			t.Errorf("%s: got %v, want %v", s, got, want)
		}
	}
	for _, bad := range []string{`""`, `"2026-05-01"`, `12`, `"2026-0x-01T09:00:00Z"`, `"2026-05-01T09:00:00Q"`} {
		if got := parseTime([]byte(bad)); !got.IsZero() {
			t.Errorf("%s: %v", bad, got)
		}
	}
}

// The quick agent filter never drops a line of the agent, however the
// line is spaced; a name that needs escaping is matched as written.
func TestAgentFilter(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "evaluations.jsonl")
	lines := `{"run_id":"r1","agent":"codex","verdict":"REJECT","time":"2026-05-01T09:00:00Z","edit_source":"command"}
{"run_id": "r2", "agent": "claude \"x\"", "verdict": "APPROVE", "time": "2026-05-01T09:01:00Z"}
{"run_id":"r3","agent":"claude \"x\"","verdict":"REJECT","counted":true,"time":"2026-05-01T09:02:00Z","failed_command":"go test ./...","tags":["type_error"]}
{"run_id":"r4","agent":"claude \"x\"2","verdict":"APPROVE","time":"2026-05-01T09:03:00Z"}
not json
`
	if err := os.WriteFile(p, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	runs := must[[]Run](t)(ReadRuns(p, "", `claude "x"`))
	if len(runs) != 2 || runs[0].RunID != "r2" || runs[1].RunID != "r3" || runs[1].Score != 0 || !runs[1].Failed() {
		t.Errorf("runs: %+v", runs)
	}
	os.MkdirAll(filepath.Join(dir, "memory"), 0o755)
	os.Rename(p, filepath.Join(dir, "memory", "evaluations.jsonl"))
	sigs := must[[]Signal](t)(Gather("", dir, `claude "x"`))
	if len(sigs) != 1 || sigs[0].Context.RunID != "r3" || sigs[0].Context.Iteration != 1 || sigs[0].Fold.Command != "go test ./..." {
		t.Errorf("signals: %+v", sigs)
	}
}

// A version after which reviewers reject more of the runs that pass is
// worse, though verification rejects none: a run rejected in review (a
// review event in the task events) counts in the before and after.
func TestCompareCountsReviews(t *testing.T) {
	r := newRepo(t)
	s := verdict.Open(filepath.Join(r.orket, "memory"))
	start := t0.Add(-time.Hour)
	var runs []Run
	for i := 0; i < 20; i++ {
		at := start.Add(time.Duration(i) * time.Minute)
		version := 0
		if i >= 10 {
			version = 1
		}
		id := fmt.Sprintf("run-%02d", i)
		if err := s.Record(&verdict.Evaluation{Time: at, RunID: id, Task: "T", Agent: "claude", Profile: "quick", EditSource: "command",
			Verdict: verdict.Approve, Score: 90, Guardrails: version}); err != nil {
			t.Fatal(err)
		}
		if i >= 10 && i%2 == 0 {
			if err := s.Event(&verdict.TaskEvent{Time: at.Add(30 * time.Second), Type: verdict.EventReview, Task: "T", Agent: "claude", RunID: id, Reason: "no"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	runs, err := ReadRuns(filepath.Join(r.orket, "memory", "evaluations.jsonl"), "", "claude")
	if err != nil {
		t.Fatal(err)
	}
	if err := markReviewed(filepath.Join(r.orket, "memory", "tasks.jsonl"), runs); err != nil {
		t.Fatal(err)
	}
	ps := make([]*Run, len(runs))
	for i := range runs {
		ps[i] = &runs[i]
	}
	c := compare(ps, Event{Version: 1, Kind: KindApproval, Time: start.Add(10 * time.Minute)}, time.Time{}, 10)
	if c.Before.ReviewRejectionRate != 0 || c.After.ReviewRejectionRate != 0.5 || c.After.ErrorRate != 0 || !c.Worse {
		t.Errorf("before %+v after %+v worse %v: want 0.5 of the runs after rejected in review, and worse", c.Before, c.After, c.Worse)
	}
}
