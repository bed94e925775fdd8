package feedback

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/store"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readNote(t *testing.T, orketDir, rel string) ReviewNote {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(orketDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	var n ReviewNote
	if err := json.Unmarshal(b, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestReviewRejectedFolder: every kind of thing a person or a tool may
// drop in the folder.
func TestReviewRejectedFolder(t *testing.T) {
	dir := t.TempDir()
	rej := filepath.Join(dir, "rejected")
	outside := filepath.Join(t.TempDir(), "secret.md")
	write(t, outside, "outside .orket\n")
	write(t, filepath.Join(rej, "plan.md"), "# Plan for invoice #99\n\n**Reason:** the examples are wrong\n\nPay on Friday.\n")
	write(t, filepath.Join(rej, "notes.txt"), "meh\n")
	write(t, filepath.Join(rej, "done", "plan.md"), "an earlier plan.md, reviewed\n")
	write(t, filepath.Join(rej, "20260203T164400Z-a1b2c3.patch"), "orket's own undo patch\n")
	write(t, filepath.Join(rej, ".plan.md.swp"), "an editor's\n")
	write(t, filepath.Join(rej, "folder", "inside.md"), "a folder\n")
	os.Symlink(outside, filepath.Join(rej, "link.md"))
	if err := syscall.Mkfifo(filepath.Join(rej, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	now := t0.Add(24 * time.Hour)
	r := &Reviewer{OrketDir: dir, Now: func() time.Time { return now }, Run: RunContext{Toolchain: []string{"Go"}}}

	pending, err := r.Pending()
	if diff := cmp.Diff([]string{"folder", "link.md", "notes.txt", "pipe", "plan.md"}, pending); diff != "" || err != nil {
		t.Fatalf("pending (-want +got):\n%s %v", diff, err)
	}
	got, st, err := r.ReviewAll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []Reviewed{
		{File: "folder", MovedTo: "rejected/done/folder", Note: "rejected/done/folder.review.json", Status: StatusUnreviewed,
			Error: "a directory: not reviewed (drop files, not folders)"},
		{File: "link.md", MovedTo: "rejected/done/link.md", Note: "rejected/done/link.md.review.json", Status: StatusUnreviewed,
			Error: "a symlink: not followed, not reviewed"},
		{File: "notes.txt", MovedTo: "rejected/done/notes.txt", Note: "rejected/done/notes.txt.review.json", Status: StatusReviewed,
			Learning: "Review: unclear issue", Source: SourceFallback},
		{File: "pipe", MovedTo: "rejected/done/pipe", Note: "rejected/done/pipe.review.json", Status: StatusUnreviewed,
			Error: "a fifo, not a regular file: not reviewed"},
		{File: "plan.md", MovedTo: "rejected/done/plan-2.md", Note: "rejected/done/plan-2.md.review.json", Status: StatusReviewed,
			Learning: "Validate all code examples in Go", Source: SourceFallback},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reviews (-want +got):\n%s", diff)
	}
	if st.Learnings != 2 {
		t.Errorf("memory status %+v", st)
	}
	// Moved as they were: the symlink is still a symlink, unfollowed.
	if fi, err := os.Lstat(filepath.Join(rej, "done", "link.md")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link.md in done: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "outside .orket\n" {
		t.Errorf("the symlink's target changed: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(rej, "done", "plan.md")); string(b) != "an earlier plan.md, reviewed\n" {
		t.Errorf("an earlier reviewed file was overwritten: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(rej, "done", "plan-2.md")); !strings.Contains(string(b), "Pay on Friday.") {
		t.Errorf("plan-2.md: %q", b)
	}
	// The notes mark each reviewed.
	n := readNote(t, dir, "rejected/done/plan-2.md.review.json")
	wantNote := ReviewNote{Schema: store.ReviewSchema, File: "plan.md", Status: StatusReviewed, ReviewedAt: now, Kind: "file", Size: 75,
		Reason: "the examples are wrong", Learning: "Validate all code examples in Go", Source: SourceFallback}
	if diff := cmp.Diff(wantNote, n); diff != "" {
		t.Errorf("note (-want +got):\n%s", diff)
	}
	if n := readNote(t, dir, "rejected/done/pipe.review.json"); n.Kind != "fifo" || n.Status != StatusUnreviewed {
		t.Errorf("pipe note %+v", n)
	}
	// Left alone: orket's own patch and the dotfile.
	left, _ := os.ReadDir(rej)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{".plan.md.swp", ".review.lock", "20260203T164400Z-a1b2c3.patch", "done"}, names); diff != "" {
		t.Errorf("left in rejected/ (-want +got):\n%s", diff)
	}
	// The learnings are in the memory.
	mem, _ := OpenMemory(dir).Read()
	for _, line := range []string{
		`- **2026-02-04T16:45:00Z** — Rejected file "notes.txt": Review: unclear issue`,
		`- **2026-02-04T16:45:00Z** — Rejected file "plan.md": Validate all code examples in Go`,
	} {
		if !strings.Contains(string(mem), line+"\n") {
			t.Errorf("memory lacks %q:\n%s", line, mem)
		}
	}
	// Nothing is reviewed twice.
	if again, _, err := r.ReviewAll(context.Background()); len(again) != 0 || err != nil {
		t.Errorf("second review: %+v, %v", again, err)
	}
}

func TestReviewWithSummarizer(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "rejected", "plan.md"), "Reply: we will pay on Friday.\n")
	write(t, filepath.Join(dir, "rejected", "blob.bin"), "\x00\x01\x02")
	stdin := filepath.Join(t.TempDir(), "stdin")
	r := &Reviewer{OrketDir: dir, Summarizer: &Summarizer{Argv: sh(`cat >> "$1"; echo "Never promise payment dates."`, stdin)}}
	got, _, err := r.ReviewAll(context.Background())
	if err != nil || len(got) != 2 {
		t.Fatalf("%+v, %v", got, err)
	}
	for _, g := range got {
		if g.Source != SourceSummarizer || g.Learning != "Never promise payment dates." || g.Error != "" || g.Status != StatusReviewed {
			t.Errorf("review %+v", g)
		}
	}
	prompt, _ := os.ReadFile(stdin)
	for _, want := range []string{`the file "plan.md", moved to .orket/rejected/`, "Reply: we will pay on Friday.", "(a binary file of 3 bytes)", "(no reason was given)"} {
		if !strings.Contains(string(prompt), want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	mem, _ := OpenMemory(dir).Read()
	if !strings.Contains(string(mem), `Rejected file "plan.md": Never promise payment dates.`) {
		t.Errorf("memory:\n%s", mem)
	}
}

// TestReviewSummarizerFails: a failing or hanging summariser still moves
// the file, with the learned action as the learning and the reason why.
func TestReviewSummarizerFails(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    *Summarizer
		err  string
	}{
		{"fails", &Summarizer{Argv: sh(`echo "no model" >&2; exit 1`)}, "summarizer failed, learned action used: summarizer sh: exit status 1: no model"},
		{"hangs", &Summarizer{Argv: sh(`sleep 300`), Timeout: 200 * time.Millisecond, Grace: 100 * time.Millisecond},
			"summarizer failed, learned action used: summarizer sh: timed out after 200ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, "rejected", "plan.md"), "Why: too generic\n")
			got, _, err := (&Reviewer{OrketDir: dir, Summarizer: tc.s}).ReviewAll(context.Background())
			if err != nil || len(got) != 1 {
				t.Fatalf("%+v, %v", got, err)
			}
			want := Reviewed{File: "plan.md", MovedTo: "rejected/done/plan.md", Note: "rejected/done/plan.md.review.json",
				Status: StatusReviewed, Learning: "Add concrete use cases and scenarios", Source: SourceFallback, Error: tc.err}
			if diff := cmp.Diff(want, got[0]); diff != "" {
				t.Errorf("review (-want +got):\n%s", diff)
			}
			if n := readNote(t, dir, want.Note); n.Error != tc.err || n.Learning != want.Learning {
				t.Errorf("note %+v", n)
			}
		})
	}
}

// TestReviewRefusesSymlinkedFolders: a rejected/ or done/ that is a
// symlink is refused; nothing is read through it or written outside.
func TestReviewRefusesSymlinkedFolders(t *testing.T) {
	outside := t.TempDir()
	write(t, filepath.Join(outside, "plan.md"), "Reason: wrong\n")

	dir := t.TempDir()
	os.Symlink(outside, filepath.Join(dir, "rejected"))
	r := &Reviewer{OrketDir: dir}
	if _, err := r.Pending(); !errors.Is(err, fsroot.ErrEscapes) {
		t.Errorf("Pending through a symlink: %v", err)
	}
	if _, _, err := r.ReviewAll(context.Background()); !errors.Is(err, fsroot.ErrEscapes) {
		t.Errorf("ReviewAll through a symlink: %v", err)
	}

	dir2 := t.TempDir()
	write(t, filepath.Join(dir2, "rejected", "plan.md"), "Reason: wrong\n")
	os.Symlink(outside, filepath.Join(dir2, "rejected", "done"))
	if _, _, err := (&Reviewer{OrketDir: dir2}).ReviewAll(context.Background()); !errors.Is(err, fsroot.ErrEscapes) {
		t.Errorf("done/ through a symlink: %v", err)
	}
	names, _ := os.ReadDir(outside)
	if len(names) != 1 {
		t.Errorf("wrote outside: %v", names)
	}
	if _, err := os.Stat(filepath.Join(dir2, "rejected", "plan.md")); err != nil {
		t.Errorf("plan.md moved: %v", err)
	}
	if _, err := OpenMemory(dir2).Read(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a learning was appended for a file that could not be moved: %v", err)
	}
}

func TestReviewBusyAndEmpty(t *testing.T) {
	dir := t.TempDir()
	r := &Reviewer{OrketDir: dir}
	if got, _, err := r.ReviewAll(context.Background()); got != nil || err != nil {
		t.Errorf("no folder: %v, %v", got, err)
	}
	// A repository's first run: no .orket at all.
	if got, err := (&Reviewer{OrketDir: filepath.Join(dir, "missing")}).Pending(); got != nil || err != nil {
		t.Errorf("no .orket: %v, %v", got, err)
	}
	write(t, filepath.Join(dir, "rejected", "plan.md"), "x\n")
	root, _ := fsroot.Open(dir)
	defer root.Close()
	unlock, err := store.LockAt(context.Background(), root, store.RejectedDir+"/.review.lock", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.ReviewAll(context.Background()); !errors.Is(err, ErrReviewBusy) {
		t.Errorf("while another reviews: %v", err)
	}
	unlock()
	if got, _, err := r.ReviewAll(context.Background()); len(got) != 1 || err != nil {
		t.Errorf("after: %v, %v", got, err)
	}
	// The caller may keep other names of its own there.
	write(t, filepath.Join(dir, "rejected", "keep.me"), "x\n")
	r.Own = func(name string) bool { return name == "keep.me" }
	if p, _ := r.Pending(); len(p) != 0 {
		t.Errorf("pending %v", p)
	}
}

func TestUndoPatchName(t *testing.T) {
	for name, want := range map[string]bool{
		UndoPatchName("20260203T164400Z-a1b2c3"): true,
		"20260203T164400Z-a1b2c3.patch.orig":     false,
		"fix.patch":                              false,
		"20260203T164400Z-A1B2C3.patch":          false,
		"my-20260203T164400Z-a1b2c3.patch":       false,
	} {
		if IsUndoPatch(name) != want {
			t.Errorf("IsUndoPatch(%q) = %v", name, !want)
		}
	}
}

func TestStatedReason(t *testing.T) {
	for in, want := range map[string]string{
		"Reason: too vague":                     "too vague",
		"# Plan\n\n**Reason:** examples wrong":  "examples wrong",
		"- why - it is confusing":               "it is confusing",
		"> Rejected because it is out of scope": "it is out of scope",
		"Motivo: não funciona":                  "não funciona",
		"The reason is unclear":                 "",
		"Reasonable plan":                       "",
		"":                                      "",
	} {
		if got := statedReason([]byte(in)); got != want {
			t.Errorf("statedReason(%q) = %q, want %q", in, got, want)
		}
	}
}
