package orket

import (
	"context"
	"testing"

	"github.com/orket/orket/config"
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
