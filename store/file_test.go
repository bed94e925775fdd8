package store

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/orket/orket/internal/fsroot"
)

// TestSweepTemps: the temporary files a killed atomic write left are
// removed once older than the age given; a younger one (a write that may
// be under way) and every other file stay.
func TestSweepTemps(t *testing.T) {
	dir := t.TempDir()
	mem := filepath.Join(dir, "memory")
	if err := os.MkdirAll(mem, 0o755); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for name, age := range map[string]time.Duration{
		fsroot.TempPrefix + "old":   2 * time.Minute,
		fsroot.TempPrefix + "fresh": 5 * time.Second,
		"feedback.jsonl":            time.Hour,
	} {
		p := filepath.Join(mem, name)
		if err := os.WriteFile(p, []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	root, err := fsroot.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	SweepTemps(root, "memory", time.Minute, now)
	names, err := root.ReadDirNames("memory")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	if want := []string{fsroot.TempPrefix + "fresh", "feedback.jsonl"}; !slices.Equal(names, want) {
		t.Errorf("after the sweep: %q, want %q", names, want)
	}
}
