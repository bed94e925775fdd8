package txn

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/internal/fsmonitor/watchmantest"
)

// The tests that use Watchman run a private one (see watchmantest), so
// that the machine's own Watchman is never touched and a test may shut
// this one down.

// TestFSMonitorTrust: with Watchman configured as git's fsmonitor hook, a
// snapshot and a measurement look only where Watchman saw changes, and
// orket trusts it only as git does: when Watchman restarts or loses its
// state while no one asks, or during a transaction, the next look is a
// whole scan, and what changed meanwhile is seen.
func TestFSMonitorTrust(t *testing.T) {
	watchmantest.Need(t)
	saved := testFSMonitor
	testFSMonitor = true
	defer func() { testFSMonitor = saved }()
	dir := dirtyRepo(t)
	r := open(t, dir)
	whole := func(t *testing.T) *Tree {
		t.Helper()
		r2 := open(t, dir)
		r2.Options.FSMonitor = FSMonitorOff
		sc, err := r2.newScanner()
		if err != nil {
			t.Fatal(err)
		}
		gs, err := r2.readGitState()
		if err != nil {
			t.Fatal(err)
		}
		ii, err := r2.indexOf(gs)
		if err != nil {
			t.Fatal(err)
		}
		sc.idx = []*indexInfo{ii}
		tr, err := sc.scan()
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	_ = whole
	// sameTree compares a snapshot with one taken without the hook on the
	// same tree (after the revert).
	sameTree := func(t *testing.T, got string) {
		t.Helper()
		r2 := open(t, dir)
		r2.Options.FSMonitor, r2.noCache = FSMonitorOff, true
		plain := begin(t, r2, "plain")
		want := snapshotState(t, r2, plain.Snapshot())
		if err := plain.End(); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("snapshot (-without the hook +with it):\n%s", d)
		}
	}
	step := 0
	// run is a transaction: its snapshot and its measurement must look
	// as wanted; hook: the measurement asks the hook (the transaction's
	// inotify journal is closed first), not inotify.
	run := func(t *testing.T, wantSnap, wantMeasure string, hook bool, during func()) {
		t.Helper()
		step++
		before := fp(t, dir)
		tx := begin(t, r, fmt.Sprintf("fsm-%d", step))
		if got := tx.Snapshot().Scan.How; got != wantSnap && wantSnap != "" {
			t.Errorf("snapshot: %s (%s), want %s", got, tx.Snapshot().Scan.Why, wantSnap)
		}
		state := snapshotState(t, r, tx.Snapshot())
		if hook {
			tx.Snapshot().Close()
		}
		if during != nil {
			during()
		}
		sh(t, dir, `printf 'edit\n' >> pkg/api/x.go; printf 'n\n' > pkg/new.txt; rm docs/logo.bin`)
		ch, err := tx.Measure()
		if err != nil {
			t.Fatal(err)
		}
		if got := ch.Scan.How; got != wantMeasure {
			t.Errorf("measure: %s (%s), want %s", got, ch.Scan.Why, wantMeasure)
		}
		if d := cmp.Diff([]string{"docs/logo.bin", "pkg/api/x.go", "pkg/new.txt"}, ch.Paths); d != "" {
			t.Errorf("touch set (-want +got):\n%s", d)
		}
		if _, err := tx.Revert(); err != nil {
			t.Fatal(err)
		}
		if err := tx.End(); err != nil {
			t.Fatal(err)
		}
		if after := fp(t, dir); after != before {
			t.Errorf("after revert (-before +after):\n%s", cmp.Diff(before, after))
		}
		sameTree(t, state)
	}
	t.Run("first-run-scans", func(t *testing.T) { run(t, "scan", "inotify", false, nil) })
	t.Run("then-only-changes", func(t *testing.T) {
		run(t, "fsmonitor", "inotify", false, nil)
		run(t, "fsmonitor", "fsmonitor", true, nil)
	})
	t.Run("changes-between-runs", func(t *testing.T) {
		sh(t, dir, `printf 'between\n' >> notes.txt; mkdir -p fresh/deep; printf f > fresh/deep/f.txt; rm run.sh`)
		run(t, "fsmonitor", "fsmonitor", true, nil)
	})
	t.Run("index-changes-between-runs", func(t *testing.T) {
		sh(t, dir, `git add notes.txt fresh; git commit -q -m more; git rm -q --cached pkg/api/server.go; git add -f x.log; printf s > staged.txt; git add staged.txt; rm staged.txt`)
		run(t, "fsmonitor", "inotify", false, nil)
		sh(t, dir, `git reset -q HEAD pkg/api/server.go x.log staged.txt; git add -A; git reset -q --soft HEAD~1`)
		run(t, "fsmonitor", "inotify", false, nil)
		// A file tracked inside an ignored directory the cache never
		// entered: a whole scan.
		sh(t, dir, `git add -f build/out.bin`)
		run(t, "scan", "inotify", false, nil)
		sh(t, dir, `git rm -q --cached build/out.bin`)
		run(t, "fsmonitor", "inotify", false, nil)
	})
	t.Run("verify-only-scan", func(t *testing.T) {
		// What a verify-only run sees (ChangedSince), through the hook
		// and the cache, is what a whole scan sees.
		run(t, "fsmonitor", "inotify", false, nil)
		sh(t, dir, `printf 'v\n' >> pkg/api/server.go; printf n > verify-new.txt; rm docs/staged-new.md`)
		defer sh(t, dir, `git checkout -q -- pkg/api/server.go docs/staged-new.md; git checkout-index -f docs/staged-new.md; rm -f verify-new.txt`)
		got, _, err := r.ChangedSince("")
		if err != nil {
			t.Fatal(err)
		}
		r2 := open(t, dir)
		r2.Options.FSMonitor = FSMonitorOff
		want, _, err := r2.ChangedSince("")
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("changed since HEAD (-whole scan +with the hook):\n%s", d)
		}
	})
	t.Run("restart-between-runs", func(t *testing.T) {
		watchmantest.Stop()
		// What changes while nothing watches must still be seen.
		sh(t, dir, `printf 'unwatched\n' >> notes.txt; printf u > unwatched.txt; rm -r fresh`)
		run(t, "scan", "inotify", false, nil)
	})
	t.Run("lost-state-between-runs", func(t *testing.T) {
		run(t, "fsmonitor", "inotify", false, nil) // a cache again
		watchmantest.Command("watch-del", dir).Run()
		sh(t, dir, `printf 'lost\n' >> notes.txt; rm unwatched.txt`)
		run(t, "scan", "inotify", false, nil)
	})
	t.Run("restart-during-transaction", func(t *testing.T) {
		restart := func() {
			watchmantest.Stop()
			time.Sleep(50 * time.Millisecond)
		}
		run(t, "fsmonitor", "inotify", false, restart) // the journal does not need Watchman
		run(t, "scan", "scan", true, restart)          // asking it, the answer is "everything"
	})
	t.Run("lost-state-during-transaction", func(t *testing.T) {
		lose := func() { watchmantest.Command("watch-del", dir).Run() }
		run(t, "scan", "scan", true, lose)
		// The hook watched again during that measurement: the token the
		// cache holds is from before, and Watchman's history of the
		// tree starts after it.
		run(t, "scan", "fsmonitor", true, nil)
		run(t, "fsmonitor", "fsmonitor", true, nil)
	})
	t.Run("forged-cache", func(t *testing.T) {
		tx := begin(t, r, "forge")
		if tx.Snapshot().Scan.How != "fsmonitor" {
			t.Errorf("snapshot: %+v, want fsmonitor", tx.Snapshot().Scan)
		}
		os.WriteFile(r.cachePath(), []byte("forged"), 0o644)
		ch, err := tx.Measure()
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]string{".git/orket/scan-cache"}, ch.Guarded); d != "" {
			t.Errorf("guarded writes (-want +got):\n%s", d)
		}
		if _, err := tx.Revert(); err != nil {
			t.Fatal(err)
		}
		tx.End()
		if _, err := os.Stat(r.cachePath()); err == nil {
			t.Error("the revert kept a scan cache orket did not write")
		}
	})
}

// snapshotState describes a snapshot: every file of its tree with its
// stat and blob id, its directories, and the manifest it committed.
func snapshotState(t *testing.T, r *Repo, s *Snapshot) string {
	t.Helper()
	var b strings.Builder
	for _, p := range sortedKeys(s.Pre.Files) {
		f := s.Pre.Files[p]
		fmt.Fprintf(&b, "file %s %o %o %d %s\n", p, f.Mode, f.Perm, f.Size, f.OID)
	}
	for _, d := range sortedKeys(s.Pre.Dirs) {
		fmt.Fprintf(&b, "dir %s empty=%v\n", d, s.Pre.Empty[d])
	}
	for _, p := range sortedKeys(s.Pre.Ignored) {
		fmt.Fprintf(&b, "ignored %s\n", p)
	}
	fmt.Fprintf(&b, "dirty %v\n", s.Dirty())
	c, err := object.GetCommit(r.Git.Storer, s.Commit)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := c.Tree()
	if err != nil {
		t.Fatal(err)
	}
	f, err := tree.File("manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	mj, err := f.Contents()
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal([]byte(mj), &m); err != nil {
		t.Fatal(err)
	}
	for _, mf := range m.Files {
		fmt.Fprintf(&b, "stored %s %s\n", mf.Path, mf.OID)
	}
	fmt.Fprintf(&b, "deleted %v\nempty %v\nperms %v\n", m.Deleted, m.EmptyDirs, m.Perms)
	return b.String()
}
