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
