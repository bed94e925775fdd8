package lessons

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func sample(i int) *Lesson {
	l := &Lesson{CreatedAt: time.Date(2026, 11, 1, 0, 0, i%60, 0, time.UTC), Command: "run",
		Request: Request{EditSource: "command", Argv: []string{"agent"}, Scope: []string{"pkg/api"}, VerifyProfile: "quick"},
		Plan:    Plan{TouchSet: []string{"pkg/api/x.go"}, TouchCount: 1},
		Verify:  Verify{Profile: "quick", Commands: []string{"go test ./..."}, FailedStep: "test", FailedCommand: "go test ./...", ExitCode: 1, OutputTail: strings.Repeat("x", 1000) + strconv.Itoa(i)},
		Outcome: Outcome{Code: "E_VERIFY_FAILED_REVERTED", RunID: fmt.Sprintf("run-%d", i)}}
	l.Seal(NewRedactor(nil))
	return l
}

func TestAppendAndReadBack(t *testing.T) {
	s := &Store{Path: filepath.Join(t.TempDir(), "memory", "failure_lessons.jsonl")}
	var want []string
	for i := 0; i < 5; i++ {
		l := sample(i)
		want = append(want, l.ID)
		if err := s.Append(l); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	damaged, err := s.Each(func(l *Lesson) error { got = append(got, l.ID); return nil })
	if err != nil || len(damaged) != 0 {
		t.Fatal(err, damaged)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	if want[0] == want[1] || len(want[0]) != 32 {
		t.Errorf("ids not content-derived and unique: %v", want)
	}
}

func TestReaderSkipsDamagedLines(t *testing.T) {
	good, _ := json.Marshal(sample(1))
	other, _ := json.Marshal(sample(2))
	input := string(good) + "\n" + `{"schema_version": "orket.failure_lesson/v1", "id": "x", "verify": {` + "\n" +
		"not json at all\n\n" + `{"schema_version":"something/else","id":"y"}` + "\n" + string(other) // no final newline
	var ids []string
	damaged, err := Read(strings.NewReader(input), func(l *Lesson) error { ids = append(ids, l.ID); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 2 {
		t.Errorf("read %d lessons, want 2", len(ids))
	}
	var lines []int
	for _, d := range damaged {
		lines = append(lines, d.Line)
	}
	if diff := cmp.Diff([]int{2, 3, 5}, lines); diff != "" {
		t.Errorf("damaged lines (-want +got):\n%s", diff)
	}
}

func TestAppendAfterATornLine(t *testing.T) {
	s := &Store{Path: filepath.Join(t.TempDir(), "l.jsonl")}
	os.WriteFile(s.Path, []byte(`{"schema_version":"orket.failure_lesson/v1","id":"torn`), 0o644)
	if err := s.Append(sample(7)); err != nil {
		t.Fatal(err)
	}
	n := 0
	damaged, _ := s.Each(func(*Lesson) error { n++; return nil })
	if n != 1 || len(damaged) != 1 {
		t.Errorf("%d lessons, %d damaged; the torn line must not swallow the next", n, len(damaged))
	}
}

// TestConcurrentAppenders runs 16 processes appending 1,000 lessons each
// to one log (4 of 250 under -short): every line parses and none is lost.
func TestConcurrentAppenders(t *testing.T) {
	writers, each := 16, 1000
	if testing.Short() {
		writers, each = 4, 250
	}
	path := filepath.Join(t.TempDir(), "failure_lessons.jsonl")
	exe, _ := os.Executable()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			cmd := exec.Command(exe, "-test.run=^TestHelperAppender$")
			cmd.Env = append(os.Environ(), "ORKET_TEST_APPENDER="+path, "ORKET_TEST_WRITER="+strconv.Itoa(w), "ORKET_TEST_EACH="+strconv.Itoa(each))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("writer %d: %v\n%s", w, err, out)
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	damaged, err := (&Store{Path: path}).Each(func(l *Lesson) error { seen[l.Outcome.RunID] = true; return nil })
	if err != nil || len(damaged) > 0 {
		t.Fatalf("err %v, damaged %v", err, damaged)
	}
	if len(seen) != writers*each {
		t.Errorf("%d distinct lessons, want %d", len(seen), writers*each)
	}
	b, _ := os.ReadFile(path)
	if n := bytes.Count(b, []byte("\n")); n != writers*each {
		t.Errorf("%d lines, want %d", n, writers*each)
	}
}

// TestHelperAppender is the child process of TestConcurrentAppenders.
func TestHelperAppender(t *testing.T) {
	path := os.Getenv("ORKET_TEST_APPENDER")
	if path == "" {
		t.Skip("helper process")
	}
	w := os.Getenv("ORKET_TEST_WRITER")
	each, _ := strconv.Atoi(os.Getenv("ORKET_TEST_EACH"))
	s := &Store{Path: path}
	for i := 0; i < each; i++ {
		l := sample(i)
		l.Outcome.RunID = w + "-" + strconv.Itoa(i)
		l.Seal(NewRedactor(nil))
		if err := s.Append(l); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPrune(t *testing.T) {
	s := &Store{Path: filepath.Join(t.TempDir(), "l.jsonl")}
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 10; i++ {
		l := sample(i)
		l.CreatedAt = now.Add(-time.Duration(i) * 24 * time.Hour)
		l.Seal(NewRedactor(nil))
		s.Append(l)
	}
	removed, err := s.Prune(5, 7*24*time.Hour, now)
	if err != nil || removed != 5 {
		t.Fatalf("removed %d, %v", removed, err)
	}
	var ages []int
	s.Each(func(l *Lesson) error { ages = append(ages, int(now.Sub(l.CreatedAt).Hours()/24)); return nil })
	if diff := cmp.Diff([]int{4, 3, 2, 1, 0}, ages); diff != "" {
		t.Errorf("kept ages (-want +got):\n%s", diff)
	}
}

// TestPrunePerAgent: each agent keeps its newest MaxPerAgent lessons; a
// busy agent does not push out a quiet one's.
func TestPrunePerAgent(t *testing.T) {
	s := &Store{Path: filepath.Join(t.TempDir(), "l.jsonl"), MaxPerAgent: 2}
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for i, agent := range []string{"quiet", "busy", "busy", "busy", "busy", ""} {
		l := sample(i)
		l.Request.Agent = agent
		l.CreatedAt = now.Add(time.Duration(i) * time.Hour)
		l.Seal(NewRedactor(nil))
		s.Append(l)
	}
	removed, err := s.Prune(100, 0, now)
	if err != nil || removed != 2 {
		t.Fatalf("removed %d, %v; want 2", removed, err)
	}
	var kept []string
	s.Each(func(l *Lesson) error {
		kept = append(kept, fmt.Sprintf("%s@%d", l.Request.Agent, l.CreatedAt.Hour()))
		return nil
	})
	if diff := cmp.Diff([]string{"quiet@0", "busy@3", "busy@4", "@5"}, kept); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
}

func FuzzRead(f *testing.F) {
	good, _ := json.Marshal(sample(1))
	f.Add(append(good, '\n'))
	f.Add([]byte("{\"schema_version\":\"orket.failure_lesson/v1\",\"id\":\"a\"}\n{broken\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		n := 0
		damaged, err := Read(bytes.NewReader(data), func(l *Lesson) error {
			if l.ID == "" {
				t.Fatal("a lesson without an id")
			}
			n++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if lines := bytes.Count(data, []byte("\n")) + 1; n+len(damaged) > lines {
			t.Fatalf("%d lessons + %d damaged from %d lines", n, len(damaged), lines)
		}
	})
}
