package txn

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestPackIndex: orket's reading of pack indexes agrees with git about
// every object of a packed repository, and about objects it does not hold.
func TestPackIndex(t *testing.T) {
	dir := dirtyRepo(t)
	sh(t, dir, `git tag -a -m ann v-ann; git gc -q`)
	out, err := exec.Command("git", "-C", dir, "rev-list", "--objects", "--all").Output()
	if err != nil {
		t.Fatal(err)
	}
	r := open(t, dir)
	w := newObjectWriter(r)
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		id := plumbing.NewHash(strings.Fields(line)[0])
		if !w.inPacks(id) {
			t.Errorf("%s is packed, orket does not find it", id)
		}
		n++
	}
	if !w.packsReadable || len(w.packIdx) == 0 {
		t.Fatalf("no readable pack index: %v", w.packIdx)
	}
	for _, s := range []string{"0000000000000000000000000000000000000001", "ffffffffffffffffffffffffffffffffffffffff", blobHash([]byte("nowhere")).String()} {
		if w.inPacks(plumbing.NewHash(s)) {
			t.Errorf("%s found, but git has no such object", s)
		}
	}
	if n < 10 {
		t.Errorf("only %d objects", n)
	}
	// What refs name is remembered: commits and annotated tags.
	gs, err := r.readGitState()
	if err != nil {
		t.Fatal(err)
	}
	commits, tags := w.pins(gs)
	again, tags2 := newObjectWriter(r).pins(gs)
	if len(commits) == 0 || len(tags) != 1 || len(again) != len(commits) || len(tags2) != 1 {
		t.Errorf("pins: %d commits, %d tags; again %d, %d", len(commits), len(tags), len(again), len(tags2))
	}
	for id, b := range tags {
		if string(tags2[id]) != string(b) {
			t.Errorf("tag %s: cached bytes differ", id)
		}
	}
}
