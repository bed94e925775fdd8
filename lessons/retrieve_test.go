package lessons

import (
	"encoding/json"
	"math"
	"os"
	"path"
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
		Advice:         classify.Advice{Title: "title " + id, SuggestedActions: []string{}},
		Outcome:        Outcome{RunID: id}}
	// An environment failure comes with its check.
	for _, tag := range tags {
		if IsEnvTag(tag) {
			l.Advice.PreflightChecks = []preflight.Check{{Type: preflight.EnvVarPresent, Name: "DATABASE_URL"}}
		}
	}
	l.Seal(NewRedactor(nil))
	return l
}

func TestAdvisoriesFoldAndExplain(t *testing.T) {
	s := &Store{Path: filepath.Join(t.TempDir(), "l.jsonl")}
	day := 24 * time.Hour
	s.Append(
		// One missing variable met in three packages: one hazard.
		lesson("env-1", 20*day, []string{"pkg/api"}, []string{"pkg/api/a.go"}, "go test ./...", []string{"missing_env_var"}, "DATABASE_URL is not set"),
		lesson("env-2", 2*day, []string{"pkg/users"}, []string{"pkg/users/b.go"}, "go test ./...", []string{"missing_env_var"}, "users: DATABASE_URL is not set"),
		lesson("env-3", 1*day, []string{"web"}, []string{"web/a.ts"}, "npm test", []string{"missing_env_var"}, "DATABASE_URL is not set"),
		// A type error elsewhere, of the same test command: that alone is
		// no evidence.
		lesson("other", 1*day, []string{"pkg/billing"}, []string{"pkg/billing/x.go"}, "go test ./...", []string{"type_error"}, "pkg/billing/x.go:3:1: undefined: Charge"),
	)
	q := Query{Scope: []string{"pkg/api"}, TouchSet: []string{"pkg/api/a.go"},
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
	// No check runner: the check is taken to fail. Environments are
	// repository-wide: no scope penalty; the latest lesson's command is
	// not in this profile, the others' is: not stale.
	want := Explain{Evidence: EvidenceEnvironment, Detail: "environment variable DATABASE_URL is set", Relevance: 1,
		Recency: round3(pow(1.0 / 14)), StaleWeight: 1, Formula: Formula}
	if diff := cmp.Diff(want, a.Why); diff != "" {
		t.Errorf("why (-want +got):\n%s", diff)
	}
	if a.Score != want.Recency {
		t.Errorf("score %v, want %v", a.Score, want.Recency)
	}
	// Deterministic: the same query gives the same answer.
	again, _, _ := s.Advisories(q)
	if diff := cmp.Diff(adv, again); diff != "" {
		t.Errorf("not deterministic:\n%s", diff)
	}
	// The environment is fine now: nothing to say.
	q.EnvFails = func([]preflight.Check) bool { return false }
	if adv, _, _ := s.Advisories(q); len(adv) != 0 {
		t.Errorf("advised with the environment fine: %+v", adv)
	}
}

// TestEvidence checks what makes a past failure relevant to a run, and
// that sharing the failed command is not enough.
func TestEvidence(t *testing.T) {
	day := 24 * time.Hour
	gen := func(id, pkg, src string) *Lesson {
		return lesson(id, day, []string{pkg}, []string{pkg + "/" + src}, "go test ./...", nil,
			pkg+"/routes_gen.go is out of date: run go generate ./"+pkg)
	}
	sig := func(id, pkg string) *Lesson {
		return lesson(id, day, []string{pkg}, []string{pkg + "/" + path.Base(pkg) + ".go"}, "go test ./...", nil,
			"pkg/api/handlers.go:12:9: not enough arguments in call to "+path.Base(pkg)+".Charge")
	}
	flaky := lesson("flaky", day, []string{"pkg/api"}, []string{"pkg/api/x.go"}, "go test ./...", []string{FlakyTag}, "cache_test.go:9: cache cold")
	flaky.Classification.Location = &Location{Test: "TestCacheWarm", Files: []string{"pkg/models/cache_test.go"}}
	flaky.Seal(NewRedactor(nil))
	pyFlaky := lesson("pyflaky", day, []string{"invoice/web"}, []string{"invoice/web/x.py"}, "pytest", []string{FlakyTag}, "TimeoutError: warm-up timed out")
	pyFlaky.Classification.Location = &Location{Test: "tests/test_models.py::test_cache_warm", Files: []string{"tests/test_models.py"}}
	pyFlaky.Seal(NewRedactor(nil))
	rare := func(kind string) bool { return kind == ".txt" || kind == ".sql" }
	for _, tc := range []struct {
		name    string
		lessons []*Lesson
		scope   []string
		touch   []string
		want    string // evidence of the one advisory; "" for none
		detail  string
	}{
		{"the same file again", []*Lesson{gen("g1", "pkg/api", "routes.txt")}, []string{"pkg/api"}, []string{"pkg/api/routes.txt"}, EvidenceTouchedFile, "pkg/api/routes.txt"},
		{"a rare kind elsewhere", []*Lesson{gen("g1", "pkg/api", "routes.txt"), gen("g2", "pkg/models", "models.txt")}, []string{"pkg/users"}, []string{"pkg/users/roles.txt"}, EvidenceTouchedKind, ".txt"},
		{"a common kind elsewhere", []*Lesson{gen("g1", "pkg/api", "routes.txt")}, []string{"pkg/users"}, []string{"pkg/users/users.go"}, "", ""},
		{"only the failed command is shared", []*Lesson{sig("s1", "pkg/billing")}, []string{"pkg/web"}, []string{"pkg/web/web.go"}, "", ""},
		{"no touch declared: the scope holds the change", []*Lesson{sig("s1", "pkg/billing")}, []string{"pkg/billing"}, nil, EvidenceScope, "pkg/billing/billing.go"},
		{"a convention: two places, no rare kind", []*Lesson{sig("s1", "pkg/billing"), sig("s2", "pkg/users")}, []string{"pkg/users"}, nil, "", ""},
		{"the same common file again is no evidence", []*Lesson{sig("s1", "pkg/billing")}, []string{"pkg/billing"}, []string{"pkg/billing/billing.go"}, "", ""},
		{"flaky where it lives", []*Lesson{flaky}, []string{"pkg/models"}, nil, EvidenceLocation, "pkg/models/cache_test.go"},
		{"flaky, a test of what the scope names", []*Lesson{pyFlaky}, []string{"invoice/models"}, nil, EvidenceLocation, "tests/test_models.py"},
		{"flaky elsewhere, whatever the failing run's scope", []*Lesson{flaky}, []string{"pkg/api"}, []string{"pkg/api/x.go"}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Store{Path: filepath.Join(t.TempDir(), "l.jsonl")}
			if err := s.Append(tc.lessons...); err != nil {
				t.Fatal(err)
			}
			adv, _, err := s.Advisories(Query{Scope: tc.scope, TouchSet: tc.touch, Commands: rootCommands("go test ./..."),
				Now: now, HalfLife: 14 * day, TopK: 3, Distinctive: rare})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range adv {
				got = append(got, a.Why.Evidence+" "+a.Why.Detail)
			}
			var want []string
			if tc.want != "" {
				want = []string{tc.want + " " + tc.detail}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("evidence (-want +got):\n%s", diff)
			}
		})
	}
}

func pow(x float64) float64 { return mathPow(0.5, x) }

// TestIndexFollowsTheLog checks the derived index is used only while it
// matches the log: an append by a writer that does not keep it (or a hand
// edit) makes it stale, and the next reader rebuilds it.
func TestIndexFollowsTheLog(t *testing.T) {
	s := &Store{Path: filepath.Join(t.TempDir(), "l.jsonl")}
	day := 24 * time.Hour
	q := Query{Scope: []string{"pkg/api"}, Commands: rootCommands("go test ./..."), Now: now, HalfLife: 14 * day, TopK: 5}
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
	b, _ := json.Marshal(lesson("c", day, []string{"pkg/api"}, []string{"pkg/api/c.go"}, "go test ./...", []string{"type_error"}, "c"))
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
