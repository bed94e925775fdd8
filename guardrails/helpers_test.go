package guardrails

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/orket/orket/classify"
	"github.com/orket/orket/feedback"
	"github.com/orket/orket/lessons"
	"github.com/orket/orket/verdict"
)

var t0 = time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)

// failure describes a lesson to write.
type failure struct {
	agent, dir, cmd, step, tag, first, action string
	scope                                     []string
}

var kafka = failure{agent: "claude", dir: "pkg/api", cmd: "go test ./...", step: "test", tag: classify.MissingDependency,
	first: "no required module provides package github.com/segmentio/kafka-go", action: "run `go generate ./...`",
	scope: []string{"pkg/api"}}

var dbEnv = failure{agent: "claude", dir: "", cmd: "go test ./...", step: "test", tag: classify.MissingEnvVar,
	first: "DATABASE_URL is not set", action: "export DATABASE_URL before the run (or set it in the step's env)",
	scope: []string{"pkg/db"}}

var vetFail = failure{agent: "claude", dir: "", cmd: "go vet ./...", step: "vet", tag: classify.TypeError,
	first: "pkg/x/x.go:3:2: undefined: Foo", action: "check the types at the reported location before editing callers",
	scope: []string{"pkg/x"}}

func (f failure) lesson(i int, at time.Time) *lessons.Lesson {
	l := &lessons.Lesson{CreatedAt: at, Command: "run",
		Request: lessons.Request{EditSource: "command", Scope: f.scope, VerifyProfile: "quick", Agent: f.agent, Task: "T-" + f.tag},
		Plan:    lessons.Plan{TouchSet: []string{f.scope[0] + "/file.go"}, TouchCount: 1},
		Verify: lessons.Verify{Profile: "quick", Commands: []string{"go vet ./...", "go test ./..."}, FailedStep: f.step,
			FailedCommand: f.cmd, FailedDir: f.dir, ExitCode: 1, OutputTail: "FAIL\n" + f.first + "\n"},
		Classification: lessons.Classification{Tags: []string{f.tag}, Confidence: 0.9, FirstError: f.first},
		Advice:         classify.Advice{Title: "title of " + f.tag, SuggestedActions: []string{f.action}},
		Outcome:        lessons.Outcome{Code: "E_VERIFY_FAILED_REVERTED", RunID: fmt.Sprintf("run-%s-%d", f.tag, i)},
	}
	l.Seal(lessons.NewRedactor(nil))
	return l
}

// repo is a .orket directory with its logs.
type repo struct {
	t     testing.TB
	root  string // the repository
	orket string
	les   *lessons.Store
}

func newRepo(t testing.TB) *repo {
	root := t.TempDir()
	r := &repo{t: t, root: root, orket: filepath.Join(root, ".orket")}
	r.les = &lessons.Store{Path: filepath.Join(r.orket, "memory", "failure_lessons.jsonl")}
	if err := os.MkdirAll(filepath.Join(r.orket, "memory"), 0o755); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *repo) fail(f failure, n int, start time.Time) []*lessons.Lesson {
	r.t.Helper()
	var ls []*lessons.Lesson
	for i := 0; i < n; i++ {
		l := f.lesson(i, start.Add(time.Duration(i)*time.Hour))
		ls = append(ls, l)
		// The run's evaluation too: it is folded into the lesson.
		ev := &verdict.Evaluation{Time: l.CreatedAt, RunID: l.Outcome.RunID, Task: l.Request.Task, Agent: f.agent,
			Profile: "quick", EditSource: "command", Verdict: verdict.Reject, Score: 50, Counted: true, Code: l.Outcome.Code,
			FailedStep: f.step, FailedCommand: f.cmd, Tags: []string{f.tag}, FirstError: f.first}
		if err := verdict.Open(filepath.Join(r.orket, "memory")).Record(ev); err != nil {
			r.t.Fatal(err)
		}
	}
	if err := r.les.Append(ls...); err != nil {
		r.t.Fatal(err)
	}
	return ls
}

func (r *repo) approveRuns(agent string, n int, start time.Time) {
	r.t.Helper()
	s := verdict.Open(filepath.Join(r.orket, "memory"))
	for i := 0; i < n; i++ {
		ev := &verdict.Evaluation{Time: start.Add(time.Duration(i) * time.Minute), RunID: fmt.Sprintf("ok-%s-%d-%d", agent, start.Unix(), i),
			Task: "T-ok", Agent: agent, Profile: "quick", EditSource: "command", Verdict: verdict.Approve, Score: 100}
		if err := s.Record(ev); err != nil {
			r.t.Fatal(err)
		}
	}
}

func (r *repo) reject(agent, reason string, scope []string, at time.Time) *feedback.Entry {
	r.t.Helper()
	e := feedback.Default().Entry(feedback.Rejection{Time: at, RunID: "kept-" + at.Format("150405"), Agent: agent, Reason: reason,
		Scope: scope, Touched: []string{scope[0] + "/README.md"}, By: "Ana"})
	if err := feedback.OpenLog(r.orket).Record(e, nil); err != nil {
		r.t.Fatal(err)
	}
	return e
}

func (r *repo) signals(agent string) []Signal {
	r.t.Helper()
	s, err := Gather(r.les.Path, r.orket, agent)
	if err != nil {
		r.t.Fatal(err)
	}
	return s
}

func (r *repo) store() *Store { return Open(r.orket, DefaultConfig()) }

func must[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}
