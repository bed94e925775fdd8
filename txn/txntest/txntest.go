// Package txntest helps the tests of packages built on txn.
package txntest

import (
	"fmt"
	"testing"
	"time"

	"github.com/orket/orket/txn"
)

// PrimeFSMonitor readies r, whose core.fsmonitor is set, for the
// snapshots of a test: the first snapshot scans whole and saves the scan
// cache with the hook's token, the second must take the cache and ask the
// hook what changed, as every run does on a large repository with a
// watcher. Both are ended. It fails t if a snapshot looks otherwise.
func PrimeFSMonitor(t testing.TB, r *txn.Repo) {
	t.Helper()
	for i, want := range []string{"scan", "fsmonitor"} {
		tx, err := r.Begin(txn.Start{RunID: fmt.Sprintf("prime-%d", i), Command: "test", Time: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		if got := tx.Snapshot().Scan; got.How != want {
			t.Fatalf("snapshot %d: %s (%s), want %s", i, got.How, got.Why, want)
		}
		if err := tx.End(); err != nil {
			t.Fatal(err)
		}
	}
}
