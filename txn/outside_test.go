package txn

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestOutside: a file named in Start.Outside (orket's own log in the
// tree), tracked or not, is neither measured nor reverted, by the
// transaction nor by a recovery from its ref; the other paths are.
func TestOutside(t *testing.T) {
	withJournal(t, false, func(t *testing.T, row func(int) bool) {
		for i, recover := range []bool{false, true} {
			if !row(i) {
				continue
			}
			name := map[bool]string{false: "revert", true: "recover"}[recover]
			t.Run(name, func(t *testing.T) {
				dir := dirtyRepo(t)
				sh(t, dir, "echo first > run.out; echo tracked > tracked.out; git add tracked.out; git commit -qm log")
				r := open(t, dir)
				tx, err := r.Begin(Start{RunID: "outside-" + name, Command: "test", Time: time.Now(), Outside: []string{"run.out", "tracked.out"}})
				if err != nil {
					t.Fatal(err)
				}
				sh(t, dir, "echo second >> run.out; echo more >> tracked.out; echo edit > edited.txt")
				ch, err := tx.Measure()
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff([]string{"edited.txt"}, ch.Paths); diff != "" {
					t.Errorf("touch set (-want +got):\n%s", diff)
				}
				if recover {
					tx = resume(t, dir)
				}
				res, err := tx.Revert()
				if err != nil {
					t.Fatal(err)
				}
				if err := tx.End(); err != nil {
					t.Fatal(err)
				}
				if !res.Verified {
					t.Error("revert not verified")
				}
				for f, want := range map[string]string{"run.out": "first\nsecond\n", "tracked.out": "tracked\nmore\n"} {
					if b, _ := os.ReadFile(filepath.Join(dir, f)); string(b) != want {
						t.Errorf("%s = %q, want %q (left as orket's output made it)", f, b, want)
					}
				}
				if _, err := os.Stat(filepath.Join(dir, "edited.txt")); !os.IsNotExist(err) {
					t.Errorf("edited.txt was not reverted: %v", err)
				}
			})
		}
	})
}
