package feedback

// Review feedback end to end, in five test cases and four acceptance
// scenarios, on real files: the feedback log, the agent memory, the
// analysis and advisories, as the reject command and the run use them.

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/orket/orket/store"
)

// reject does what orket reject does with this package: learn, record,
// analyse, write the memory row.
func reject(t *testing.T, dir string, r Rejection) (Logged, *Entry) {
	t.Helper()
	e := Default().Entry(r)
	l := OpenLog(dir)
	if err := l.Record(e, nil); err != nil {
		t.Fatal(err)
	}
	a, err := l.Analyze(e.Agent, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenMemory(dir).Append(context.Background(), nil, []Row{RowOf(e)}); err != nil {
		t.Fatal(err)
	}
	return NewLogged(e, a), e
}

// rejectMany logs one rejection per reason, a minute apart.
func rejectMany(t *testing.T, dir, agent string, reasons ...string) {
	t.Helper()
	for i, r := range reasons {
		reject(t, dir, Rejection{Time: t0.Add(time.Duration(i) * time.Minute), Agent: agent, Reason: r,
			Scope: []string{"pkg/api"}, Touched: []string{"pkg/api/handler.go"}})
	}
}

// fourOfTen: 4 of 10 about examples, 2 about clarity, the rest other.
var fourOfTen = []string{"Examples are wrong", "the snippet doesn't work", "broken example", "exemplo não funciona",
	"confusing", "unclear", "I just don't like it", "meh", "not now", "prefer the old way"}

func memoryHas(t *testing.T, dir string, lines ...string) {
	t.Helper()
	b, err := OpenMemory(dir).Read()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if !strings.Contains(string(b), l+"\n") {
			t.Errorf("memory lacks %q:\n%s", l, b)
		}
	}
}

// Test 1: Basic Rejection Logging.
func TestSeed1BasicRejectionLogging(t *testing.T) {
	dir := t.TempDir()
	logged, e := reject(t, dir, Rejection{Time: t0, RunID: "20260203T164400Z-a1b2c3", Reason: "Examples are wrong",
		Scope: []string{"pkg/api"}, Touched: []string{"pkg/api/handler.go"}})
	if e.Category != Examples || e.Action != "Validate all code examples" {
		t.Errorf("category %s, learned action %q", e.Category, e.Action)
	}
	got, _, _ := OpenLog(dir).Entries(Filter{})
	if len(got) != 1 || got[0].Reason != "Examples are wrong" || got[0].Category != Examples || got[0].Type != TypeReviewRejection ||
		got[0].Schema != store.FeedbackSchema || got[0].RunID != "20260203T164400Z-a1b2c3" {
		t.Errorf("logged %+v", got)
	}
	memoryHas(t, dir, `| 2026-02-03 | code | pkg/api | "Examples are wrong" | examples | Validate all code examples |`)
	if !logged.RejectionLogged || logged.Category != Examples || logged.ArtifactName != "pkg/api" || logged.WillApplyNextGeneration {
		t.Errorf("success object %+v", logged)
	}
}

// Test 2: Pattern Detection.
func TestSeed2PatternDetection(t *testing.T) {
	dir := t.TempDir()
	rejectMany(t, dir, "default", fourOfTen...)
	a, err := OpenLog(dir).Analyze("default", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Total != 10 || len(a.Patterns) != 1 || a.Patterns[0].Category != Examples || a.Patterns[0].Percentage != 40 {
		t.Fatalf("analysis %+v", a)
	}
	if obj := a.PatternObjects()[0]; !obj.PatternDetected || !obj.AppliesToNextGeneration || obj.OccurrenceCount != 4 {
		t.Errorf("pattern object %+v", obj)
	}
	// Applied to the next generation: the next run is told.
	adv, _ := OpenLog(dir).Advise(Query{Scope: []string{"cmd"}})
	if len(adv) != 1 || adv[0].Kind != AdvisoryPattern || adv[0].Category != Examples {
		t.Errorf("advisories %+v", adv)
	}
}

// Test 3: No Pattern Yet.
func TestSeed3NoPatternYet(t *testing.T) {
	dir := t.TempDir()
	rejectMany(t, dir, "default", "Examples are wrong", "the example is broken")
	a, _ := OpenLog(dir).Analyze("default", time.Time{})
	if a.Total != 2 || len(a.Patterns) != 0 || len(a.PatternObjects()) != 0 {
		t.Fatalf("analysis %+v", a)
	}
	if o := a.NoPatternObject(); o.PatternDetected || o.TotalRejections != 2 || o.Categories[Examples] != 100 {
		t.Errorf("no-pattern object %+v", o)
	}
	// No proactive correction: nothing for a run elsewhere.
	if adv, _ := OpenLog(dir).Advise(Query{Scope: []string{"cmd"}}); len(adv) != 0 {
		t.Errorf("advisories %+v", adv)
	}
}

// Test 4: Ambiguous Categorization.
func TestSeed4AmbiguousCategorization(t *testing.T) {
	if m := Categorize("Examples are incomplete"); m.Category != Examples {
		t.Errorf("category %s, want examples (priority over completeness)", m.Category)
	}
	// Three categories' keywords in one reason.
	if m := Categorize("Examples are vague and incomplete"); m.Category != Examples {
		t.Errorf("category %s", m.Category)
	}
}

// Test 5: Multiple Rejections Same Artifact.
func TestSeed5SameArtifact(t *testing.T) {
	dir := t.TempDir()
	for i, r := range []string{"Kafka examples return errors", "Too generic", "Missing the consumer group section"} {
		reject(t, dir, Rejection{Time: t0.Add(time.Duration(i) * time.Hour), Item: "kafka-basics.md", ArtifactType: "docs",
			Reason: r, Scope: []string{"docs"}, Touched: []string{"docs/kafka-basics.md"}, Run: RunContext{Toolchain: []string{"Docker"}}})
	}
	// Each logged separately.
	if all, _, _ := OpenLog(dir).Entries(Filter{}); len(all) != 3 {
		t.Fatalf("%d entries", len(all))
	}
	adv, _ := OpenLog(dir).Advise(Query{Agent: "someone-else", Touch: []string{"docs/kafka-basics.md"}})
	if len(adv) != 1 {
		t.Fatalf("advisories %+v", adv)
	}
	want := `kafka-basics.md was rejected 3 times before; reasons: "Kafka examples return errors"; "Too generic"; ` +
		`"Missing the consumer group section". Learned: Test Kafka commands in Docker before showing them; ` +
		`Add concrete use cases and scenarios; Verify all required sections are present`
	if adv[0].Text != want {
		t.Errorf("advisory\n got %s\nwant %s", adv[0].Text, want)
	}
	if len(adv[0].Actions) != 3 || adv[0].Count != 3 {
		t.Errorf("aggregated actions %v", adv[0].Actions)
	}
}

// Acceptance 1: rejection with a reason.
func TestSeedAcceptance1WithReason(t *testing.T) {
	dir := t.TempDir()
	logged, e := reject(t, dir, Rejection{Time: t0, Item: "redis-cache.md", ArtifactType: "docs", Reason: "Examples don't work"})
	if e.Category != Examples || e.Keyword != "example" || logged.Category != Examples {
		t.Errorf("entry %+v", e)
	}
	memoryHas(t, dir, `| 2026-02-03 | docs | redis-cache.md | "Examples don't work" | examples | Validate all code examples |`)
}

// Acceptance 2: rejection without a reason. Asking for one (on a
// terminal, once, 30 s) is the command's; without an answer this is what
// is logged, and nothing blocks.
func TestSeedAcceptance2WithoutReason(t *testing.T) {
	dir := t.TempDir()
	logged, e := reject(t, dir, Rejection{Time: t0, Scope: []string{"pkg"}, Touched: []string{"pkg/a.go"}})
	if e.Reason != "No reason provided" || e.Category != Other || e.Action != "Review: unclear issue" || logged.LearnedAction != "Review: unclear issue" {
		t.Errorf("entry %+v", e)
	}
	memoryHas(t, dir, `| 2026-02-03 | code | pkg | "No reason provided" | other | Review: unclear issue |`)
}

// Acceptance 3: a pattern (4 of 10) is mentioned in the next generation.
func TestSeedAcceptance3PatternMentioned(t *testing.T) {
	dir := t.TempDir()
	rejectMany(t, dir, "claude", fourOfTen...)
	adv, err := OpenLog(dir).Advise(Query{Agent: "claude", Scope: []string{"web"}})
	if err != nil || len(adv) != 1 {
		t.Fatalf("advisories %+v, %v", adv, err)
	}
	if want := "Based on earlier reviews, examples are a common concern (40% of recent rejections): validate all code examples"; adv[0].Text != want {
		t.Errorf("advisory %q", adv[0].Text)
	}
	// Another agent's run is not told claude's pattern.
	if adv, _ := OpenLog(dir).Advise(Query{Agent: "codex", Scope: []string{"web"}}); len(adv) != 0 {
		t.Errorf("codex told %+v", adv)
	}
}

// Acceptance 4: the report shows "examples: 40% of rejections" with the
// suggested action.
func TestSeedAcceptance4Report(t *testing.T) {
	dir := t.TempDir()
	rejectMany(t, dir, "default", fourOfTen[:9]...)
	logged, _ := reject(t, dir, Rejection{Time: t0.Add(time.Hour), Reason: fourOfTen[9], Scope: []string{"pkg/api"}})
	a, _ := OpenLog(dir).Analyze("default", time.Time{})
	b, _ := json.Marshal(a.PatternObjects())
	for _, want := range []string{`"category":"examples"`, `"percentage":40.0`, `"suggested_correction":"Validate all code examples"`, `"total_rejections":10`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("report %s lacks %s", b, want)
		}
	}
	b, _ = json.Marshal(logged)
	if !strings.Contains(string(b), `"patterns_detected":{"examples":40.0,"other":40.0,"threshold_exceeded":true},"will_apply_next_generation":true`) {
		t.Errorf("success object %s", b)
	}
}
