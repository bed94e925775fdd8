package txn

import (
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSnapshotPaths: Paths names every file of the snapshot's tree
// (tracked, staged, modified, untracked, .orket's), perhaps with a file
// the index tracks that is gone, and nothing else; a snapshot read back
// by recovery, which has no list of what the index does not hold, names
// its files too.
func TestSnapshotPaths(t *testing.T) {
	dir := dirtyRepo(t)
	sh(t, dir, "mkdir -p .orket/runs && printf '{}' > .orket/runs/r.json")
	r := open(t, dir)
	tx := begin(t, r, "paths")
	defer tx.End()
	named := func(s *Snapshot) []string {
		seen := map[string]bool{}
		s.Paths(func(p string) {
			if s.Pre.Files[p] != nil {
				seen[p] = true
			}
		})
		var out []string
		for p := range seen {
			out = append(out, p)
		}
		sort.Strings(out)
		return out
	}
	var want []string
	for p := range tx.Snapshot().Pre.Files {
		want = append(want, p)
	}
	sort.Strings(want)
	if d := cmp.Diff(want, named(tx.Snapshot())); d != "" {
		t.Errorf("Paths (-Pre.Files +named):\n%s", d)
	}
	var extra []string
	tx.Snapshot().Paths(func(p string) {
		if tx.Snapshot().Pre.Files[p] == nil {
			extra = append(extra, p)
		}
	})
	if d := cmp.Diff([]string{"docs/old.md"}, extra); d != "" {
		t.Errorf("paths named that are not in the tree (-want +got):\n%s", d)
	}
	loaded, err := r.loadSnapshot(tx.Snapshot().Ref)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, named(loaded)); d != "" {
		t.Errorf("Paths of the snapshot read back (-Pre.Files +named):\n%s", d)
	}
}
