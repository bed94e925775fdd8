package orket

import (
	"context"
	"testing"
	"time"

	"github.com/orket/orket/config"
	"github.com/orket/orket/txn"
)

// BenchmarkBaselineCached measures what the baseline costs a failure of
// the same step on the same tree in the same environment, once its result
// is cached: the share of the step's own time (the target is at most 5%).
// The step sleeps 300 ms, so a baseline that ran it again would cost 100%.
func BenchmarkBaselineCached(b *testing.B) {
	repo, _ := testRepo(b)
	cfg, err := config.Parse([]byte(`verify:
  default: quick
  profiles:
    quick:
      - {name: build, run: "true"}
      - {name: test, run: "sleep 0.3; ! grep -q BROKEN pkg/a.txt"}
`), "orket.yaml")
	if err != nil {
		b.Fatal(err)
	}
	run := func() *Record {
		req := Request{Repo: repo, Config: cfg, Edit: CommandEdit{Argv: []string{"sh", "-c", "echo BROKEN > pkg/a.txt"}},
			Scope: []string{"pkg"}, AutoConfirm: true, Env: OSEnv()}
		rec, err := Execute(context.Background(), req, nil)
		if rec == nil || rec.Baseline == nil {
			b.Fatalf("no baseline: %v", err)
		}
		return rec
	}
	first := run()
	if first.Baseline.CachedFrom != "" {
		b.Fatalf("the first baseline was cached from %s", first.Baseline.CachedFrom)
	}
	var baseline, step int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rec := run()
		if rec.Baseline.CachedFrom != first.RunID {
			b.Fatalf("baseline cached from %q, want %s", rec.Baseline.CachedFrom, first.RunID)
		}
		baseline += rec.Timings["baseline_ms"]
		step += rec.Steps[1].DurationMS
	}
	b.ReportMetric(float64(baseline)/float64(b.N), "baseline-ms/op")
	b.ReportMetric(100*float64(baseline)/float64(step), "%-of-step")
	b.ReportMetric(float64(first.Timings["baseline_ms"]), "uncached-baseline-ms")
}

// BenchmarkKeptRun is a whole kept run on a small repository, as orket
// run makes it with orket init's defaults (the kernel sandbox where the
// kernel has it): an edit command that appends a line, a no-op step.
func BenchmarkKeptRun(b *testing.B) {
	repo, _ := testRepo(b)
	cfg, err := config.Parse([]byte("verify:\n  default: q\n  profiles:\n    q: [{name: ok, run: \"true\"}]\n"), "orket.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := Request{Repo: repo, Config: cfg, Edit: CommandEdit{Argv: []string{"sh", "-c", "echo x >> pkg/a.txt"}},
			Scope: []string{"pkg"}, AutoConfirm: true, Env: OSEnv()}
		if rec, err := Execute(context.Background(), req, nil); err != nil {
			b.Fatalf("%v %v", rec, err)
		}
	}
}

// TestCleanTreeContent: the name of a clean tree's content that orket
// doctor seeds the baseline cache under is the one a run's snapshot of
// that tree gets, so that the run finds what doctor measured.
func TestCleanTreeContent(t *testing.T) {
	repo, _ := testRepo(t)
	sh(t, repo.Root, "git add -A && git commit -qm clean")
	tx, err := repo.Begin(txn.Start{RunID: "t", Command: "test", Time: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	r := &run{req: Request{Repo: repo}}
	got := r.snapshotContent(tx.Snapshot().Commit)
	if err := tx.End(); err != nil {
		t.Fatal(err)
	}
	head, err := repo.Git.Head()
	if err != nil {
		t.Fatal(err)
	}
	if want := cleanTreeContent(r.treeOfCommit(head.Hash())); got != want || got.IsZero() {
		t.Errorf("a clean snapshot's content is %s, cleanTreeContent of HEAD's tree %s", got, want)
	}
	// A dirty tree is another content.
	sh(t, repo.Root, "echo dirty >> pkg/a.txt")
	tx, err = repo.Begin(txn.Start{RunID: "t2", Command: "test", Time: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	if dirty := r.snapshotContent(tx.Snapshot().Commit); dirty == got {
		t.Error("a dirty tree has the clean tree's content name")
	}
	tx.End()
}
