package txn

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRevertObjectsMissing: when something outside orket takes from the
// object store the content a revert must put back (the repository deleted
// while the run was in progress, as rm -rf of the work tree does), the
// revert says so (ErrObjectsMissing, naming the files) and writes nothing:
// it does not take out what the edit made and leave the rest, and the
// snapshot stays for a person to decide.
func TestRevertObjectsMissing(t *testing.T) {
	withJournal(t, false, func(t *testing.T, _ func(int) bool) {
		dir := dirtyRepo(t)
		r := open(t, dir)
		tx := begin(t, r, "missing")
		defer tx.Close()
		sh(t, dir, `printf 'edited\n' >> pkg/api/x.go; printf 'made\n' > top.txt; rm notes.txt`)
		// The committed content of x.go, a loose object, goes; notes.txt's
		// (untracked, kept by the snapshot) stays.
		sh(t, dir, `id=$(git rev-parse HEAD:pkg/api/x.go); rm -f .git/objects/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-)
! git cat-file -e $id 2>/dev/null`)
		before := fp(t, dir)
		_, err := tx.Revert()
		var me *MissingObjectsError
		if !errors.Is(err, ErrObjectsMissing) || !errors.As(err, &me) {
			t.Errorf("Revert = %v, want a *MissingObjectsError", err)
		} else if diff := cmp.Diff([]string{"pkg/api/x.go"}, me.Paths); diff != "" {
			t.Errorf("missing (-want +got):\n%s", diff)
		}
		if got := fp(t, dir); got != before {
			t.Errorf("the revert wrote to the tree (-before +after):\n%s", cmp.Diff(before, got))
		}
		if _, err := os.Stat(filepath.Join(dir, "top.txt")); err != nil {
			t.Errorf("the edit's new file was taken out: %v", err)
		}
		if j, err := r.Unfinished(); err != nil || j == nil || j.Ref != tx.Ref() {
			t.Errorf("Unfinished = %v, %v; want the transaction's journal, kept", j, err)
		}
		if _, err := r.resolveRef(tx.Ref()); err != nil {
			t.Errorf("the snapshot ref: %v", err)
		}
	})
}

// TestSnapshotFreshensReusedObjects: a snapshot that finds a file's
// content already in the object store (a loose object an earlier,
// dropped snapshot wrote weeks ago, unreachable since) uses it rather than
// writing it again, and freshens it, as git does with an object it would
// have written. A git gc running meanwhile (git gc --auto after a commit)
// judged reachability before the snapshot wrote anything, and its prune
// deletes, as it goes, the unreachable loose objects older than
// gc.pruneExpire: without a fresh time it would take the content the
// revert needs.
func TestSnapshotFreshensReusedObjects(t *testing.T) {
	withJournal(t, false, func(t *testing.T, _ func(int) bool) {
		dir := dirtyRepo(t)
		sh(t, dir, `printf 'kept by a snapshot long ago\n' > old.txt
id=$(git hash-object -w old.txt)
touch -d '30 days ago' .git/objects/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-)
find .git/objects -type f | sort > .git/objects-before`)
		before := fp(t, dir)
		r := open(t, dir)
		tx := begin(t, r, "fresh")
		defer tx.Close()
		// The gc's prune as it sees the store: without the snapshot's ref
		// and the objects it wrote (they did not exist when the gc began).
		// Then the edit.
		sh(t, dir, `mkdir .git/hidden
mv .git/refs/orket/snapshots/fresh .git/hidden/ref
find .git/objects -type f | sort | comm -13 .git/objects-before - > .git/hidden/list
while read f; do mkdir -p .git/hidden/$(dirname $f); mv $f .git/hidden/$f; done < .git/hidden/list
git prune --expire=2.weeks.ago
while read f; do mkdir -p $(dirname $f); mv .git/hidden/$f $f; done < .git/hidden/list
mv .git/hidden/ref .git/refs/orket/snapshots/fresh
rm -r .git/hidden .git/objects-before
rm old.txt`)
		if _, err := tx.Revert(); err != nil {
			t.Fatal(err)
		}
		if err := tx.End(); err != nil {
			t.Fatal(err)
		}
		if got := fp(t, dir); got != before {
			t.Errorf("after revert (-before +after):\n%s", cmp.Diff(before, got))
		}
	})
}
