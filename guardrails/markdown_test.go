package guardrails

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/store"
)

const personDoc = `# Guardrails for claude

Our own preamble, written by a person.

## pkg/api

- Run ` + "`go generate ./...`" + ` first <!-- gp-aaaaaaaaaaaa -->
* A rule a person added
  with a second line

## docs
- Test the examples <!-- gp-bbbbbbbbbbbb -->
`

func TestApplyChange(t *testing.T) {
	tests := []struct {
		name string
		c    Change
		id   string
		want string // the text expected, or the error
	}{
		{"addition to a section", Change{Type: Addition, Section: "pkg/api", NewText: "Keep handlers\nsmall <!-- x -->"}, "gp-cccccccccccc",
			strings.Replace(personDoc, "  with a second line\n", "  with a second line\n- Keep handlers small <! -- x -- > <!-- gp-cccccccccccc -->\n", 1)},
		{"addition of a section", Change{Type: Addition, Section: "pkg/db", NewText: "Export DATABASE_URL"}, "gp-cccccccccccc",
			personDoc + "\n## pkg/db\n\n- Export DATABASE_URL <!-- gp-cccccccccccc -->\n"},
		{"already there", Change{Type: Addition, Section: "pkg/api", NewText: "A rule a person added"}, "gp-cccccccccccc", "error: " + ErrAlreadyThere.Error()},
		{"modification by id", Change{Type: Modification, Section: "docs", Line: "gp-bbbbbbbbbbbb", NewText: "Run the examples"}, "gp-cccccccccccc",
			strings.Replace(personDoc, "- Test the examples <!-- gp-bbbbbbbbbbbb -->", "- Run the examples <!-- gp-cccccccccccc -->", 1)},
		{"modification by text", Change{Type: Modification, Section: "pkg/api", OldText: "A rule a person added", NewText: "A better rule"}, "gp-cccccccccccc",
			strings.Replace(personDoc, "* A rule a person added", "- A better rule <!-- gp-cccccccccccc -->", 1)},
		{"removal empties a section", Change{Type: Removal, Section: "docs", Line: "gp-bbbbbbbbbbbb"}, "",
			strings.Replace(personDoc, "\n## docs\n- Test the examples <!-- gp-bbbbbbbbbbbb -->\n", "", 1)},
		{"removal of a line gone", Change{Type: Removal, Section: "docs", Line: "gp-dddddddddddd", OldText: "nope"}, "", "error: " + ErrLineGone.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ApplyChange(personDoc, tt.c, tt.id)
			if err != nil {
				got = "error: " + err.Error()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// The first constraint of a new document.
	got, err := ApplyChange(NewDoc("claude"), Change{Type: Addition, Section: "", NewText: "Be brief"}, "gp-eeeeeeeeeeee")
	if err != nil || !strings.HasSuffix(got, "paths its section names.\n\n## Everywhere\n\n- Be brief <!-- gp-eeeeeeeeeeee -->\n") {
		t.Errorf("first: %q %v", got, err)
	}
	// An empty section gets its first line after the heading.
	got, _ = ApplyChange("# G\n\n## a\n\n## b\n- x\n", Change{Type: Addition, Section: "a", NewText: "y"}, "")
	if got != "# G\n\n## a\n\n- y\n\n## b\n- x\n" {
		t.Errorf("empty section: %q", got)
	}
}

func TestChangesAndDiff(t *testing.T) {
	b := strings.Replace(personDoc, "- Test the examples <!-- gp-bbbbbbbbbbbb -->", "- Run the examples <!-- gp-bbbbbbbbbbbb -->", 1)
	b = strings.Replace(b, "* A rule a person added\n", "", 1)
	b += "\n## pkg/db\n\n- Export DATABASE_URL <!-- gp-cccccccccccc -->\n"
	want := []Change{
		{Type: Modification, Section: "docs", OldText: "Test the examples", NewText: "Run the examples", Line: "gp-bbbbbbbbbbbb"},
		{Type: Addition, Section: "pkg/db", NewText: "Export DATABASE_URL", Line: "gp-cccccccccccc"},
		{Type: Removal, Section: "pkg/api", OldText: "A rule a person added"},
	}
	if diff := cmp.Diff(want, Changes(personDoc, b)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if Changes(personDoc, personDoc) != nil || Diff("a", "b", personDoc, personDoc) != "" {
		t.Error("equal texts differ")
	}
	d := Diff("v1.md", "v2.md", "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n", "a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\n")
	wantDiff := "--- v1.md\n+++ v2.md\n@@ -1,5 +1,5 @@\n a\n-b\n+B\n c\n d\n e\n@@ -8,3 +8,4 @@\n h\n i\n j\n+k\n"
	if d != wantDiff {
		t.Errorf("diff:\n%s\nwant:\n%s", d, wantDiff)
	}
}

// The box: every row as wide as the frame, the seed's fields, the keys.
func TestRenderBox(t *testing.T) {
	r := newRepo(t)
	r.fail(kafka, 5, t0)
	s := r.store()
	p := must[*ProposeResult](t)(s.Propose(context.Background(), "claude", r.signals("claude"), nil, nil, t0.Add(time.Hour))).Added[0]
	it := must[*ReviewItem](t)(s.ReviewItem(context.Background(), p, nil, &Checker{Root: r.root}))
	for _, width := range []int{0, 40, 100} {
		box := RenderBox(it, width)
		lines := strings.Split(strings.TrimSuffix(box, "\n"), "\n")
		w := utf8.RuneCountInString(lines[0])
		if width == 0 && w != BoxWidth || width != 0 && w != width {
			t.Errorf("width %d: drawn %d", width, w)
		}
		for _, l := range lines {
			if utf8.RuneCountInString(l) != w {
				t.Errorf("width %d: row %q is %d wide", width, l, utf8.RuneCountInString(l))
			}
		}
		for _, want := range []string{"Agent: claude", "Version: none → v1", "Lessons Applied:", "Changes:", "@@ pkg/api", "+ Run `go",
			"Source Feedback: 5 entries", "Confidence: 64%", "[a] Approve  [r] Reject  [v] View Full  [q] Defer", "Evidence: demoted: pkg/api no longer exists"} {
			if width >= BoxWidth && !strings.Contains(box, want) {
				t.Errorf("width %d: no %q in\n%s", width, want, box)
			}
		}
	}
	src := RenderSources(p)
	if strings.Count(src, "test_failure  medium  lesson ") != 5 || !strings.Contains(src, "error: no required module provides package github.com/segmentio/kafka-go") {
		t.Errorf("sources:\n%s", src)
	}
	if l := RenderList([]*Proposal{p}); !strings.HasPrefix(l, p.ID+"  claude  proposed  5 entries  64%  Run `go generate") {
		t.Errorf("list: %q", l)
	}
	if RenderList(nil) != "no pending proposals\n" {
		t.Error("empty list")
	}
	// Keys, and what they do.
	for k, a := range map[rune]Action{'a': ActionApprove, 'R': ActionReject, 'v': ActionView, 'q': ActionDefer, 'x': ActionNone, '\r': ActionNone} {
		if KeyAction(k) != a {
			t.Errorf("key %q", k)
		}
	}
	_, q, err := s.Decide(context.Background(), p.ID, ActionView, "Ana", "", t0)
	if err != nil || q.Status != StatusProposed {
		t.Errorf("view changed the status: %v %v", q.Status, err)
	}
	_, q, _ = s.Decide(context.Background(), p.ID, ActionDefer, "Ana", "", t0.Add(time.Minute))
	if q.Status != StatusDeferred {
		t.Errorf("q: %s", q.Status)
	}
	v, q, err := s.Decide(context.Background(), p.ID, ActionApprove, "Ana", "", t0.Add(2*time.Minute))
	if err != nil || v.Version != 1 || q.Status != StatusApplied {
		t.Errorf("a: %v %v", q.Status, err)
	}
	// The box of a proposal the text already holds says so.
	it = must[*ReviewItem](t)(s.ReviewItem(context.Background(), p, nil, nil))
	if it.Note == "" || it.New != 1 || !strings.Contains(RenderBox(it, 0), "no new version") {
		t.Errorf("note: %+v", it)
	}
}

func FuzzGuardrailsDoc(f *testing.F) {
	f.Add(personDoc, "pkg/api", "Keep it small", "gp-cccccccccccc")
	f.Add(NewDoc("claude"), "", "x", "")
	f.Add("## a\r\n- x <!-- gp-1234 -->\r\n## a\n", "a", "y <!-- gp-1234 -->", "gp-1234")
	f.Add("", "docs", "`x`", "gp-abcd")
	f.Fuzz(func(t *testing.T, text, section, line, id string) {
		if !utf8.ValidString(text) || !utf8.ValidString(line) || !utf8.ValidString(section) || strings.ContainsAny(text, "\r") {
			return
		}
		ParseDoc(text)
		out, err := ApplyChange(text, Change{Type: Addition, Section: section, NewText: line}, id)
		if err != nil {
			return
		}
		// Only lines were inserted: the old lines are a subsequence of
		// the new, in order.
		old, now := splitLines(text), splitLines(out)
		i := 0
		for _, l := range now {
			if i < len(old) && l == old[i] {
				i++
			}
		}
		if i != len(old) {
			t.Fatalf("a line of the text was changed:\n%q\n->\n%q", text, out)
		}
		if len(now)-len(old) > 4 {
			t.Fatalf("more than a section and a line inserted:\n%q\n->\n%q", text, out)
		}
		// The line is there, under its section, once more than before.
		count := func(s string) int {
			n := 0
			for _, it := range Items(s) {
				sec := cleanText(section)
				if sec == "" {
					sec = Everywhere
				}
				if it.Text == cleanText(line) && it.Section == sec {
					n++
				}
			}
			return n
		}
		if count(out) != count(text)+1 {
			t.Fatalf("the line is not under its section:\n%q\n->\n%q", text, out)
		}
		// Removing it again gives back the lines that were there.
		if validID().MatchString(id) {
			back, err := ApplyChange(out, Change{Type: Removal, Section: section, Line: id}, "")
			if err != nil {
				t.Fatalf("remove what was added: %v\n%q", err, out)
			}
			if n := len(Items(back)); n != len(Items(text)) {
				t.Fatalf("removal left %d items, want %d:\n%q", n, len(Items(text)), back)
			}
		}
	})
}

func FuzzParseVersion(f *testing.F) {
	v := &Version{Schema: store.VersionSchema, Agent: "claude", Version: 3, CreatedAt: t0, Kind: KindRollback, AppliedLessons: []string{},
		Changes: []Change{{Type: Removal, Section: "a", OldText: "x"}}, Lines: []Line{{ID: "gp-1", Text: "y", Since: t0}}, Restores: 1}
	b, _ := json.Marshal(v)
	f.Add(b)
	f.Add([]byte(`{"version":"x"}`))
	f.Add([]byte(`{"lines":null,"changes":[{}],"performance":{"quality_before":1}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := ParseVersion(b)
		if err != nil {
			return
		}
		if v.AppliedLessons == nil || v.Changes == nil || v.Lines == nil {
			t.Fatal("nil lists")
		}
		out, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseVersion(out)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(v, again); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
		v.ActiveLines()
		v.AllLines()
	})
}
