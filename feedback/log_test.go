package feedback

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/redact"
	"github.com/orket/orket/store"
)

var t0 = time.Date(2026, 2, 3, 16, 45, 0, 0, time.UTC)

func TestEntry(t *testing.T) {
	e := Default().Entry(Rejection{
		Time: t0, RunID: "20260203T164400Z-a1b2c3", Task: "ISSUE-7", Reason: "Kafka examples return errors",
		By: "Ana", Scope: []string{"docs"}, Touched: []string{"docs/kafka-basics.md"},
		Undo: &Undo{Status: UndoDone, Patch: ".orket/rejected/20260203T164400Z-a1b2c3.patch"},
		Run:  RunContext{Profile: "docs", Toolchain: []string{"Docker"}},
	})
	want := &Entry{
		Time: t0, Type: TypeReviewRejection, RunID: "20260203T164400Z-a1b2c3", Task: "ISSUE-7", Agent: "default",
		Item: "docs", ArtifactType: "docs", Reason: "Kafka examples return errors", Category: Examples, Keyword: "example",
		Technologies: []string{"Kafka"}, Action: "Test Kafka commands in Docker with the docs verify profile before showing them",
		By: "Ana", Scope: []string{"docs"}, Profile: "docs", Touched: []string{"docs/kafka-basics.md"},
		Undo: &Undo{Status: UndoDone, Patch: ".orket/rejected/20260203T164400Z-a1b2c3.patch"},
	}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("Entry (-want +got):\n%s", diff)
	}
	// The touch set names files a reason may mention.
	e = Default().Entry(Rejection{Agent: "claude", Item: "parser", ArtifactType: "code", Reason: "the lexer.go examples are wrong",
		Touched: []string{"pkg/lexer.go"}})
	if e.Agent != "claude" || e.Item != "parser" || e.ArtifactType != "code" || e.Action != "In lexer.go, validate all code examples" || e.Time.IsZero() {
		t.Errorf("entry %+v", e)
	}
}

var idRe = regexp.MustCompile(`^fb-[0-9]{8}T[0-9]{6}Z-[0-9a-f]{12}$`)

func TestSeal(t *testing.T) {
	const token = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	e := Default().Entry(Rejection{Time: t0, RunID: "r1", Reason: "the \x1b[31mexample\x1b[0m leaks " + token + "\x07", Scope: []string{"pkg"}})
	e.Undo = &Undo{Status: UndoDiverged, Note: "token " + token}
	e.Seal(nil)
	if strings.Contains(e.Reason, token) || strings.Contains(e.Undo.Note, token) || !strings.Contains(e.Reason, redact.Redacted) {
		t.Errorf("not redacted: %q / %q", e.Reason, e.Undo.Note)
	}
	if strings.ContainsAny(e.Reason, "\x1b\x07") || !strings.HasPrefix(e.Reason, "the example leaks ") {
		t.Errorf("control characters kept: %q", e.Reason)
	}
	if e.Schema != store.FeedbackSchema || !idRe.MatchString(e.ID) || !strings.HasPrefix(e.ID, "fb-20260203T164500Z-") {
		t.Errorf("schema %q id %q", e.Schema, e.ID)
	}
	// Stable: sealing again (a sealed entry read back) keeps the id.
	id := e.ID
	var back Entry
	b, _ := json.Marshal(e)
	json.Unmarshal(b, &back)
	back.Seal(nil)
	if back.ID != id {
		t.Errorf("id changed on a second seal: %s, then %s", id, back.ID)
	}
	// Unique: the same rejection a nanosecond later is another record.
	e2 := Default().Entry(Rejection{Time: t0.Add(time.Nanosecond), RunID: "r1", Reason: "the example leaks", Scope: []string{"pkg"}})
	e2.Seal(nil)
	if e2.ID == id {
		t.Error("two rejections share an id")
	}
	// An explicit value given to the redactor goes too.
	e3 := Default().Entry(Rejection{Time: t0, Reason: "wrong: it prints s3cr3t-v4lue"})
	e3.Seal(redact.New(redact.Options{Values: []string{"s3cr3t-v4lue"}}))
	if strings.Contains(e3.Reason, "s3cr3t") || strings.Contains(e3.Action, "s3cr3t") {
		t.Errorf("value not redacted: %+v", e3)
	}
	e4 := Default().Entry(Rejection{Time: t0, Reason: "I dislike s3cr3t-v4lue here"})
	e4.Seal(redact.New(redact.Options{Values: []string{"s3cr3t-v4lue"}}))
	if e4.Action != "Review: i dislike [REDACTED] here" {
		t.Errorf("learned action %q", e4.Action)
	}
}

func record(t testing.TB, l *Log, r Rejection) *Entry {
	t.Helper()
	e := Default().Entry(r)
	if err := l.Record(e, nil); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestLogReadBack(t *testing.T) {
	dir := t.TempDir()
	l := OpenLog(dir)
	if l.Path() != filepath.Join(dir, "memory", "feedback.jsonl") {
		t.Errorf("path %s", l.Path())
	}
	if err := l.Append(&Entry{Reason: "x"}); !errors.Is(err, ErrUnsealed) {
		t.Errorf("unsealed append: %v", err)
	}
	a := record(t, l, Rejection{Time: t0, Agent: "a", Reason: "wrong", Scope: []string{"pkg"}})
	b := record(t, l, Rejection{Time: t0.Add(time.Hour), Agent: "b", Reason: "vague", Scope: []string{"pkg"}})
	// A torn line, a line of another schema's type, and a repeat of a.
	f, _ := os.OpenFile(l.Path(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"schema_version":"orket.feedback/v1","id":"x","ty` + "\n")
	f.WriteString(`{"schema_version":"orket.feedback/v1","id":"fb-c","type":"correction","agent":"a","time":"2026-02-03T18:00:00Z"}` + "\n")
	f.Close()
	if err := l.Append(a); err != nil {
		t.Fatal(err)
	}
	all, damaged, err := l.Entries(Filter{})
	if err != nil || len(damaged) != 1 {
		t.Fatalf("damaged %v, err %v", damaged, err)
	}
	var ids []string
	for _, e := range all {
		ids = append(ids, e.ID)
	}
	if diff := cmp.Diff([]string{a.ID, b.ID, "fb-c"}, ids); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(a, all[0]); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		f    Filter
		want int
	}{
		{Filter{Agent: "a"}, 2},
		{Filter{Agent: "a", Type: TypeReviewRejection}, 1},
		{Filter{Since: t0.Add(time.Minute)}, 2},
		{Filter{Agent: "nobody"}, 0},
	} {
		got, _, _ := l.Entries(tc.f)
		if len(got) != tc.want {
			t.Errorf("Entries(%+v): %d, want %d", tc.f, len(got), tc.want)
		}
	}
	if got, _ := l.Find(b.ID); got == nil || got.Reason != "vague" {
		t.Errorf("Find: %+v", got)
	}
	if got, _ := l.Find("fb-none"); got != nil {
		t.Errorf("Find of a missing id: %+v", got)
	}
	// A missing log has no entries.
	none, _, err := OpenLog(t.TempDir()).Entries(Filter{})
	if err != nil || len(none) != 0 {
		t.Errorf("missing log: %v %v", none, err)
	}
}

func TestPrune(t *testing.T) {
	l := OpenLog(t.TempDir())
	now := t0.Add(100 * 24 * time.Hour)
	for i := 0; i < 5; i++ {
		record(t, l, Rejection{Time: now.Add(-time.Duration(5-i) * time.Hour), Agent: "a", Reason: fmt.Sprint("wrong ", i)})
	}
	record(t, l, Rejection{Time: t0, Agent: "b", Reason: "old"})
	record(t, l, Rejection{Time: now, Agent: "b", Reason: "new"})
	n, err := l.Prune(3, 90*24*time.Hour, now)
	if err != nil || n != 3 {
		t.Fatalf("pruned %d, %v; want 3", n, err)
	}
	all, _, _ := l.Entries(Filter{})
	var reasons []string
	for _, e := range all {
		reasons = append(reasons, e.Agent+":"+e.Reason)
	}
	if diff := cmp.Diff([]string{"a:wrong 2", "a:wrong 3", "a:wrong 4", "b:new"}, reasons); diff != "" {
		t.Errorf("after prune (-want +got):\n%s", diff)
	}
	if n, err := l.Prune(0, 0, now); n != 0 || err != nil {
		t.Errorf("no limits pruned %d, %v", n, err)
	}
}

// TestConcurrentRecords: goroutines recording at once lose nothing.
func TestConcurrentRecords(t *testing.T) {
	l := OpenLog(t.TempDir())
	const writers, each = 8, 40
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				e := Default().Entry(Rejection{Time: t0, Agent: fmt.Sprint("w", w), Reason: fmt.Sprintf("wrong %d/%d", w, i)})
				if err := l.Record(e, nil); err != nil {
					t.Error(err)
				}
			}
		}(w)
	}
	wg.Wait()
	all, damaged, err := l.Entries(Filter{})
	if err != nil || len(damaged) != 0 || len(all) != writers*each {
		t.Fatalf("%d entries (want %d), damaged %v, err %v", len(all), writers*each, damaged, err)
	}
}
