package lessons

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/classify"
	"github.com/orket/orket/preflight"
)

var now = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)

func lesson(id string, age time.Duration, scope, touch []string, failed string, tags []string, firstErr string) *Lesson {
	l := &Lesson{CreatedAt: now.Add(-age), Command: "run",
		Request:        Request{Scope: scope, VerifyProfile: "quick"},
		Plan:           Plan{TouchSet: touch, TouchCount: len(touch)},
		Verify:         Verify{FailedCommand: failed, OutputTail: "tail of " + id},
		Classification: Classification{Tags: tags, FirstError: firstErr},
		Advice: classify.Advice{Title: "title " + id, SuggestedActions: []string{},
			PreflightChecks: []preflight.Check{{Type: preflight.EnvVarPresent, Name: "DATABASE_URL"}}},
		Outcome: Outcome{RunID: id}}
	l.Seal(NewRedactor(nil))
	return l
}

func TestAdvisoriesScoreFoldAndOrder(t *testing.T) {
	s := &Store{Path: filepath.Join(t.TempDir(), "l.jsonl")}
	day := 24 * time.Hour
	s.Append(
		// The same failure three times: folded into one advisory.
		lesson("env-1", 20*day, []string{"pkg/api"}, []string{"pkg/api/a.go"}, "go test ./...", []string{"missing_env_var"}, "DATABASE_URL is not set"),
		lesson("env-2", 2*day, []string{"pkg/api"}, []string{"pkg/api/b.go"}, "go test ./...", []string{"missing_env_var"}, "DATABASE_URL is not set"),
		lesson("env-3", 1*day, []string{"pkg/api"}, []string{"pkg/api/a.go"}, "go test ./...", []string{"missing_env_var"}, "DATABASE_URL is not set"),
		// A type error elsewhere: unrelated scope, touch and command.
		lesson("other", 1*day, []string{"web"}, []string{"web/x.ts"}, "npm test", []string{"type_error"}, "error TS2322"),
		// Old and only loosely related: decayed below the threshold.
		lesson("ancient", 200*day, []string{"pkg"}, nil, "go vet ./...", []string{"lint_error"}, "vet"),
	)
	q := Query{Command: "run", Scope: []string{"pkg/api"}, TouchSet: []string{"pkg/api/a.go"},
		Commands: rootCommands("go vet ./...", "go test ./..."), Now: now, HalfLife: 14 * day, TopK: 3}
	adv, damaged, err := s.Advisories(q)
	if err != nil || len(damaged) > 0 {
		t.Fatal(err, damaged)
	}
	if len(adv) != 1 {
		t.Fatalf("%d advisories, want 1: %+v", len(adv), adv)
	}
	a := adv[0]
	if a.Count != 3 || a.Title != "title env-3" || !a.FirstSeen.Equal(now.Add(-20*day)) || !a.LastSeen.Equal(now.Add(-day)) {
		t.Errorf("fold: %+v", a)
	}
	// env-3 scores best: same command, full scope and touch overlap, same
	// failed command, an environment tag, one day old.
	want := Explain{SameCommand: 1, ScopeOverlap: 1, TouchIntersection: 1, SameFailedCommand: 1, TagRelevance: 1,
		Recency: round3(0.5 / 0.5 * pow(1.0/14)), StaleWeight: 1, FlakyWeight: 1, Formula: Formula}
	if diff := cmp.Diff(want, a.Why); diff != "" {
		t.Errorf("why (-want +got):\n%s", diff)
	}
	if a.Score != round3(want.Recency) {
		t.Errorf("score %v, want %v", a.Score, round3(want.Recency))
	}
	// Deterministic: the same query gives the same answer.
	again, _, _ := s.Advisories(q)
	if diff := cmp.Diff(adv, again); diff != "" {
		t.Errorf("not deterministic:\n%s", diff)
	}
	// Top K bounds the list; an unrelated run sees nothing.
	q.Scope, q.TouchSet, q.Commands = []string{"docs"}, []string{"docs/x.md"}, rootCommands("mdlint")
	if adv, _, _ := s.Advisories(q); len(adv) != 0 {
		t.Errorf("unrelated run got %+v", adv)
	}
}

func pow(x float64) float64 {
	r := 1.0
	// 0.5^x for small x, by the same function the scorer uses
	return r * mathPow(0.5, x)
}

func TestScopeOverlap(t *testing.T) {
	for _, tc := range []struct {
		run, lesson []string
		want        float64
	}{
		{[]string{"pkg/api"}, []string{"pkg/api"}, 1},
		{[]string{"pkg/api"}, []string{"pkg"}, 1},
		{[]string{"pkg"}, []string{"pkg/api/**/*.go"}, 1},
		{[]string{"pkg/api", "web"}, []string{"pkg/api"}, 0.5},
		{[]string{"pkg/apiv2"}, []string{"pkg/api"}, 0},
		{[]string{"**"}, []string{"docs"}, 1},
		{nil, []string{"docs"}, 0},
	} {
		if got := scopeOverlap(prefixes(tc.run), []byte(escList(tc.lesson))); got != tc.want {
			t.Errorf("scopeOverlap(%v, %v) = %v, want %v", tc.run, tc.lesson, got, tc.want)
		}
	}
}

// TestIndexFollowsTheLog checks the derived index is used only while it
// matches the log: an append by a writer that does not keep it (or a hand
// edit) makes it stale, and the next reader rebuilds it.
func TestIndexFollowsTheLog(t *testing.T) {
	s := &Store{Path: filepath.Join(t.TempDir(), "l.jsonl")}
	day := 24 * time.Hour
	q := Query{Command: "run", Scope: []string{"pkg/api"}, Commands: rootCommands("go test ./..."), Now: now, HalfLife: 14 * day, TopK: 5}
	s.Append(lesson("a", day, []string{"pkg/api"}, nil, "go test ./...", []string{"missing_env_var"}, "A is not set"))
	adv, _, _ := s.Advisories(q)
	if len(adv) != 1 || !s.indexFresh() {
		t.Fatalf("advisories %d, fresh %v", len(adv), s.indexFresh())
	}
	// Kept up to date by Append.
	s.Append(lesson("b", day, []string{"pkg/api"}, nil, "go test ./...", []string{"port_in_use"}, "port"))
	if !s.indexFresh() {
		t.Fatal("Append left the index stale")
	}
	if adv, _, _ = s.Advisories(q); len(adv) != 2 {
		t.Fatalf("%d advisories after append", len(adv))
	}
	// A writer that knows nothing of the index (another tool, an older
	// orket) appends directly: the index is stale and gets rebuilt.
	b, _ := json.Marshal(lesson("c", day, []string{"pkg/api"}, nil, "go test ./...", []string{"type_error"}, "c"))
	f, _ := os.OpenFile(s.Path, os.O_APPEND|os.O_WRONLY, 0)
	f.Write(append(b, '\n'))
	f.Close()
	if s.indexFresh() {
		t.Fatal("index trusted after a foreign append")
	}
	if adv, _, _ = s.Advisories(q); len(adv) != 3 || !s.indexFresh() {
		t.Fatalf("%d advisories after a foreign append; fresh %v", len(adv), s.indexFresh())
	}
	// A damaged index with a matching meta would be wrong: never happens
	// through orket, but a removed index is rebuilt.
	os.Remove(s.indexPath())
	if adv, _, _ = s.Advisories(q); len(adv) != 3 {
		t.Fatalf("%d advisories after losing the index", len(adv))
	}
	for _, a := range adv {
		if a.Title == "" || a.ID == "" {
			t.Errorf("advisory without its lesson's title or id: %+v", a)
		}
	}
}

func mathPow(x, y float64) float64 { return math.Pow(x, y) }

// rootCommands is a profile of commands that run at the repository root.
func rootCommands(cmds ...string) []StepCommand {
	out := make([]StepCommand, len(cmds))
	for i, c := range cmds {
		out[i] = StepCommand{Command: c}
	}
	return out
}
