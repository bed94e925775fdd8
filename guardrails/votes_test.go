package guardrails

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/verdict"
)

// A line gains a vote when a run given it avoids its failure, loses one
// when the failure recurs anyway, and gets none from a run that failed
// on something else; a run's later vote on a line replaces its earlier.
func TestVotes(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	r.fail(kafka, 5, t0)
	for i, reason := range []string{"The example is broken", "examples fail on docker", "The Kafka examples do not work"} {
		r.reject("claude", reason, []string{"docs/kafka"}, t0.Add(time.Duration(10+i)*time.Hour))
	}
	s := r.store()
	res := must[*ProposeResult](t)(s.Propose(ctx, "claude", r.signals("claude"), nil, nil, t0.Add(20*time.Hour)))
	if len(res.Added) != 2 {
		t.Fatalf("proposals: %d", len(res.Added))
	}
	fold, cat := res.Added[0], res.Added[1]
	must[*Version](t)(approve(s, fold.ID, "Ana", t0.Add(21*time.Hour)))
	v := must[*Version](t)(approve(s, cat.ID, "Ana", t0.Add(21*time.Hour)))
	xs, votes := OpenExposures(r.orket), OpenVotes(r.orket)

	type runCase struct {
		run     string
		scope   []string
		verdict string
		signals []Signal
	}
	kafkaAgain := SignalFromLesson(kafka.lesson(99, t0.Add(30*time.Hour)))
	vetAgain := SignalFromLesson(vetFail.lesson(98, t0.Add(30*time.Hour)))
	// A failure known from the evaluation alone (no directory) matches too.
	evOnly, _ := SignalFromEvaluation(&verdict.Evaluation{RunID: "r5", Agent: "claude", Verdict: verdict.Reject, Counted: true,
		FailedCommand: kafka.cmd, Tags: []string{kafka.tag}, FirstError: kafka.first, Time: t0.Add(30 * time.Hour)})
	cases := []runCase{
		{"r1", []string{"pkg/api"}, verdict.Approve, nil},                 // fold +1 (the docs line does not apply)
		{"r2", []string{"pkg/api"}, verdict.Reject, []Signal{kafkaAgain}}, // fold -1
		{"r3", []string{"pkg/api"}, verdict.Reject, []Signal{vetAgain}},   // no vote
		{"r4", nil, verdict.Conditional, nil},                             // both +1
		{"r5", []string{"pkg/api/v2"}, verdict.Reject, []Signal{evOnly}},  // fold -1
		{"r6", []string{"docs/kafka/intro"}, verdict.Approve, nil},        // docs +1 ...
		{"r7", []string{"docs"}, verdict.Approve, []Signal{}},             // docs +1
	}
	for i, c := range cases {
		at := t0.Add(time.Duration(40+i) * time.Hour)
		if i%2 == 0 {
			x := NewExposure(c.run, "claude", at, v, c.scope, nil)
			if err := xs.Record(x); err != nil {
				t.Fatal(err)
			}
			found := must[*Exposure](t)(xs.Find(c.run))
			if err := votes.Record(VotesFor(found, v, Outcome{RunID: c.run, Agent: "claude", Time: at, Verdict: c.verdict, Signals: c.signals})...); err != nil {
				t.Fatal(err)
			}
			continue
		}
		// As a run does: exposed to the current version, its votes
		// through the store.
		x := NewExposure(c.run, "claude", at, must[*Version](t)(s.Current("claude")), c.scope, nil)
		if err := xs.Record(x); err != nil {
			t.Fatal(err)
		}
		if x.Version != v.Version {
			t.Fatalf("exposed to v%d", x.Version)
		}
		must[[]Vote](t)(s.Vote(Outcome{RunID: c.run, Agent: "claude", Time: at, Verdict: c.verdict, Signals: c.signals}))
	}
	if vs := must[[]Vote](t)(s.Vote(Outcome{RunID: "never-exposed", Verdict: verdict.Approve})); len(vs) != 0 {
		t.Errorf("a run without exposure voted: %v", vs)
	}
	// ... then r6 is rejected for examples: its vote turns down.
	rej := SignalFromFeedback(r.reject("claude", "the example does not run", []string{"docs/kafka"}, t0.Add(60*time.Hour)))
	x6 := must[*Exposure](t)(xs.Find("r6"))
	must[struct{}](t)(struct{}{}, votes.Record(VotesFor(x6, v, Outcome{RunID: "r6", Agent: "claude", Time: t0.Add(61 * time.Hour),
		Verdict: verdict.Approve, Signals: []Signal{rej}})...))
	got := must[map[string]Tally](t)(votes.Tally("claude"))
	want := map[string]Tally{fold.ID: {Up: 2, Down: 2}, cat.ID: {Up: 2, Down: 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tally (-want +got):\n%s", diff)
	}
	// The review of a line shows its votes.
	mod := &Proposal{ID: "gp-000000000001", Agent: "claude", ConstraintUpdate: Change{Type: Modification, Section: "pkg/api", OldText: fold.LessonText, NewText: "x", Line: fold.ID}}
	it := must[*ReviewItem](t)(s.ReviewItem(ctx, mod, got, nil))
	if it.Votes == nil || *it.Votes != (Tally{2, 2}) {
		t.Errorf("review votes: %v", it.Votes)
	}
}

// A line whose failure keeps recurring (more down votes than up) and
// whose cluster grew by min_cluster_size since it was applied is
// proposed for modification.
func TestRecurringLineIsModified(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	r.fail(kafka, 5, t0)
	s := r.store()
	p := must[*ProposeResult](t)(s.Propose(ctx, "claude", r.signals("claude"), nil, nil, t0.Add(10*time.Hour))).Added[0]
	must[*Version](t)(approve(s, p.ID, "Ana", t0.Add(10*time.Hour)))
	more := kafka
	for i := 0; i < 3; i++ {
		must[struct{}](t)(struct{}{}, r.les.Append(more.lesson(100+i, t0.Add(time.Duration(20+i)*time.Hour))))
	}
	votes := map[string]Tally{p.ID: {Up: 1, Down: 3}}
	res := must[*ProposeResult](t)(s.Propose(ctx, "claude", r.signals("claude"), map[string]Tally{p.ID: {Up: 3, Down: 1}}, nil, t0.Add(30*time.Hour)))
	if len(res.Added) != 0 {
		t.Fatalf("a line that works was proposed again: %+v", res.Added[0])
	}
	res = must[*ProposeResult](t)(s.Propose(ctx, "claude", r.signals("claude"), votes, nil, t0.Add(30*time.Hour)))
	if len(res.Added) != 1 || res.Added[0].ConstraintUpdate.Type != Modification || res.Added[0].ConstraintUpdate.Line != p.ID {
		t.Fatalf("modification: %+v", res.Added)
	}
	v2 := must[*Version](t)(approve(s, res.Added[0].ID, "Ana", t0.Add(31*time.Hour)))
	if len(v2.Lines) != 1 || v2.Lines[0].ID != res.Added[0].ID || len(Items(v2.Text)) != 1 || v2.Changes[0].Type != Modification {
		t.Errorf("v2: %+v\n%s", v2, v2.Text)
	}
}
