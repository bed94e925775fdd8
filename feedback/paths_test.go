package feedback

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestNamedPaths(t *testing.T) {
	for reason, want := range map[string][]string{
		"do not touch api/openapi.yaml: the API team changes the spec": {"api/openapi.yaml"},
		"Leave `CHANGELOG.md` and ./docs/api/ alone.":                  {"CHANGELOG.md", "docs/api"},
		"see https://example.com/x for why":                            nil,
		"The examples are wrong":                                       nil,
	} {
		if diff := cmp.Diff(want, NamedPaths(reason)); diff != "" {
			t.Errorf("NamedPaths(%q) (-want +got):\n%s", reason, diff)
		}
	}
}

// TestOneConcernAcrossScopes checks that rejections naming one path in
// several scopes and categories make one advisory for a run that touches
// it, and none for one that does not.
func TestOneConcernAcrossScopes(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var entries []*Entry
	for i, sc := range []string{"pkg/api", "pkg/users", "pkg/web", "pkg/billing", "pkg/models"} {
		reason := "do not touch api/openapi.yaml: the API team changes the spec"
		if i == 2 {
			reason = "wrong: api/openapi.yaml is the API team's"
		}
		entries = append(entries, &Entry{ID: "e" + sc, Time: t0.Add(time.Duration(i) * time.Hour), Type: TypeReviewRejection,
			Agent: "bot", Item: sc, Reason: reason, Category: Other, Scope: []string{sc}, Touched: []string{sc + "/x.go", "api/openapi.yaml"}})
	}
	got := Advise(entries, Query{Agent: "bot", Scope: []string{"pkg/orders"}, Touch: []string{"pkg/orders/o.go", "api/openapi.yaml"}})
	if len(got) != 1 || got[0].Kind != AdvisoryPath || got[0].Count != 5 || len(got[0].IDs) != 5 {
		t.Fatalf("advisories %+v", got)
	}
	if want := "Reviewers rejected 5 change(s) over `api/openapi.yaml`: \"do not touch api/openapi.yaml: the API team changes the spec\""; got[0].Text != want {
		t.Errorf("text %q, want %q", got[0].Text, want)
	}
	if got := Advise(entries, Query{Agent: "bot", Scope: []string{"pkg/orders"}, Touch: []string{"pkg/orders/o.go"}}); len(got) != 0 {
		t.Errorf("a run that does not touch it: %+v", got)
	}
}

// TestRefusalTeaches checks that a refused write is told to the agent's
// next run that touches the refused path or one the glob matches.
func TestRefusalTeaches(t *testing.T) {
	e := &Entry{ID: "r1", Type: TypeRefusal, Agent: "bot", Item: "**/testdata/golden/**", Touched: []string{"pkg/web/testdata/golden/page.html"},
		Reason: "`**/testdata/golden/**` is protected: leave it alone"}
	for _, tc := range []struct {
		q    Query
		want int
	}{
		{Query{Agent: "bot", Scope: []string{"pkg/api"}, Touch: []string{"pkg/api/testdata/golden/x.json"}}, 1},
		{Query{Agent: "bot", Scope: []string{"pkg/web"}}, 1},
		{Query{Agent: "bot", Scope: []string{"pkg/api"}, Touch: []string{"pkg/api/a.go"}}, 0},
		{Query{Agent: "other", Scope: []string{"pkg/web"}}, 0},
	} {
		got := Advise([]*Entry{e}, tc.q)
		if len(got) != tc.want || tc.want == 1 && (got[0].Kind != AdvisoryRefusal || got[0].Text != e.Reason) {
			t.Errorf("%+v: %+v", tc.q, got)
		}
	}
}
