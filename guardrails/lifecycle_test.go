package guardrails

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/classify"
)

// Five failures of one kind by one agent, among others, yield exactly
// one proposal, with a deterministic id and text; proposing again adds
// nothing while it is pending.
func TestFiveFailuresOneProposal(t *testing.T) {
	r := newRepo(t)
	ls := r.fail(kafka, 5, t0)
	other := kafka
	other.agent = "codex"
	r.fail(other, 5, t0) // another agent's
	r.approveRuns("claude", 30, t0)
	s := r.store()
	sigs := r.signals("claude")
	if len(sigs) != 5 {
		t.Fatalf("signals: got %d, want 5 (an evaluation of a run with a lesson is folded into it)", len(sigs))
	}
	for _, sg := range sigs {
		if sg.Type != TestFailure || sg.Severity != Medium || sg.Context.Iteration == 0 {
			t.Errorf("signal %s: type %s severity %s iteration %d", sg.ID, sg.Type, sg.Severity, sg.Context.Iteration)
		}
	}
	res, err := s.Propose(context.Background(), "claude", sigs, nil, nil, t0.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Added) != 1 {
		t.Fatalf("proposals: got %d, want 1", len(res.Added))
	}
	p := res.Added[0]
	want := "Run `go generate ./...` before `go test ./...` in pkg/api: it failed 5 times with \"title of missing_dependency\""
	if p.LessonText != want {
		t.Errorf("lesson text:\n got %q\nwant %q", p.LessonText, want)
	}
	var ids []string
	for _, l := range ls {
		ids = append(ids, l.ID)
	}
	if diff := cmp.Diff(ids, p.SourceFeedback); diff != "" {
		t.Errorf("source_feedback (-want +got):\n%s", diff)
	}
	if p.Agent != "claude" || p.Status != StatusProposed || p.Count != 5 || p.Frequency != 1 || p.Impact != "medium" ||
		p.ConstraintUpdate.Type != Addition || p.ConstraintUpdate.Section != "pkg/api" || p.Confidence != 0.64 {
		t.Errorf("proposal: %+v", p)
	}
	// The same logs on another clone give the same proposal.
	again := Propose(s.Config, Input{Agent: "claude", Signals: r.signals("claude"), Now: t0.Add(48 * time.Hour)})
	if len(again) != 1 || again[0].ID != p.ID || again[0].LessonText != p.LessonText {
		t.Errorf("not deterministic: %+v", again)
	}
	res, err = s.Propose(context.Background(), "claude", r.signals("claude"), nil, nil, t0.Add(48*time.Hour))
	if err != nil || len(res.Added) != 0 {
		t.Fatalf("proposed again while pending: %v %v", res.Added, err)
	}
	// Four are not enough: fewer than min_samples.
	r2 := newRepo(t)
	r2.fail(kafka, 4, t0)
	if ps := Propose(DefaultConfig(), Input{Agent: "claude", Signals: r2.signals("claude")}); len(ps) != 0 {
		t.Errorf("4 signals gave %d proposals", len(ps))
	}
}

// The whole life: approve (v1), approve another (v2 with its changes),
// roll back (v3 = v1's text), and the eleventh version drops the oldest.
func TestVersionsLifecycle(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	r.fail(kafka, 5, t0)
	r.fail(dbEnv, 4, t0.Add(100*time.Hour))
	s := r.store()
	res := must[*ProposeResult](t)(s.Propose(ctx, "claude", r.signals("claude"), nil, nil, t0.Add(200*time.Hour)))
	if len(res.Added) != 2 {
		t.Fatalf("want 2 proposals, got %d", len(res.Added))
	}
	first, second := res.Added[0], res.Added[1]

	v1, p, err := s.Approve(ctx, first.ID[:8], "Ana", t0.Add(201*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if v1.Version != 1 || p.Status != StatusApplied || p.Version != 1 || p.DecidedBy != "Ana" {
		t.Fatalf("v1 %d, proposal %s in v%d by %q", v1.Version, p.Status, p.Version, p.DecidedBy)
	}
	md1 := read(t, filepath.Join(r.orket, "guardrails", "claude", "v1.md"))
	wantLine := "- " + first.LessonText + " <!-- " + first.ID + " -->"
	if !strings.Contains(md1, "## pkg/api\n\n"+wantLine+"\n") {
		t.Errorf("v1.md lacks the constraint under its scope:\n%s", md1)
	}
	var j1 Version
	if err := json.Unmarshal([]byte(read(t, filepath.Join(r.orket, "guardrails", "claude", "v1.json"))), &j1); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{first.ID}, j1.AppliedLessons); diff != "" {
		t.Errorf("applied_lessons: %s", diff)
	}
	if len(j1.Lines) != 1 || len(j1.Lines[0].Sources) != 5 || j1.Lines[0].Sources[0] != first.SourceFeedback[0] || j1.ApprovedBy != "Ana" {
		t.Errorf("v1.json lines/sources: %+v", j1)
	}
	if len(j1.Changes) != 1 || j1.Changes[0].Type != Addition || j1.Changes[0].NewText != first.LessonText {
		t.Errorf("v1 changes: %+v", j1.Changes)
	}

	v2 := must[*Version](t)(approve(s, second.ID, "Bo", t0.Add(202*time.Hour)))
	if v2.Version != 2 || v2.Previous != 1 {
		t.Fatalf("v2: %+v", v2)
	}
	want2 := []Change{{Type: Addition, Section: "pkg/db", NewText: second.LessonText, Line: second.ID}}
	if diff := cmp.Diff(want2, v2.Changes); diff != "" {
		t.Errorf("v2 changes (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(v2.Text, md1) {
		t.Errorf("v2 did not keep v1's text byte for byte:\n%s", v2.Text)
	}
	if v2.Text != read(t, s.Path("claude", 2)) {
		t.Error("Path(2) is not v2's text")
	}

	v3, err := s.Rollback(ctx, "claude", 1, "Ana", "v2 made things worse", t0.Add(203*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if v3.Version != 3 || v3.Text != md1 || v3.Restores != 1 || v3.Kind != KindRollback {
		t.Fatalf("v3: %d restores %d kind %s, text equal to v1: %v", v3.Version, v3.Restores, v3.Kind, v3.Text == md1)
	}
	want3 := []Change{{Type: Removal, Section: "pkg/db", OldText: second.LessonText, Line: second.ID}}
	if diff := cmp.Diff(want3, v3.Changes); diff != "" {
		t.Errorf("v3 changes (-want +got):\n%s", diff)
	}
	cur := must[*Version](t)(s.Current("claude"))
	if cur.Version != 3 || cur.Text != md1 || cur.Edited {
		t.Errorf("current: v%d edited %v", cur.Version, cur.Edited)
	}
	if d := must[string](t)(s.DiffVersions("claude", 2, 3)); !strings.Contains(d, "-- "+second.LessonText) {
		t.Errorf("diff v2 v3:\n%s", d)
	}
	// Rolling back to where it is changes nothing.
	if _, err := s.Rollback(ctx, "claude", 1, "Ana", "", t0.Add(204*time.Hour)); err == nil {
		t.Error("a rollback to the same text wrote a version")
	}

	// Versions 4..11 alternate rollbacks; the eleventh drops v1.
	for n := 4; n <= 11; n++ {
		to := 2
		if n%2 == 1 {
			to = 1
		}
		if _, err := s.Rollback(ctx, "claude", to, "Ana", "", t0.Add(time.Duration(204+n)*time.Hour)); err != nil {
			t.Fatalf("v%d: %v", n, err)
		}
	}
	kept := must[[]int](t)(s.Versions("claude"))
	if diff := cmp.Diff([]int{2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, kept); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(r.orket, "guardrails", "claude", "v1.md")); !os.IsNotExist(err) {
		t.Errorf("v1.md is still there: %v", err)
	}
	hist := must[[]Event](t)(s.History("claude"))
	if len(hist) != 11 || hist[0].Kept || !hist[10].Kept || hist[2].Kind != KindRollback || hist[2].Reason != "v2 made things worse" {
		t.Errorf("history: %+v", hist)
	}
	// A rollback to a dropped version says what is kept.
	if _, err := s.Rollback(ctx, "claude", 1, "Ana", "", t0.Add(300*time.Hour)); err == nil || !strings.Contains(err.Error(), "kept: v2") {
		t.Errorf("rollback to a dropped version: %v", err)
	}
	// The next version's number continues.
	r.fail(vetFail, 6, t0.Add(400*time.Hour))
	res = must[*ProposeResult](t)(s.Propose(ctx, "claude", r.signals("claude"), nil, nil, t0.Add(500*time.Hour)))
	if len(res.Added) != 1 {
		t.Fatalf("proposals after: %d", len(res.Added))
	}
	v12 := must[*Version](t)(approve(s, res.Added[0].ID, "Ana", t0.Add(501*time.Hour)))
	if v12.Version != 12 {
		t.Errorf("after v11: v%d", v12.Version)
	}
}

func approve(s *Store, id, by string, at time.Time) (*Version, error) {
	v, _, err := s.Approve(context.Background(), id, by, at)
	return v, err
}

func read(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Concurrent approvals each get their own version; none is lost.
func TestConcurrentApprovals(t *testing.T) {
	r := newRepo(t)
	s := r.store()
	const n = 8
	var ps []*Proposal
	for i := 0; i < n; i++ {
		c := Cluster{Kind: KindCategory, Key: hashKey("ck-", string(rune('a'+i))), Label: "x", Section: "pkg/p" + string(rune('a'+i))}
		p := &Proposal{Agent: "claude", CreatedAt: t0, Cluster: c, LessonText: "Rule " + string(rune('A'+i)),
			ConstraintUpdate: Change{Type: Addition, Section: c.Section, NewText: "Rule " + string(rune('A'+i))}}
		p.ID = proposalID("claude", c, 0)
		ps = append(ps, p)
	}
	if _, err := s.Proposals.Add(ps...); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for _, p := range ps {
		wg.Add(1)
		go func(id string) {
			defer wg.Done()
			// Each its own store, as separate processes would have.
			_, _, err := Open(r.orket, DefaultConfig()).Approve(context.Background(), id, "Ana", t0.Add(time.Hour))
			errs <- err
		}(p.ID)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	kept := must[[]int](t)(s.Versions("claude"))
	if diff := cmp.Diff([]int{1, 2, 3, 4, 5, 6, 7, 8}, kept); diff != "" {
		t.Fatalf("versions (-want +got):\n%s", diff)
	}
	cur := must[*Version](t)(s.Current("claude"))
	if got := len(Items(cur.Text)); got != n || len(cur.ActiveLines()) != n {
		t.Errorf("v8 holds %d lines (%d active), want %d:\n%s", got, len(cur.ActiveLines()), n, cur.Text)
	}
	all, _, _ := s.Proposals.List(ProposalFilter{})
	seen := map[int]bool{}
	for _, p := range all {
		if p.Status != StatusApplied || seen[p.Version] {
			t.Errorf("%s: %s in v%d", p.ID, p.Status, p.Version)
		}
		seen[p.Version] = true
	}
}

// TestPruneLogsSyncedVersions: a version orket sync brought (its files,
// no line in this clone's history.jsonl) stays in the history when it is
// dropped, and its number is not given again.
func TestPruneLogsSyncedVersions(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	r.fail(kafka, 5, t0)
	r.fail(dbEnv, 4, t0.Add(100*time.Hour))
	s := r.store()
	res := must[*ProposeResult](t)(s.Propose(ctx, "claude", r.signals("claude"), nil, nil, t0.Add(200*time.Hour)))
	if len(res.Added) != 2 {
		t.Fatalf("want 2 proposals, got %d", len(res.Added))
	}
	must[*Version](t)(approve(s, res.Added[0].ID, "Ana", t0.Add(201*time.Hour)))
	// As a clone that received v1 by orket sync has it: no history line.
	if err := os.Remove(filepath.Join(r.orket, "guardrails", "claude", "history.jsonl")); err != nil {
		t.Fatal(err)
	}
	must[*Version](t)(approve(s, res.Added[1].ID, "Ana", t0.Add(202*time.Hour)))
	for n := 3; n <= 11; n++ {
		if _, err := s.Rollback(ctx, "claude", 2-n%2, "Ana", "", t0.Add(time.Duration(202+n)*time.Hour)); err != nil {
			t.Fatalf("v%d: %v", n, err)
		}
	}
	if kept := must[[]int](t)(s.Versions("claude")); kept[0] != 2 {
		t.Fatalf("kept %v, want v1 dropped", kept)
	}
	hist := must[[]Event](t)(s.History("claude"))
	if len(hist) != 11 || hist[0].Version != 1 || hist[0].Kept || hist[0].By != "Ana" {
		t.Errorf("history: %+v", hist)
	}
}

// One hazard met in several scopes (a lint rule broken in three
// packages) is one proposal for everywhere, and its rule quotes the cause
// with one "before".
func TestOneHazardInManyScopesIsForEverywhere(t *testing.T) {
	r := newRepo(t)
	for i, pkg := range []string{"pkg/api", "pkg/users", "pkg/web"} {
		lint := failure{agent: "claude", cmd: "go run ./tools/lint .", step: "lint", tag: classify.LintError,
			first:  pkg + "/x.go:3: SH001 TODO without an owner",
			action: "Run the failing test alone and read its expectation before changing the code it covers",
			scope:  []string{pkg}}
		r.fail(lint, 2, t0.Add(time.Duration(i)*time.Hour))
	}
	res, err := r.store().Propose(context.Background(), "claude", r.signals("claude"), nil, nil, t0.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Added) != 1 {
		t.Fatalf("proposals: %d, want 1", len(res.Added))
	}
	p := res.Added[0]
	want := "Run the failing test alone and read its expectation before changing the code it covers: it failed 6 times with \"title of lint_error\""
	if p.LessonText != want || p.ConstraintUpdate.Section != Everywhere {
		t.Errorf("proposal %q in %q, want %q in %q", p.LessonText, p.ConstraintUpdate.Section, want, Everywhere)
	}
}
