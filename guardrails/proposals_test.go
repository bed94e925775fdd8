package guardrails

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/classify"
	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/store"
)

func TestSeverityRules(t *testing.T) {
	tests := []struct {
		name string
		in   SeverityInput
		want Severity
	}{
		{"security", SeverityInput{Type: SecurityFinding}, Critical},
		{"escalated verdict", SeverityInput{Type: QualityScore, Verdict: "ESCALATE"}, Critical},
		{"escalated lesson", SeverityInput{Type: TestFailure, Code: "E_ESCALATED", Tags: []string{"flaky"}}, Critical},
		{"flaky", SeverityInput{Type: TestFailure, Tags: []string{"test_assertion_failed", "flaky"}}, Low},
		{"pre-existing", SeverityInput{Type: TestFailure, Tags: []string{"type_error"}, PreExisting: true}, Low},
		{"uncounted reject", SeverityInput{Type: QualityScore, Verdict: "REJECT"}, Low},
		{"conditional", SeverityInput{Type: QualityScore, Verdict: "CONDITIONAL"}, Low},
		{"review", SeverityInput{Type: ReviewRejection}, High},
		{"edit command", SeverityInput{Type: ValidationFailure, Step: "edit"}, High},
		{"assertion", SeverityInput{Type: TestFailure, Tags: []string{"test_assertion_failed"}}, High},
		{"counted reject", SeverityInput{Type: QualityScore, Verdict: "REJECT", Counted: true}, High},
		{"environment", SeverityInput{Type: TestFailure, Tags: []string{"missing_env_var"}}, Medium},
		{"lint", SeverityInput{Type: ValidationFailure, Tags: []string{"lint_error"}}, Medium},
		{"correction", SeverityInput{Type: HumanCorrection}, Medium},
		{"unclassified", SeverityInput{Type: ValidationFailure}, Medium},
	}
	for _, tt := range tests {
		if got := SeverityOf(tt.in); got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, got, tt.want)
		}
	}
}

// Status changes follow the rules, a rejection needs a reason, the
// latest status by time wins whatever the order of the lines (as after
// a merge), and a rejected cluster is proposed again only once it grew
// by min_cluster_size.
func TestTransitionsAndRegrowth(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	r.fail(kafka, 5, t0)
	s := r.store()
	p := must[*ProposeResult](t)(s.Propose(ctx, "claude", r.signals("claude"), nil, nil, t0.Add(10*time.Hour))).Added[0]
	if _, err := s.Reject(ctx, p.ID, "Ana", "  ", t0.Add(11*time.Hour)); !errors.Is(err, ErrReasonRequired) {
		t.Errorf("reject without a reason: %v", err)
	}
	q := must[*Proposal](t)(s.Defer(ctx, p.ID, "Ana", t0.Add(11*time.Hour)))
	if q.Status != StatusDeferred || !q.Status.Pending() {
		t.Errorf("deferred: %s", q.Status)
	}
	if got := must[*ProposeResult](t)(s.Propose(ctx, "claude", r.signals("claude"), nil, nil, t0.Add(12*time.Hour))); len(got.Added) != 0 {
		t.Errorf("a deferred proposal was proposed again")
	}
	q = must[*Proposal](t)(s.Reject(ctx, p.ID, "Ana", "we vendor kafka-go", t0.Add(12*time.Hour)))
	if q.Status != StatusRejected || q.Reason != "we vendor kafka-go" || q.DecidedBy != "Ana" {
		t.Errorf("rejected: %+v", q)
	}
	if _, _, err := s.Approve(ctx, p.ID, "Bo", t0.Add(13*time.Hour)); !errors.Is(err, ErrTransition) {
		t.Errorf("approving a rejected proposal: %v", err)
	}
	if _, err := s.Defer(ctx, p.ID, "Bo", t0.Add(13*time.Hour)); !errors.Is(err, ErrTransition) {
		t.Errorf("deferring a rejected proposal: %v", err)
	}
	// Two more of the same: not yet.
	more := func(from, n int, at time.Time) {
		for i := 0; i < n; i++ {
			must[struct{}](t)(struct{}{}, r.les.Append(kafka.lesson(from+i, at.Add(time.Duration(i)*time.Minute))))
		}
	}
	more(100, 2, t0.Add(20*time.Hour))
	if got := must[*ProposeResult](t)(s.Propose(ctx, "claude", r.signals("claude"), nil, nil, t0.Add(21*time.Hour))); len(got.Added) != 0 {
		t.Errorf("proposed again after 2 new failures")
	}
	more(200, 1, t0.Add(22*time.Hour))
	got := must[*ProposeResult](t)(s.Propose(ctx, "claude", r.signals("claude"), nil, nil, t0.Add(23*time.Hour)))
	if len(got.Added) != 1 || got.Added[0].ID == p.ID || got.Added[0].Generation != 1 || got.Added[0].Count != 8 {
		t.Fatalf("after 3 new failures: %+v", got.Added)
	}
	all, _, _ := s.Proposals.List(ProposalFilter{Agent: "claude"})
	pending, _, _ := s.Proposals.List(ProposalFilter{Agent: "claude", Pending: true})
	if len(all) != 2 || len(pending) != 1 || pending[0].ID != got.Added[0].ID {
		t.Errorf("list: %d, pending %d", len(all), len(pending))
	}

	// The store read with its lines reversed (a merge may order them
	// any way) says the same.
	b := read(t, s.Proposals.Path())
	lines := strings.Split(strings.TrimSpace(b), "\n")
	for i, j := 0, len(lines)-1; i < j; i, j = i+1, j-1 {
		lines[i], lines[j] = lines[j], lines[i]
	}
	rev := OpenProposals(t.TempDir())
	os.MkdirAll(filepath.Dir(rev.Path()), 0o755)
	os.WriteFile(rev.Path(), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	revAll, _, _ := rev.List(ProposalFilter{})
	if diff := cmp.Diff(all, revAll); diff != "" {
		t.Errorf("reversed (-want +got):\n%s", diff)
	}
	// An id prefix finds a proposal; an unknown one does not.
	if _, err := s.Proposals.Get("gp-ffff"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
}

// Retention per agent: the oldest proposals beyond max entries, and
// those whose last word is older than max age, go with their status
// lines; the rest stay.
func TestProposalRetention(t *testing.T) {
	s := Open(t.TempDir(), DefaultConfig())
	var ps []*Proposal
	for i := 0; i < 6; i++ {
		agent := "a"
		if i%2 == 1 {
			agent = "b"
		}
		c := Cluster{Kind: KindCategory, Key: hashKey("ck-", string(rune('a'+i)))}
		p := &Proposal{Agent: agent, CreatedAt: t0.Add(time.Duration(i) * 24 * time.Hour), Cluster: c, LessonText: "x",
			ConstraintUpdate: Change{Type: Addition, Section: Everywhere, NewText: "rule " + string(rune('a'+i))}}
		p.ID = proposalID(agent, c, 0)
		ps = append(ps, p)
	}
	must[[]*Proposal](t)(s.Proposals.Add(ps...))
	// The oldest of a was decided recently: its age counts from then.
	must[*Proposal](t)(s.Proposals.SetStatus(ps[0].ID, Decision{Status: StatusRejected, By: "x", Reason: "no", Time: t0.Add(30 * 24 * time.Hour)}))
	n, err := s.Proposals.Prune(2, 20*24*time.Hour, t0.Add(22*24*time.Hour+12*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	left, _, _ := s.Proposals.List(ProposalFilter{})
	var ids []string
	for _, p := range left {
		ids = append(ids, p.ID)
	}
	// Too old at day 22.5: created before day 2.5 and not decided since:
	// 1 and 2. Of a, 0 and 4 are left, of b 3 and 5: two each.
	want := []string{ps[0].ID, ps[3].ID, ps[4].ID, ps[5].ID}
	if diff := cmp.Diff(want, ids); diff != "" || n != 2 {
		t.Errorf("kept %d removed (-want +got):\n%s", n, diff)
	}
	if left[0].Status != StatusRejected {
		t.Errorf("a status line was lost: %s", left[0].Status)
	}
	// One per agent: the newest of each.
	if n, err := s.Proposals.Prune(1, 0, t0); err != nil || n != 2 {
		t.Fatalf("prune to 1: %d %v", n, err)
	}
	left, _, _ = s.Proposals.List(ProposalFilter{})
	if len(left) != 2 || left[0].ID != ps[4].ID || left[1].ID != ps[5].ID {
		t.Errorf("left: %v %v", left[0].ID, left[1].ID)
	}
	if strings.Contains(read(t, s.Proposals.Path()), ps[0].ID) {
		t.Error("a pruned proposal's status line stayed")
	}
}

// Nothing is written through a symlink: an agent directory that is a
// symlink to elsewhere is refused, and the place it points to stays
// empty.
func TestNoWriteThroughSymlink(t *testing.T) {
	r := newRepo(t)
	s := r.store()
	outside := t.TempDir()
	os.MkdirAll(filepath.Join(r.orket, "guardrails"), 0o755)
	if err := os.Symlink(outside, filepath.Join(r.orket, "guardrails", "claude")); err != nil {
		t.Fatal(err)
	}
	c := Cluster{Kind: KindCategory, Key: "ck-1", Section: Everywhere}
	p := &Proposal{Agent: "claude", CreatedAt: t0, Cluster: c, LessonText: "x", ConstraintUpdate: Change{Type: Addition, Section: Everywhere, NewText: "x"}}
	p.ID = proposalID("claude", c, 0)
	must[[]*Proposal](t)(s.Proposals.Add(p))
	if _, err := approve(s, p.ID, "Ana", t0); !errors.Is(err, fsroot.ErrEscapes) {
		t.Errorf("approve through a symlink: %v", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("wrote outside: %v", ents)
	}
	// A version file replaced by a symlink is refused too.
	os.Remove(filepath.Join(r.orket, "guardrails", "claude"))
	must[*Version](t)(approve(s, p.ID, "Ana", t0))
	target := filepath.Join(outside, "x.md")
	os.WriteFile(target, []byte("mine\n"), 0o644)
	os.Symlink(target, filepath.Join(r.orket, "guardrails", "claude", "v2.md"))
	if _, err := s.Rollback(context.Background(), "claude", 1, "Ana", "", t0); err == nil {
		t.Log("rollback refused for another reason") // v1 is current: nothing to roll back to
	}
	c2 := Cluster{Kind: KindCategory, Key: "ck-2", Section: Everywhere}
	p2 := &Proposal{Agent: "claude", CreatedAt: t0, Cluster: c2, LessonText: "y", ConstraintUpdate: Change{Type: Addition, Section: Everywhere, NewText: "y"}}
	p2.ID = proposalID("claude", c2, 0)
	must[[]*Proposal](t)(s.Proposals.Add(p2))
	if _, err := approve(s, p2.ID, "Ana", t0); !errors.Is(err, store.ErrSymlink) {
		t.Errorf("approve over a symlinked v2.md: %v", err)
	}
	if got := read(t, target); got != "mine\n" {
		t.Errorf("the symlink's target changed: %q", got)
	}
}

// Agent names that are not file names get a hashed directory.
func TestAgentDir(t *testing.T) {
	for name, want := range map[string]string{"claude": "claude", "codex-1.2_x": "codex-1.2_x", "": "default", "claude code": "claude code", "ü": "ü"} {
		if got := AgentDir(name); got != want {
			t.Errorf("%q: %q", name, got)
		}
	}
	for _, bad := range []string{"../x", ".hidden", "a/b", `a\b`, "a\x01", strings.Repeat("x", 256), "\xff"} {
		if got := AgentDir(bad); !strings.HasPrefix(got, "agent-") || len(got) != 22 {
			t.Errorf("%q: %q", bad, got)
		}
	}
}

// What orket sync brings from another clone: versions without their
// history lines (read from their json), and a clash of two texts under
// one number kept as a proposal, which approving merges by adding the
// constraints the clashing text has and the kept one lacks.
func TestSyncedVersionsAndClash(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	s := r.store()
	dir := filepath.Join(r.orket, "guardrails", "claude code")
	os.MkdirAll(dir, 0o755)
	kept := NewDoc("claude code") + "\n## pkg/api\n\n- Run `go generate ./...` first <!-- gp-aaaaaaaaaaaa -->\n"
	os.WriteFile(filepath.Join(dir, "v1.md"), []byte(kept), 0o644)
	os.WriteFile(filepath.Join(dir, "v1.json"), []byte(`{"agent":"claude code","version":1,"created_at":"2026-07-14T09:00:00Z","approved_by":"ana","approval":{"by":"ana","clone":"elsewhere:/src/app","time":"2026-07-14T09:00:00Z"},"applied_lessons":["gp-aaaaaaaaaaaa"],"lines":[{"id":"gp-aaaaaaaaaaaa","section":"pkg/api","text":"Run `+"`go generate ./...`"+` first"}]}`), 0o644)
	agents := must[[]string](t)(s.Agents())
	if diff := cmp.Diff([]string{"claude code"}, agents); diff != "" {
		t.Fatalf("agents: %s", diff)
	}
	hist := must[[]Event](t)(s.History("claude code"))
	if len(hist) != 1 || hist[0].Version != 1 || hist[0].By != "ana" || hist[0].Kind != KindApproval || !hist[0].Kept {
		t.Fatalf("history from the json: %+v", hist)
	}
	clashing := NewDoc("claude code") + "\n## docs\n\n- Test the examples <!-- gp-bbbbbbbbbbbb -->\n"
	rec, _ := json.Marshal(map[string]any{"schema_version": store.ProposalSchema, "id": "clash-claude code-v1-0a0b0c0d0e0f", "type": ClashType,
		"time": "2026-07-14T10:00:00Z", "agent": "claude code", "status": "proposed", "version": 1, "lesson_text": "Two clones wrote v1",
		"kept": map[string]any{"md": kept}, "clashing": map[string]any{"md": clashing,
			"json": map[string]any{"version": 1, "lines": []map[string]any{{"id": "gp-bbbbbbbbbbbb", "section": "docs", "text": "Test the examples", "sources": []string{"fb-1"}}}}}})
	os.WriteFile(s.Proposals.Path(), append(rec, '\n'), 0o644)
	pending, _, _ := s.Proposals.List(ProposalFilter{Pending: true})
	if len(pending) != 1 || pending[0].Clash == nil || pending[0].Agent != "claude code" {
		t.Fatalf("clash proposal: %+v", pending)
	}
	it := must[*ReviewItem](t)(s.ReviewItem(ctx, pending[0], nil, nil))
	if diff := cmp.Diff([]string{"@@ docs", "+ Test the examples"}, it.Diff); diff != "" || it.Old != 1 || it.New != 2 {
		t.Errorf("clash box (-want +got):\n%s", diff)
	}
	v2, p, err := s.Approve(ctx, pending[0].ID, "Ana", t0)
	if err != nil {
		t.Fatal(err)
	}
	if v2.Version != 2 || p.Status != StatusApplied || len(v2.Changes) != 1 || len(Items(v2.Text)) != 2 || !strings.HasPrefix(v2.Text, kept) {
		t.Errorf("merged v2: %+v\n%s", v2, v2.Text)
	}
	if len(v2.Lines) != 2 || v2.Lines[1].ID != "gp-bbbbbbbbbbbb" || len(v2.Lines[1].Sources) != 1 {
		t.Errorf("lines: %+v", v2.Lines)
	}
	hist = must[[]Event](t)(s.History("claude code"))
	if len(hist) != 2 {
		t.Errorf("history: %+v", hist)
	}
}

// TestSpreadCluster: a failure met in two scopes is proposed at its
// second signal, for everywhere; met twice in one scope, it waits for
// its third.
func TestSpreadCluster(t *testing.T) {
	r := newRepo(t)
	r.fail(dbEnv, 3, t0) // enough signals for proposals at all
	inOne := vetFail
	r.fail(inOne, 2, t0.Add(5*time.Hour))
	spread := failure{agent: "claude", cmd: "go run ./tools/lint ./...", step: "lint", tag: classify.LintError,
		first: "pkg/a/a.go:3:1: XL01 exported function A has no doc comment", action: "run the linter (and the formatter) locally on the touched files",
		scope: []string{"pkg/a"}}
	r.fail(spread, 1, t0.Add(8*time.Hour))
	spread.scope = []string{"pkg/b"}
	must[struct{}](t)(struct{}{}, r.les.Append(spread.lesson(9, t0.Add(9*time.Hour))))

	got := Propose(DefaultConfig(), Input{Agent: "claude", Signals: r.signals("claude"), Now: t0.Add(10 * time.Hour)})
	var sections []string
	for _, p := range got {
		sections = append(sections, fmt.Sprintf("%s %d %s", p.Cluster.Section, p.Count, p.LessonText))
	}
	if len(got) != 2 || got[1].Count != 2 || got[1].Cluster.Section != Everywhere ||
		!strings.Contains(got[1].LessonText, "`go run ./tools/lint ./...`") {
		t.Fatalf("proposals:\n%s", strings.Join(sections, "\n"))
	}
	r.fail(inOne, 1, t0.Add(11*time.Hour))
	if got := Propose(DefaultConfig(), Input{Agent: "claude", Signals: r.signals("claude"), Now: t0.Add(12 * time.Hour)}); len(got) != 3 {
		t.Errorf("a third signal in one scope: %d proposals", len(got))
	}

	// A setting of its own is lowered by one, not to two; a run retried
	// with a wider scope is the same place.
	strict := DefaultConfig()
	strict.MinClusterSize = 4
	wider := failure{agent: "claude", cmd: "go run ./tools/lint ./...", step: "lint", tag: classify.LintError,
		first: "pkg/c/c.go:3:1: XL02 package c has no doc comment", action: "run the linter", scope: []string{"pkg/c"}}
	r.fail(wider, 1, t0.Add(13*time.Hour))
	wider.scope = []string{"pkg/c", "pkg/c/internal"}
	must[struct{}](t)(struct{}{}, r.les.Append(wider.lesson(9, t0.Add(14*time.Hour))))
	for _, p := range Propose(DefaultConfig(), Input{Agent: "claude", Signals: r.signals("claude"), Now: t0.Add(15 * time.Hour)}) {
		if strings.Contains(p.LessonText, "XL02") {
			t.Errorf("proposed from one place, retried with a wider scope: %s", p.LessonText)
		}
	}
	for _, p := range Propose(strict, Input{Agent: "claude", Signals: r.signals("claude"), Now: t0.Add(15 * time.Hour)}) {
		if strings.Contains(p.LessonText, "XL01") {
			t.Errorf("min_cluster_size 4: proposed at 2 signals: %s", p.LessonText)
		}
	}
}
