package lessons

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/classify"
	"github.com/orket/orket/preflight"
)

// stepLesson is a lesson about a failed step (or the edit) in a dir.
func stepLesson(step, command, dir string) *Lesson {
	l := &Lesson{CreatedAt: now.Add(-time.Hour), Command: "run",
		Request:        Request{Scope: []string{"pkg"}, VerifyProfile: "quick"},
		Verify:         Verify{FailedStep: step, FailedCommand: command, FailedDir: dir},
		Classification: Classification{Tags: []string{"missing_env_var"}, FirstError: "DATABASE_URL is not set"},
		Advice: classify.Advice{Title: "Missing environment variable DATABASE_URL", SuggestedActions: []string{},
			PreflightChecks: []preflight.Check{{Type: preflight.EnvVarPresent, Name: "DATABASE_URL"}}},
		Outcome: Outcome{RunID: step + dir}}
	l.Seal(NewRedactor(nil))
	return l
}

// TestStaleLessons checks that a lesson whose failed command (in its
// dir) is not in the profile is stale and weighs StaleWeight, and that
// the same command in another dir is another command.
func TestStaleLessons(t *testing.T) {
	profile := []StepCommand{{Command: "go test ./..."}, {Command: "npm test", Dir: "web"}}
	for _, tc := range []struct {
		name               string
		step, command, dir string
		wantStale          bool
		wantWeight         float64
	}{
		{"in the profile", "test", "go test ./...", "", false, 1},
		{"in the profile, in its dir", "web", "npm test", "web", false, 1},
		{"the same command in another dir", "docs", "go test ./...", "docs", true, StaleWeight},
		{"a step gone from the profile", "lint", "golangci-lint run", "", true, StaleWeight},
		{"the edit command is never stale", EditStep, "agent -p fix", "", false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Store{Path: filepath.Join(t.TempDir(), "l.jsonl")}
			if err := s.Append(stepLesson(tc.step, tc.command, tc.dir)); err != nil {
				t.Fatal(err)
			}
			adv, _, err := s.Advisories(Query{Scope: []string{"pkg"}, Commands: profile, Now: now, TopK: 3})
			if err != nil || len(adv) != 1 {
				t.Fatalf("%d advisories, %v", len(adv), err)
			}
			a := adv[0]
			type got struct {
				Stale              bool
				Weight             float64
				Step, Command, Dir string
			}
			want := got{tc.wantStale, tc.wantWeight, tc.step, tc.command, tc.dir}
			if diff := cmp.Diff(want, got{a.Stale, a.Why.StaleWeight, a.FailedStep, a.FailedCommand, a.FailedDir}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			w := a.Why
			if a.Score != round3(w.Recency*tc.wantWeight*w.Relevance) {
				t.Errorf("score %v, want %v", a.Score, round3(w.Recency*tc.wantWeight*w.Relevance))
			}
		})
	}
}

// TestOneVariableOneFold checks that one missing variable met by one
// command in two dirs is one hazard: an environment is the same wherever
// it is read.
func TestOneVariableOneFold(t *testing.T) {
	s := &Store{Path: filepath.Join(t.TempDir(), "l.jsonl")}
	s.Append(stepLesson("test", "go test ./...", ""), stepLesson("docs", "go test ./...", "docs"))
	adv, _, err := s.Advisories(Query{Scope: []string{"pkg"},
		Commands: []StepCommand{{Command: "go test ./..."}, {Command: "go test ./...", Dir: "docs"}}, Now: now, TopK: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(adv) != 1 || adv[0].Count != 2 {
		t.Errorf("advisories: %+v", adv)
	}
}

// TestOldIndexIsRebuilt checks that an index of the previous format (no
// failed dir), whose meta matched the log, is rebuilt, not misread.
func TestOldIndexIsRebuilt(t *testing.T) {
	s := &Store{Path: filepath.Join(t.TempDir(), "l.jsonl")}
	s.Append(stepLesson("docs", "go test ./...", "docs"))
	meta, _ := os.ReadFile(s.metaPath())
	os.WriteFile(s.metaPath(), []byte(strings.Replace(string(meta), indexVersion+" ", "v1 ", 1)), 0o644)
	if s.indexFresh() {
		t.Fatal("an index of another version is trusted")
	}
	adv, _, _ := s.Advisories(Query{Scope: []string{"pkg"}, Commands: rootCommands("go test ./..."), Now: now, TopK: 3})
	if len(adv) != 1 || !adv[0].Stale || !s.indexFresh() {
		t.Errorf("advisories %+v, fresh %v", adv, s.indexFresh())
	}
}

func TestRemove(t *testing.T) {
	s := &Store{Path: filepath.Join(t.TempDir(), "l.jsonl")}
	var ids []string
	for i := 0; i < 4; i++ {
		l := sample(i)
		ids = append(ids, l.ID)
		s.Append(l)
	}
	// A damaged line and a key this orket does not know: the first goes,
	// the second stays with its lesson.
	f, _ := os.OpenFile(s.Path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{broken\n" + `{"schema_version":"orket.failure_lesson/v1","id":"extra","future_key":{"a":1}}` + "\n")
	f.Close()
	for _, tc := range []struct {
		name        string
		remove      func(l *Lesson) bool
		wantRemoved int
		wantIDs     []string
	}{
		{"nothing selected leaves the log", func(*Lesson) bool { return false }, 0, append(append([]string{}, ids...), "extra")},
		{"one by id", func(l *Lesson) bool { return l.ID == ids[1] }, 1, []string{ids[0], ids[2], ids[3], "extra"}},
		{"several", func(l *Lesson) bool { return l.ID == ids[0] || l.ID == ids[3] }, 2, []string{ids[2], "extra"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := s.Remove(tc.remove)
			if err != nil || n != tc.wantRemoved {
				t.Fatalf("removed %d, %v; want %d", n, err, tc.wantRemoved)
			}
			var got []string
			damaged, _ := s.Each(func(l *Lesson) error { got = append(got, l.ID); return nil })
			if diff := cmp.Diff(tc.wantIDs, got); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
			if tc.wantRemoved > 0 && len(damaged) > 0 {
				t.Errorf("damaged lines kept: %v", damaged)
			}
		})
	}
	b, _ := os.ReadFile(s.Path)
	if !strings.Contains(string(b), `"future_key":{"a":1}`) {
		t.Errorf("a kept lesson lost a key:\n%s", b)
	}
}
