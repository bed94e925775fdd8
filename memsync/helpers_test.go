package memsync

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"

	"github.com/orket/orket/classify"
	"github.com/orket/orket/feedback"
	"github.com/orket/orket/lessons"
	"github.com/orket/orket/store"
	"github.com/orket/orket/verdict"
)

// newBare makes a bare repository to serve as the remote.
func newBare(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "remote.git")
	if _, err := git.PlainInit(dir, true); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A clone is a repository whose .orket memory syncs with a remote.
type clone struct {
	t     testing.TB
	dir   string
	repo  *git.Repository
	orket string
	opts  Options
}

func newClone(t testing.TB, remoteURL string) *clone {
	t.Helper()
	dir := t.TempDir()
	r, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if remoteURL != "" {
		if _, err := r.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{remoteURL}}); err != nil {
			t.Fatal(err)
		}
	}
	c := &clone{t: t, dir: dir, repo: r, orket: filepath.Join(dir, ".orket")}
	c.opts = Options{Repo: r, OrketDir: c.orket, Remote: "origin", Auth: Auth{Credential: noCredential}}
	return c
}

func noCredential(context.Context, string, map[string]string) (map[string]string, error) {
	return nil, fmt.Errorf("no credentials in tests")
}

func (c *clone) sync(mod ...func(*Options)) *Result {
	c.t.Helper()
	res, err := c.trySync(mod...)
	if err != nil {
		c.t.Fatalf("sync %s: %v", c.dir, err)
	}
	return res
}

func (c *clone) trySync(mod ...func(*Options)) (*Result, error) {
	o := c.opts
	for _, m := range mod {
		m(&o)
	}
	return Sync(context.Background(), o)
}

func pull(o *Options) { o.Pull = true }

func (c *clone) path(rel string) string { return filepath.Join(c.orket, filepath.FromSlash(rel)) }

func (c *clone) read(rel string) string {
	b, err := os.ReadFile(c.path(rel))
	if err != nil && !os.IsNotExist(err) {
		c.t.Fatal(err)
	}
	return string(b)
}

func (c *clone) write(rel, content string) {
	c.t.Helper()
	p := c.path(rel)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		c.t.Fatal(err)
	}
}

// appendLines appends records to a log as orket does (internal/jsonl).
func (c *clone) appendLines(log string, lines ...[]byte) {
	c.t.Helper()
	recs := make([]any, len(lines))
	for i, l := range lines {
		recs[i] = json.RawMessage(l)
	}
	if err := (&store.Log{Path: c.path(log)}).Append(recs...); err != nil {
		c.t.Fatal(err)
	}
}

// ids returns the ids of a log's lines, in order.
func (c *clone) ids(log string) []string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(c.read(log)), "\n") {
		if line == "" {
			continue
		}
		var r struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			c.t.Fatalf("%s: %v: %q", log, err, line)
		}
		out = append(out, r.ID)
	}
	return out
}

// snapshot returns every file that travels, by path.
func (c *clone) snapshot() map[string]string {
	out := map[string]string{}
	filepath.Walk(c.orket, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(c.orket, p)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "sync/") || strings.HasSuffix(rel, ".lock") {
			return nil
		}
		b, _ := os.ReadFile(p)
		out[rel] = string(b)
		return nil
	})
	return out
}

var t0 = time.Date(2026, 7, 14, 9, 0, 0, 0, time.UTC)

// Realistic records, built with orket's own types.

func evaluationLine(agent, runID string, at time.Time, verdictName string) []byte {
	e := &verdict.Evaluation{Schema: store.EvaluationSchema, ID: "ev-" + runID, Time: at, RunID: runID, Task: "pkg/api|test",
		Agent: agent, Profile: "test", EditSource: "command", Verdict: verdictName, Score: 55, Code: "E_VERIFY_FAILED",
		FailedStep: "test", FailedCommand: "go test ./...", Tags: []string{"test_failure"},
		Summary: "go test ./... failed: TestParse", DurationMS: 1234, EvaluatorVersion: verdict.EvaluatorVersion}
	b, _ := json.Marshal(e)
	return b
}

func lessonLine(agent string, at time.Time, n int) []byte {
	l := &lessons.Lesson{CreatedAt: at, Command: "run",
		Request:        lessons.Request{EditSource: "command", Argv: []string{"sh", "-c", "edit"}, Scope: []string{"pkg/api"}, VerifyProfile: "test", Agent: agent},
		Plan:           lessons.Plan{TouchSet: []string{"pkg/api/x.go"}, TouchCount: 1},
		Verify:         lessons.Verify{Profile: "test", Commands: []string{"go test ./..."}, FailedStep: "test", FailedCommand: "go test ./...", ExitCode: 1, OutputTail: fmt.Sprintf("--- FAIL: TestParse%d (0.00s)\n    parse_test.go:12: want 1, got 2\nFAIL\n", n), OutputBytes: 812, DurationMS: 900},
		Classification: lessons.Classification{Tags: []string{"test_failure"}, Confidence: 0.9, FirstError: "parse_test.go:12: want 1, got 2"},
		Advice:         classify.Advice{Title: "A test failed", Summary: "TestParse fails", SuggestedActions: []string{"run go test ./pkg/api"}},
		Outcome:        lessons.Outcome{Code: "E_VERIFY_FAILED", RunID: fmt.Sprintf("run-%s-%d", agent, n)},
	}
	l.Seal(lessons.NewRedactor(nil))
	b, _ := json.Marshal(l)
	return b
}

func feedbackLine(agent string, at time.Time, reason string) []byte {
	e := &feedback.Entry{Time: at, Type: feedback.TypeReviewRejection, RunID: "run-" + agent, Agent: agent, Item: "pkg/api",
		ArtifactType: "code", Reason: reason, Category: "examples", Action: "Validate all code examples"}
	e.Seal(nil)
	b, _ := json.Marshal(e)
	return b
}

func taskLine(agent string, at time.Time, typ string) []byte {
	e := &verdict.TaskEvent{Schema: store.TaskEventSchema, Time: at, Type: typ, Task: "pkg/api|test", Agent: agent, Reason: "looked at it", By: agent}
	e.ID = e.Type + "-" + e.Time.UTC().Format("20060102T150405.000000000Z")
	b, _ := json.Marshal(e)
	return b
}

// addRecords appends n new records of one clone, spread over the four
// logs and over days, and returns their ids.
func addRecords(c *clone, who string, n int, start time.Time) []string {
	var ids []string
	byLog := map[string][][]byte{}
	for i := 0; i < n; i++ {
		at := start.Add(time.Duration(i)*17*time.Minute + time.Duration(len(who))*time.Second)
		var line []byte
		var log string
		switch i % 4 {
		case 0:
			log, line = "memory/evaluations.jsonl", evaluationLine(who, fmt.Sprintf("%s-%s-%d", at.Format("20060102T150405Z"), who, i), at, verdict.Reject)
		case 1:
			log, line = "memory/failure_lessons.jsonl", lessonLine(who, at, i)
		case 2:
			log, line = "memory/feedback.jsonl", feedbackLine(who, at, fmt.Sprintf("the example %d of %s does not compile", i, who))
		case 3:
			log, line = "memory/tasks.jsonl", taskLine(who, at.Add(time.Duration(i)*time.Nanosecond), verdict.EventReset)
		}
		var r struct {
			ID string `json:"id"`
		}
		json.Unmarshal(line, &r)
		ids = append(ids, log+" "+r.ID)
		byLog[log] = append(byLog[log], line)
	}
	logs := make([]string, 0, len(byLog))
	for l := range byLog {
		logs = append(logs, l)
	}
	sort.Strings(logs)
	for _, l := range logs {
		c.appendLines(l, byLog[l]...)
	}
	return ids
}

// allIDs returns "log id" for every line of the four logs of a clone.
func allIDs(c *clone) []string {
	var out []string
	for _, l := range []string{"memory/evaluations.jsonl", "memory/failure_lessons.jsonl", "memory/feedback.jsonl", "memory/tasks.jsonl"} {
		for _, id := range c.ids(l) {
			out = append(out, l+" "+id)
		}
	}
	return out
}

// sameFiles fails unless every clone holds the same files, byte for byte.
func sameFiles(t testing.TB, clones ...*clone) {
	t.Helper()
	ref := clones[0].snapshot()
	for _, c := range clones[1:] {
		got := c.snapshot()
		for p, want := range ref {
			if got[p] != want {
				t.Errorf("%s differs between %s and %s", p, clones[0].dir, c.dir)
			}
		}
		for p := range got {
			if _, ok := ref[p]; !ok {
				t.Errorf("%s only in %s", p, c.dir)
			}
		}
	}
}

func countDup(ids []string) (dup []string) {
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			dup = append(dup, id)
		}
		seen[id] = true
	}
	return dup
}

func gitInit(dir string, bare bool) (*git.Repository, error) { return git.PlainInit(dir, bare) }
