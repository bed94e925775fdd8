package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/guardrails"
	"github.com/orket/orket/verdict"
)

// TestStatsOnAKnownHistory runs orket stats on a generated history whose
// error rates are known: 30% before v1, 10% with v1, 50% with v2, so v2
// made things worse and is flagged with a suggested rollback to v1 (never
// made by orket); a second agent at 20%.
func TestStatsOnAKnownHistory(t *testing.T) {
	bin := orketBinary(t)
	dir := t.TempDir()
	shell(t, dir, "git init -q")
	orketDir := filepath.Join(dir, ".orket")
	evals := verdict.Open(filepath.Join(orketDir, "memory"))
	st := guardrails.Open(orketDir, guardrails.DefaultConfig())
	t0 := time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC)
	// runs records n runs of agent from start, a minute apart, errs of
	// every ten rejected, each given version.
	runs := func(agent string, start time.Time, n, errs, version int) time.Time {
		at := start
		for i := 0; i < n; i++ {
			at = start.Add(time.Duration(i) * time.Minute)
			e := &verdict.Evaluation{Time: at, RunID: fmt.Sprintf("%s-%d-%d", agent, start.Unix(), i), Task: "T-" + agent, Agent: agent,
				Profile: "test", EditSource: "command", Verdict: verdict.Approve, Score: 90, Guardrails: version}
			if i%10 < errs {
				e.Verdict, e.Score, e.Counted = verdict.Reject, 40, true
			}
			if err := evals.Record(e); err != nil {
				t.Fatal(err)
			}
		}
		return at.Add(time.Minute)
	}
	approve := func(text string, at time.Time) {
		p := &guardrails.Proposal{ID: "gp-" + fmt.Sprintf("%012x", len(text)), Agent: "claude", CreatedAt: at,
			Cluster:          guardrails.Cluster{Kind: guardrails.KindCategory, Key: "ck-" + text, Section: guardrails.Everywhere},
			LessonText:       text,
			ConstraintUpdate: guardrails.Change{Type: guardrails.Addition, Section: guardrails.Everywhere, NewText: text}}
		if _, err := st.Proposals.Add(p); err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.Approve(context.Background(), p.ID, "alice", at); err != nil {
			t.Fatal(err)
		}
	}
	next := runs("claude", t0, 20, 3, 0)
	approve("Rule A", next)
	next = runs("claude", next.Add(time.Minute), 20, 1, 1)
	approve("Rule Bee", next)
	runs("claude", next.Add(time.Minute), 20, 5, 2)
	runs("codex", t0, 10, 2, 0)

	stats := exec.Command(bin, "stats", "--json")
	stats.Dir = dir
	out, err := stats.Output()
	if err != nil {
		t.Fatalf("orket stats --json: %v", err)
	}
	var res struct {
		Stats guardrails.Stats `json:"stats"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	s := res.Stats
	if diff := cmp.Diff(map[string]float64{"claude": 0.3, "codex": 0.2}, s.ErrorRateByAgent); diff != "" {
		t.Errorf("error_rate_by_agent (-want +got):\n%s", diff)
	}
	if s.Runs != 70 || s.LessonsAppliedCount != 2 || s.PromptVersionsCount != 2 || s.RollbackFrequency != 0 {
		t.Errorf("stats: %+v", s)
	}
	if len(s.Flagged) != 1 || s.Flagged[0].Agent != "claude" || s.Flagged[0].Version != 2 || s.Flagged[0].Suggest.To != 1 {
		t.Fatalf("flagged: %+v", s.Flagged)
	}
	c := s.Agents[0].Comparisons
	if len(c) != 2 || c[0].Before.ErrorRate != 0.3 || c[0].After.ErrorRate != 0.1 || c[0].Worse ||
		c[1].Before.ErrorRate != 0.1 || c[1].After.ErrorRate != 0.5 || !c[1].Worse {
		t.Errorf("comparisons: %+v", c)
	}

	// The same for a person; and nothing was rolled back.
	human := exec.Command(bin, "stats")
	human.Dir = dir
	text, err := human.Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"claude  60    30%", "codex   10    20%",
		"v1       approval  20, 30%, 0%, 75.0", "20, 10%, 0%, 85.0",
		"v2       approval  20, 10%, 0%, 85.0", "20, 50%, 0%, 65.0                       WORSE",
		"! claude v2 made things worse", "a person may run: orket guardrails rollback --agent claude --to 1",
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("orket stats does not say %q:\n%s", want, text)
		}
	}
	cur, err := st.Current("claude")
	if err != nil || cur.Version != 2 {
		t.Errorf("the current version is %v (%v): orket stats must never roll back", cur, err)
	}
}
