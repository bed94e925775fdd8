package lessons

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/orket/orket/preflight"
	"github.com/orket/orket/store"
)

// TestOverlongLineKeepsLaterLessons: a line longer than a record may be
// (16 MiB) is skipped as damaged, and the lessons after it keep their
// place in the log: the index built past it still finds their ids,
// titles and checks.
func TestOverlongLineKeepsLaterLessons(t *testing.T) {
	s := &Store{Path: filepath.Join(t.TempDir(), "l.jsonl")}
	day := 24 * time.Hour
	if err := s.Append(lesson("before", day, []string{"pkg"}, []string{"pkg/a.go"}, "go test ./...", []string{"missing_env_var"}, "A is not set")); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(s.Path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(append(bytes.Repeat([]byte("x"), store.MaxLine+3<<20), '\n'))
	f.Close()
	if err := s.Append(lesson("after", day, []string{"web"}, []string{"web/x.ts"}, "npm test", []string{"type_error"}, "error TS2322")); err != nil {
		t.Fatal(err)
	}
	os.Remove(s.indexPath()) // built anew, past the long line
	adv, damaged, err := s.Advisories(Query{Scope: []string{"web"}, TouchSet: []string{"web/x.ts"},
		Commands: rootCommands("npm test"), Now: now, HalfLife: 14 * day, TopK: 3, EnvFails: func([]preflight.Check) bool { return false },
		Distinctive: func(kind string) bool { return kind == ".ts" }})
	if err != nil {
		t.Fatal(err)
	}
	if len(damaged) != 1 || damaged[0].Line != 2 {
		t.Errorf("damaged %+v, want line 2", damaged)
	}
	if len(adv) != 1 || adv[0].Title != "title after" || adv[0].ID == "" {
		t.Fatalf("advisories past the long line: %+v", adv)
	}
}
