package lessons

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEachBrief: the lessons EachBrief gives are Each's with their output
// tails left out, whatever a tail holds (quotes, escapes, the names of
// the fields around it); a lesson without a tail and a damaged line are
// read as Each reads them.
func TestEachBrief(t *testing.T) {
	s := &Store{Path: filepath.Join(t.TempDir(), "failure_lessons.jsonl")}
	tails := []string{
		strings.Repeat("FAIL: TestX\n", 3000),
		`"verify": {"output_tail": "nested"}, \"quoted\" \\ é ` + "\t\x1f",
		"",
		"}",
	}
	for i, tail := range tails {
		l := sample(i)
		l.Verify.OutputTail = tail
		l.Seal(NewRedactor(nil))
		if err := s.Append(l); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.OpenFile(s.Path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, `{"schema_version": "orket.failure_lesson/v1", "id": "x", "verify": {"output_tail": "cut`)
	f.Close()

	read := func(each func(func(*Lesson) error) ([]Damaged, error)) ([]*Lesson, []Damaged) {
		var ls []*Lesson
		damaged, err := each(func(l *Lesson) error { ls = append(ls, l); return nil })
		if err != nil {
			t.Fatal(err)
		}
		return ls, damaged
	}
	whole, wholeDamaged := read(s.Each)
	brief, briefDamaged := read(s.EachBrief)
	if len(whole) != len(tails) || whole[0].Verify.OutputTail == "" {
		t.Fatalf("Each read %d lessons (tail %q...)", len(whole), whole[0].Verify.OutputTail[:min(20, len(whole[0].Verify.OutputTail))])
	}
	for _, l := range whole {
		l.Verify.OutputTail = ""
	}
	if d := cmp.Diff(whole, brief); d != "" {
		t.Errorf("EachBrief (-Each without tails +EachBrief):\n%s", d)
	}
	if d := cmp.Diff(len(wholeDamaged), len(briefDamaged)); d != "" || len(briefDamaged) != 1 {
		t.Errorf("damaged lines: Each %v, EachBrief %v", wholeDamaged, briefDamaged)
	}
}

// BenchmarkEach: reading 1,000 lessons whose output tails are 16 KB,
// whole and brief (what proposals read at every failing run).
func BenchmarkEach(b *testing.B) {
	s := &Store{Path: filepath.Join(b.TempDir(), "failure_lessons.jsonl")}
	var batch []*Lesson
	for i := 0; i < 1000; i++ {
		l := sample(i)
		l.Verify.OutputTail = strings.Repeat(fmt.Sprintf("--- FAIL: TestCase%d (0.00s)\n    x_test.go:12: got 1, want 2\n", i), 300)[:16<<10]
		l.Seal(NewRedactor(nil))
		batch = append(batch, l)
	}
	if err := s.Append(batch...); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		each func(func(*Lesson) error) ([]Damaged, error)
	}{{"whole", s.Each}, {"brief", s.EachBrief}} {
		b.Run(bc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				n := 0
				if _, err := bc.each(func(*Lesson) error { n++; return nil }); err != nil || n != 1000 {
					b.Fatal(err, n)
				}
			}
		})
	}
}
