package txn

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestScanCacheTrust: a snapshot takes a file's blob id from the scan
// cache instead of reading the file only when the stat is the one the
// cache recorded and the file was already older than the racy window when
// the cache's scan began; otherwise it reads the file.
func TestScanCacheTrust(t *testing.T) {
	// Not what notes.txt holds, but a blob the store has (pkg/api/x.go's),
	// so that nothing reads the file to store it.
	forged := blobHash([]byte("package api\n\nfunc X() {}\n"))
	for _, tc := range []struct {
		name    string
		cutoff  func(st *unix.Stat_t) time.Time // the cache's scan start
		size    int64                           // added to the recorded size
		trusted bool
	}{
		{"same-stat-old-file", func(*unix.Stat_t) time.Time { return time.Now() }, 0, true},
		{"racy", func(st *unix.Stat_t) time.Time { return time.Unix(st.Ctim.Sec, st.Ctim.Nsec).Add(racyWindow / 2) }, 0, false},
		{"other-size", func(*unix.Stat_t) time.Time { return time.Now() }, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := dirtyRepo(t)
			time.Sleep(2 * racyWindow)
			r := open(t, dir)
			var st unix.Stat_t
			if err := unix.Lstat(filepath.Join(dir, "notes.txt"), &st); err != nil {
				t.Fatal(err)
			}
			f := &File{}
			statFile(&st, f)
			f.Size += tc.size
			f.OID = forged
			tree := newTree(1, 0)
			tree.Files["notes.txt"], tree.untracked["notes.txt"] = f, true
			if err := os.MkdirAll(filepath.Join(dir, ".git", "orket"), 0o755); err != nil {
				t.Fatal(err)
			}
			if _, err := r.saveCache(&treeCache{start: tc.cutoff(&st).UnixNano(), tree: tree}); err != nil {
				t.Fatal(err)
			}
			tx := begin(t, r, "cache")
			defer tx.End()
			got := tx.Snapshot().Pre.Files["notes.txt"].OID
			real := blobHash([]byte("untracked\n"))
			want := real
			if tc.trusted {
				want = forged
			}
			if got != want {
				t.Errorf("notes.txt: %s, want %s (real %s, cached %s)", got, want, real, forged)
			}
		})
	}
}
