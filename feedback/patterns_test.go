package feedback

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// reasons of each category, to build logs from.
var reasonOf = map[Category]string{
	Examples:     "the examples are wrong",
	Specificity:  "too generic",
	Clarity:      "confusing structure",
	Completeness: "missing the config section",
	Relevance:    "out of scope",
	Other:        "I just don't like it",
}

// entries returns sealed rejections by agent, one per category given,
// a minute apart.
func entries(agent string, cats ...Category) []*Entry {
	var out []*Entry
	for i, c := range cats {
		e := Default().Entry(Rejection{Time: t0.Add(time.Duration(i) * time.Minute), Agent: agent,
			Reason: reasonOf[c], Scope: []string{"pkg"}})
		e.Seal(nil)
		out = append(out, e)
	}
	return out
}

func repeat(c Category, n int) []Category {
	var out []Category
	for i := 0; i < n; i++ {
		out = append(out, c)
	}
	return out
}

func TestIsPattern(t *testing.T) {
	for _, tc := range []struct {
		count, total int
		want         bool
	}{
		{4, 10, true},     // 40%
		{3, 10, false},    // 30% is not more than 30%
		{31, 100, true},   // 31%
		{30, 100, false},  // 30%
		{3, 9, true},      // 33.3%
		{3, 3, true},      // 100%, and 3 of them
		{2, 2, false},     // 100%, but 2 in all
		{2, 5, false},     // 40%, but 2
		{1, 1, false},     // the first rejection
		{0, 0, false},     // nothing
		{301, 1000, true}, // 30.1%
	} {
		if got := IsPattern(tc.count, tc.total); got != tc.want {
			t.Errorf("IsPattern(%d, %d) = %v, want %v", tc.count, tc.total, got, tc.want)
		}
	}
}

func TestAnalyze(t *testing.T) {
	var all []*Entry
	all = append(all, entries("claude", append(append(repeat(Examples, 4), repeat(Clarity, 4)...), Other, Relevance)...)...)
	all = append(all, entries("codex", repeat(Specificity, 5)...)...)
	// Other types and other agents do not count.
	all = append(all, &Entry{ID: "fb-x", Type: "correction", Agent: "claude", Category: Examples})

	a := Analyze(all, "claude")
	if a.Total != 10 || a.Counts[Examples] != 4 || a.Counts[Clarity] != 4 || a.Counts[Specificity] != 0 {
		t.Fatalf("counts %+v total %d", a.Counts, a.Total)
	}
	want := []Pattern{
		{Category: Examples, Count: 4, Total: 10, Percentage: 40, Correction: "Validate all code examples",
			Actions: []string{"Validate all code examples"}},
		{Category: Clarity, Count: 4, Total: 10, Percentage: 40, Correction: "Simplify language and structure",
			Actions: []string{"Simplify language and structure"}},
	}
	if diff := cmp.Diff(want, a.Patterns); diff != "" {
		t.Errorf("patterns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[Category]Percent{Examples: 40, Clarity: 40, Other: 10, Relevance: 10}, a.Percentages()); diff != "" {
		t.Errorf("percentages (-want +got):\n%s", diff)
	}
	// Every agent together: 15, specificity 5 of them (33.3%).
	every := Analyze(all, "")
	if every.Total != 15 || len(every.Patterns) != 1 || every.Patterns[0].Category != Specificity || every.Patterns[0].Percentage != 33.3 {
		t.Errorf("every agent: %+v", every.Patterns)
	}
	// Other is never a pattern, even at 60%.
	o := Analyze(entries("a", Examples, Clarity, Other, Other, Other), "a")
	if len(o.Patterns) != 0 {
		t.Errorf("other made a pattern: %+v", o.Patterns)
	}
}

func TestSeedObjects(t *testing.T) {
	a := Analyze(entries("default", append(repeat(Examples, 4), repeat(Other, 6)...)...), "default")
	got, _ := json.Marshal(a.PatternObjects())
	want := `[{"pattern_detected":true,"category":"examples","occurrence_count":4,"total_rejections":10,"percentage":40.0,` +
		`"suggested_correction":"Validate all code examples","applies_to_next_generation":true,"agent":"default",` +
		`"learned_actions":["Validate all code examples"]}]`
	if string(got) != want {
		t.Errorf("pattern objects\n got %s\nwant %s", got, want)
	}

	// No pattern: 5 rejections, examples 20, clarity 20, other 60.
	n := Analyze(entries("default", Examples, Clarity, Other, Other, Other), "default")
	if len(n.PatternObjects()) != 0 {
		t.Fatal("pattern found")
	}
	got, _ = json.Marshal(n.NoPatternObject())
	want = `{"pattern_detected":false,"total_rejections":5,"categories":{"clarity":20.0,"examples":20.0,"other":60.0},` +
		`"message":"No recurring pattern detected yet (need 30% threshold)","agent":"default"}`
	if string(got) != want {
		t.Errorf("no-pattern object\n got %s\nwant %s", got, want)
	}
	// Over 30% but too few: the message says what is missing.
	few := Analyze(entries("default", Examples, Examples), "default")
	if m := few.NoPatternObject().Message; m != TooFewPatternMessage {
		t.Errorf("message %q", m)
	}

	// The success object of a logged rejection.
	e := Default().Entry(Rejection{Time: t0, RunID: "20260203T164400Z-a1b2c3", Item: "kafka-basics.md", ArtifactType: "docs",
		Reason: "Kafka examples return errors", Run: RunContext{Toolchain: []string{"Docker"}},
		Undo: &Undo{Status: UndoDone, Patch: ".orket/rejected/20260203T164400Z-a1b2c3.patch"}})
	e.Seal(nil)
	logged := NewLogged(e, a)
	got, _ = json.Marshal(logged)
	want = `{"rejection_logged":true,"artifact_type":"docs","artifact_name":"kafka-basics.md","category":"examples",` +
		`"learned_action":"Test Kafka commands in Docker before showing them",` +
		`"patterns_detected":{"examples":40.0,"threshold_exceeded":true},"will_apply_next_generation":true,` +
		`"id":"` + e.ID + `","run_id":"20260203T164400Z-a1b2c3",` +
		`"undo":{"status":"undone","patch":".orket/rejected/20260203T164400Z-a1b2c3.patch"}}`
	if string(got) != want {
		t.Errorf("success object\n got %s\nwant %s", got, want)
	}
	var back Logged
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(logged, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	// Without a pattern: the entry's own category's share, not exceeded.
	c := Default().Entry(Rejection{Time: t0, Reason: "confusing"})
	got, _ = json.Marshal(NewLogged(c, n).PatternsDetected)
	if string(got) != `{"clarity":20.0,"threshold_exceeded":false}` {
		t.Errorf("patterns_detected %s", got)
	}
	if NewLogged(c, n).WillApplyNextGeneration {
		t.Error("will apply without a pattern")
	}
}

func TestHistory(t *testing.T) {
	var all []*Entry
	for i, r := range []string{"Kafka examples return errors", "too generic", "Kafka examples return errors", "missing the consumer section"} {
		e := Default().Entry(Rejection{Time: t0.Add(time.Duration(i) * time.Hour), RunID: fmt.Sprint("run", i), Item: "kafka-basics",
			Reason: r, Run: RunContext{Toolchain: []string{"Docker"}}})
		e.Seal(nil)
		all = append(all, e)
	}
	other := Default().Entry(Rejection{Time: t0, Item: "redis-cache", Reason: "vague"})
	other.Seal(nil)
	all = append(all, other)
	h := History(all)
	if len(h) != 2 || h[0].Item != "kafka-basics" || h[0].Count != 4 || h[1].Item != "redis-cache" {
		t.Fatalf("history %+v", h)
	}
	want := `kafka-basics was rejected 4 times before; reasons: "Kafka examples return errors"; "too generic"; ` +
		`"missing the consumer section". Learned: Test Kafka commands in Docker before showing them; ` +
		`Add concrete use cases and scenarios; Verify all required sections are present`
	if got := h[0].Text(); got != want {
		t.Errorf("text\n got %s\nwant %s", got, want)
	}
	if got := h[1].Text(); got != `redis-cache was rejected once before; reasons: "vague". Learned: Add concrete use cases and scenarios` {
		t.Errorf("text %s", got)
	}
	if !h[0].Last.Equal(t0.Add(3*time.Hour)) || len(h[0].RunIDs) != 4 || len(h[0].IDs) != 4 {
		t.Errorf("last %v runs %v ids %v", h[0].Last, h[0].RunIDs, h[0].IDs)
	}
}

// TestAdvise: the agent's patterns, and past rejections of the area a run
// touches, not of unrelated ones.
func TestAdvise(t *testing.T) {
	var all []*Entry
	add := func(agent, reason, item string, scope, touched []string) {
		e := Default().Entry(Rejection{Time: t0.Add(time.Duration(len(all)) * time.Minute), Agent: agent, Item: item,
			Reason: reason, Scope: scope, Touched: touched})
		e.Seal(nil)
		all = append(all, e)
	}
	// claude: 4 of 10 about examples, the rest spread.
	for i := 0; i < 4; i++ {
		add("claude", "the examples are wrong", "", []string{"pkg/api"}, []string{"pkg/api/handler.go"})
	}
	for _, r := range []string{"too generic", "confusing", "missing tests", "out of scope", "meh", "nope"} {
		add("claude", r, "", []string{"web"}, []string{"web/app.ts"})
	}
	add("codex", "the migration is incomplete", "", []string{"db/migrations/**"}, []string{"db/migrations/0007_users.sql"})
	add("codex", "the guide is vague", "docs/guide.md", []string{"docs"}, []string{"docs/guide.md"})

	texts := func(as []Advisory) []string {
		var out []string
		for _, a := range as {
			out = append(out, a.Kind+": "+a.Text)
		}
		return out
	}
	pattern := "pattern: Based on earlier reviews, examples are a common concern (40% of recent rejections): validate all code examples"
	for _, tc := range []struct {
		name string
		q    Query
		want []string
	}{
		{"claude in an unrelated area: the pattern only", Query{Agent: "claude", Scope: []string{"cmd"}},
			[]string{pattern}},
		{"claude in pkg/api (scope, before the edit)", Query{Agent: "claude", Scope: []string{"pkg/api"}},
			[]string{pattern, `past: pkg/api was rejected 4 times before; reasons: "the examples are wrong". Learned: Validate all code examples`}},
		{"a wider scope takes in pkg/api", Query{Agent: "claude", Scope: []string{"pkg/**/*.go"}},
			[]string{pattern, `past: pkg/api was rejected 4 times before; reasons: "the examples are wrong". Learned: Validate all code examples`}},
		{"a narrower scope inside pkg/api", Query{Agent: "claude", Scope: []string{"pkg/api/v2"}},
			[]string{pattern, `past: pkg/api was rejected 4 times before; reasons: "the examples are wrong". Learned: Validate all code examples`}},
		{"a sibling of pkg/api is unrelated", Query{Agent: "claude", Scope: []string{"pkg/apiv2"}},
			[]string{pattern}},
		{"another agent touching pkg/api: no pattern of claude's, but the area's past", Query{Agent: "codex", Touch: []string{"pkg/api/routes.go"}, Scope: []string{"pkg"}},
			[]string{`past: pkg/api was rejected 4 times before; reasons: "the examples are wrong". Learned: Validate all code examples`}},
		{"a touch set outside every rejected area", Query{Agent: "codex", Touch: []string{"pkg/store/db.go"}, Scope: []string{"pkg"}},
			nil},
		{"the migrations glob", Query{Agent: "codex", Touch: []string{"db/migrations/0008_orders.sql"}},
			[]string{`past: db/migrations/** was rejected once before; reasons: "the migration is incomplete". Learned: Verify all required sections are present`}},
		{"an item named by --item, touched again", Query{Agent: "codex", Touch: []string{"docs/guide.md"}},
			[]string{`past: docs/guide.md was rejected once before; reasons: "the guide is vague". Learned: In guide.md, add concrete use cases and scenarios`}},
		{"the default agent has no rejections", Query{Scope: []string{"src"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, texts(Advise(all, tc.q))); diff != "" {
				t.Errorf("advisories (-want +got):\n%s", diff)
			}
		})
	}
	// The window: before Since nothing counts.
	if got := Advise(all, Query{Agent: "claude", Scope: []string{"pkg/api"}, Since: t0.Add(time.Hour)}); len(got) != 0 {
		t.Errorf("outside the window: %v", texts(got))
	}
	// MaxPast bounds the past rejections.
	if got := Advise(all, Query{Agent: "x", Scope: []string{"."}, MaxPast: 2}); len(got) != 2 {
		t.Errorf("MaxPast 2: %v", texts(got))
	}
	// The structured form carries what the caller renders.
	a := Advise(all, Query{Agent: "claude", Scope: []string{"pkg/api"}})
	if a[0].Category != Examples || a[0].Percentage != 40 || a[0].Count != 4 || a[0].Total != 10 ||
		a[1].Item != "pkg/api" || a[1].Count != 4 || len(a[1].IDs) != 4 || !strings.HasPrefix(a[1].IDs[0], "fb-") {
		t.Errorf("advisories %+v", a)
	}
}

func TestLogAdviseAndAnalyze(t *testing.T) {
	l := OpenLog(t.TempDir())
	for _, e := range entries("claude", append(repeat(Examples, 4), repeat(Other, 6)...)...) {
		if err := l.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	a, err := l.Analyze("claude", time.Time{})
	if err != nil || len(a.Patterns) != 1 || a.Patterns[0].Percentage != 40 {
		t.Fatalf("analysis %+v, %v", a, err)
	}
	if a, _ := l.Analyze("claude", t0.Add(5*time.Minute)); a.Total != 5 || len(a.Patterns) != 0 {
		t.Errorf("windowed analysis: %+v", a)
	}
	adv, err := l.Advise(Query{Agent: "claude", Scope: []string{"pkg"}})
	if err != nil || len(adv) != 2 || adv[0].Kind != AdvisoryPattern || adv[1].Kind != AdvisoryPast {
		t.Errorf("advisories %+v, %v", adv, err)
	}
}
