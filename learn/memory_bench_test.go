package learn

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/orket/orket"
	"github.com/orket/orket/classify"
	"github.com/orket/orket/feedback"
	"github.com/orket/orket/guardrails"
	"github.com/orket/orket/lessons"
	"github.com/orket/orket/store"
	"github.com/orket/orket/verdict"
)

// BenchmarkMemory measures orket memory (docs/benchmarks.md: under 200 ms over a year
// of a busy team's records) on a repository holding 100,000 evaluations,
// 30,000 lessons, 10,000 review entries and an agent's guardrails at
// their tenth version: the agent memory, the patterns of its rejections,
// earlier reviews of the scope, the advisories and preflight checks, and
// the guardrails with their evidence checked. The lesson index is built
// before the timer starts, as any earlier run would have.
func BenchmarkMemory(b *testing.B) {
	repo, cfg := testRepo(b)
	dir := OrketDir(repo)
	if err := ensureLessonDir(repo); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now().UTC().Add(-365 * 24 * time.Hour)
	agents := []string{"claude", "codex", "aider", "ci-bot", "default"}
	fails := []struct{ cmd, tag, first string }{
		{"! grep -q BROKEN pkg/a.txt", "missing_dependency", "cannot find package \"github.com/segmentio/kafka-go\""},
		{"! grep -q BROKEN pkg/a.txt", "missing_env_var", "DATABASE_URL is not set"},
		{"golangci-lint run", "lint_error", "pkg/api/handler.go:42:2: ineffectual assignment to err"},
	}
	// 100,000 evaluations.
	evals := verdict.Open(filepath.Join(dir, "memory"))
	var batch []*verdict.Evaluation
	step := 365 * 24 * time.Hour / 100000
	for i := 0; i < 100000; i++ {
		at := t0.Add(time.Duration(i) * step)
		e := &verdict.Evaluation{Time: at, RunID: fmt.Sprintf("%s-%06x", at.Format("20060102T150405Z"), i), Task: fmt.Sprint("ISSUE-", i%300),
			Agent: agents[i%len(agents)], Profile: "quick", EditSource: "command", Verdict: verdict.Approve, Score: 100, Code: "OK"}
		e.Schema, e.EvaluatorVersion, e.ID = store.EvaluationSchema, verdict.EvaluatorVersion, "ev-"+e.RunID
		if i%5 == 0 {
			f := fails[i%len(fails)]
			e.Verdict, e.Score, e.Counted, e.Code = verdict.Reject, 0, true, "E_VERIFY_FAILED_REVERTED"
			e.FailedStep, e.FailedCommand, e.Tags, e.FirstError = "check", f.cmd, []string{f.tag}, f.first
		}
		batch = append(batch, e)
		if len(batch) == 5000 {
			if err := evals.Evaluations.Append(anys(batch)...); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	// 30,000 lessons, a third of them about pkg.
	store := &lessons.Store{Path: LessonPath(repo, cfg)}
	var ls []*lessons.Lesson
	for i := 0; i < 30000; i++ {
		f := fails[i%len(fails)]
		sc := []string{"pkg"}
		if i%3 != 0 {
			sc = []string{fmt.Sprint("svc/s", i%40)}
		}
		l := &lessons.Lesson{CreatedAt: t0.Add(time.Duration(i) * 17 * time.Minute), Command: "run",
			Request:        lessons.Request{EditSource: "command", Scope: sc, VerifyProfile: "quick", Agent: agents[i%len(agents)]},
			Verify:         lessons.Verify{Profile: "quick", Commands: []string{f.cmd}, FailedStep: "check", FailedCommand: f.cmd, ExitCode: 1, OutputTail: f.first},
			Classification: lessons.Classification{Tags: []string{f.tag}, Confidence: 0.9, FirstError: f.first},
			Advice:         classify.Advice{Title: "Failure " + f.tag, SuggestedActions: []string{"fix " + f.tag}},
			Outcome:        lessons.Outcome{Code: "E_VERIFY_FAILED_REVERTED", RunID: fmt.Sprint("run-", i)}}
		l.Seal(nil)
		ls = append(ls, l)
	}
	if err := store.Append(ls...); err != nil {
		b.Fatal(err)
	}
	// 10,000 review entries.
	log := feedback.OpenLog(dir)
	reasons := []string{"the example does not run", "too vague: name the endpoint", "missing error handling", "wrong module"}
	var es []*feedback.Entry
	for i := 0; i < 10000; i++ {
		e := feedback.Default().Entry(feedback.Rejection{Time: t0.Add(time.Duration(i) * 52 * time.Minute), RunID: fmt.Sprint("run-", i),
			Agent: agents[i%len(agents)], Reason: reasons[i%len(reasons)], Scope: []string{"pkg"}, Touched: []string{"pkg/a.txt"}})
		e.Seal(nil)
		es = append(es, e)
	}
	if err := log.Append(es...); err != nil {
		b.Fatal(err)
	}
	// The agent's guardrails, ten versions.
	gs := openGuardrails(repo, cfg)
	for v := 1; v <= 10; v++ {
		text := fmt.Sprintf("Run `go generate ./...` before `go test ./...` in pkg (rule %d)", v)
		p := &guardrails.Proposal{ID: fmt.Sprintf("gp-%012d", v), Agent: "claude", CreatedAt: t0,
			Cluster:          guardrails.Cluster{Kind: guardrails.KindCategory, Key: fmt.Sprint("ck-", v), Section: "pkg"},
			LessonText:       text,
			ConstraintUpdate: guardrails.Change{Type: guardrails.Addition, Section: "pkg", NewText: text}}
		if _, err := gs.Proposals.Add(p); err != nil {
			b.Fatal(err)
		}
		if _, _, err := gs.Approve(context.Background(), p.ID, "Ana", t0.Add(time.Duration(v)*24*time.Hour)); err != nil {
			b.Fatal(err)
		}
	}
	q := MemoryQuery{Repo: repo, Config: cfg, Agent: "claude", Scope: []string{"pkg"}, Env: orket.OSEnv()}
	v, err := Memory(q) // builds the lesson index
	if err != nil {
		b.Fatal(err)
	}
	if v.Guardrails == nil || v.Guardrails.Version != 10 || len(v.Advisories) == 0 || len(v.Patterns) == 0 {
		b.Fatalf("the view is not whole: guardrails %+v, %d advisories, %d patterns", v.Guardrails, len(v.Advisories), len(v.Patterns))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Memory(q); err != nil {
			b.Fatal(err)
		}
	}
}

func anys[T any](l []T) []any {
	out := make([]any, len(l))
	for i, x := range l {
		out[i] = x
	}
	return out
}
