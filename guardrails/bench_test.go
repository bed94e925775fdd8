package guardrails

// Benchmarks for docs/benchmarks.md: orket stats over a year of a busy
// team's records (100,000 evaluations) under 200 ms. Run with
//
//	go test -run '^$' -bench . -benchtime 20x ./guardrails

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/orket/orket/store"
	"github.com/orket/orket/verdict"
)

// busyRepo writes n evaluations over a year: five agents, one run in
// five rejected (with its failed step, tags, first error and preflight
// checks), every run's exposure (two advised folds), and ten guardrails
// versions per agent spread over the year.
func busyRepo(b *testing.B, n int) *Store {
	b.Helper()
	dir := b.TempDir()
	s := Open(dir, DefaultConfig())
	evals := &store.Log{Path: filepath.Join(dir, filepath.FromSlash(store.EvaluationsFile))}
	xs := &store.Log{Path: filepath.Join(dir, filepath.FromSlash(store.ExposuresFile))}
	step := 365 * 24 * time.Hour / time.Duration(n)
	var eb, xb []any
	folds := []Fold{FoldOf("pkg/api", kafka.cmd, []string{kafka.tag}, kafka.first), FoldOf("", dbEnv.cmd, []string{dbEnv.tag}, dbEnv.first)}
	for i := 0; i < n; i++ {
		agent := fmt.Sprint("agent", i%5)
		at := t0.Add(time.Duration(i) * step)
		run := fmt.Sprintf("%s-%06x", at.Format("20060102T150405Z"), i)
		version := i * 10 / n
		e := &verdict.Evaluation{Schema: store.EvaluationSchema, ID: "ev-" + run, Time: at, RunID: run, Task: fmt.Sprint("ISSUE-", i%300),
			Agent: agent, Profile: "quick", EditSource: "command", Verdict: verdict.Approve, Score: 100, Code: "OK",
			DurationMS: 4120, EvaluatorVersion: verdict.EvaluatorVersion, Guardrails: version, Content: "sha256:2f27a9c1e0b4"}
		switch i % 10 {
		case 0, 1:
			f := []failure{kafka, dbEnv}[i%2]
			e.Verdict, e.Score, e.Counted, e.Code = verdict.Reject, 50, true, "E_VERIFY_FAILED_REVERTED"
			e.FailedStep, e.FailedCommand, e.Tags, e.FirstError = f.step, f.cmd, []string{f.tag}, f.first
			e.Summary = "go test ./... failed: " + f.first
			e.Checks = []string{"env_var_present DATABASE_URL", "command_exists go"}
			e.Notes = []string{"score 50 is under 80"}
		case 2:
			e.Verdict, e.Score, e.Notes = verdict.Conditional, 90, []string{"optional step lint failed (exit 1)", "tests modified"}
		}
		eb = append(eb, e)
		xb = append(xb, &Exposure{Schema: store.ExposureSchema, ID: "gx-" + run, RunID: run, Agent: agent, Time: at, Version: version,
			Lines: []string{"gp-329bf1bcf775", "gp-46aba029deed"}, Folds: []string{folds[0].KeyNoDir(), folds[1].KeyNoDir()}})
		if len(eb) == 1000 {
			if err := evals.Append(eb...); err != nil {
				b.Fatal(err)
			}
			if err := xs.Append(xb...); err != nil {
				b.Fatal(err)
			}
			eb, xb = eb[:0], xb[:0]
		}
	}
	if len(eb) > 0 {
		evals.Append(eb...)
		xs.Append(xb...)
	}
	for a := 0; a < 5; a++ {
		agent := fmt.Sprint("agent", a)
		for v := 1; v <= 10; v++ {
			c := Cluster{Kind: KindCategory, Key: hashKey("ck-", fmt.Sprint(agent, v)), Label: "x", Section: fmt.Sprint("pkg/p", v)}
			p := &Proposal{Agent: agent, CreatedAt: t0, Cluster: c, LessonText: fmt.Sprint("Rule ", v),
				ConstraintUpdate: Change{Type: Addition, Section: c.Section, NewText: fmt.Sprint("Rule ", v)}}
			p.ID = proposalID(agent, c, 0)
			if _, err := s.Proposals.Add(p); err != nil {
				b.Fatal(err)
			}
			if _, _, err := s.Approve(context.Background(), p.ID, "Ana", t0.Add(time.Duration(v-1)*36*24*time.Hour+time.Hour)); err != nil {
				b.Fatal(err)
			}
		}
	}
	return s
}

// BenchmarkStats: orket stats (every agent, every version's before and
// after) over 100,000 evaluations and their exposures, read from disk.
func BenchmarkStats(b *testing.B) {
	s := busyRepo(b, 100000)
	fi, _ := os.Stat(filepath.Join(s.OrketDir, filepath.FromSlash(store.EvaluationsFile)))
	xi, _ := os.Stat(filepath.Join(s.OrketDir, filepath.FromSlash(store.ExposuresFile)))
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		st, err := s.Stats(context.Background(), "")
		if err != nil {
			b.Fatal(err)
		}
		if st.Runs != 100000 || len(st.Agents) != 5 || len(st.Agents[0].Comparisons) != 10 {
			b.Fatalf("stats: %d runs, %d agents", st.Runs, len(st.Agents))
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
	b.ReportMetric(float64(fi.Size())/(1<<20), "evaluations-MB")
	b.ReportMetric(float64(xi.Size())/(1<<20), "exposures-MB")
}

// BenchmarkStatsAgent: orket stats --agent A over the same logs.
func BenchmarkStatsAgent(b *testing.B) {
	s := busyRepo(b, 100000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Stats(context.Background(), "agent3"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGuardrailsForRun: what a run (and orket memory) does with
// guardrails before it starts: the current version read and its lines'
// evidence checked (paths and commands; no variable cited).
func BenchmarkGuardrailsForRun(b *testing.B) {
	s := busyRepo(b, 1000)
	ck := &Checker{Root: b.TempDir(), Commands: []string{"go vet ./...", "go test ./..."}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cur, err := s.Current("agent1")
		if err != nil || cur == nil {
			b.Fatal(err)
		}
		Annotate(cur.Text, ck.Check(context.Background(), cur.AllLines()))
	}
}

// BenchmarkPropose: the threshold trigger after a recorded entry: the
// signals of one agent gathered from 1,000 lessons, 1,000 feedback
// entries and 100,000 evaluations, and the rules run.
func BenchmarkPropose(b *testing.B) {
	s := busyRepo(b, 100000)
	r := &repo{t: b, root: filepath.Dir(s.OrketDir), orket: s.OrketDir}
	r.les = newRepo(b).les
	r.les.Path = filepath.Join(s.OrketDir, "memory", "failure_lessons.jsonl")
	var batch = kafka.lesson(0, t0)
	_ = batch
	for i := 0; i < 1000; i++ {
		f := []failure{kafka, dbEnv, vetFail}[i%3]
		f.agent = fmt.Sprint("agent", i%5)
		if err := r.les.Append(f.lesson(i, t0.Add(time.Duration(i)*time.Hour))); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < 1000; i++ {
		r.reject(fmt.Sprint("agent", i%5), "The Kafka examples in the README do not work, test them first", []string{fmt.Sprint("docs/d", i%7)}, t0.Add(time.Duration(i)*time.Hour))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sigs, err := Gather(r.les.Path, s.OrketDir, "agent2")
		if err != nil {
			b.Fatal(err)
		}
		prior, _, _ := s.Proposals.List(ProposalFilter{Agent: "agent2"})
		cur, _ := s.Current("agent2")
		Propose(s.Config, Input{Agent: "agent2", Signals: sigs, Prior: prior, Current: cur, Now: t0.Add(9000 * time.Hour)})
	}
}

// cpuTime is the CPU time (user and system) the process has used, in
// nanoseconds: on a machine busy with other work, it says what an
// operation costs when wall-clock time says how long it waited too.
func cpuTime() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
