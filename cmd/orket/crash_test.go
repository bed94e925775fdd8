package main

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/internal/fingerprint"
	"github.com/orket/orket/internal/fsmonitor"
	"github.com/orket/orket/internal/fsmonitor/watchmantest"
	"github.com/orket/orket/txn"
	"github.com/orket/orket/txn/txntest"
)

// TestCrashPoints kills orket (SIGKILL, from inside, at a point the test
// names) at every phase of the journal and at random points inside the
// snapshot and the revert, while subprocesses of the edit and the steps
// are still running and writing, and proves after orket recover that the
// tree is exactly as it was before the run, and stays so. Every crash
// runs with the inotify journal and with a real Watchman as git's
// fsmonitor hook, asked as on a large repository (see eagerEnv).
//
// That matrix is make test-long's. Under -short (make test) each point of
// the journal is killed once, the two watchers taking turns, with one
// random point inside the snapshot and one inside the revert.
func TestCrashPoints(t *testing.T) {
	t.Cleanup(watchmantest.Done)
	for i, watch := range []string{"inotify", "fsmonitor"} {
		turn := -1 // every point
		if testing.Short() {
			turn = i
		}
		t.Run(watch, func(t *testing.T) { crashPoints(t, watch == "fsmonitor", turn) })
	}
}

// eagerEnv, in the environment of this test binary run as orket, makes
// its transactions go through the fsmonitor hook however small the tree
// (fsmonitor.SetEager). The shipped binary never reads it.
const eagerEnv = "ORKET_TEST_FSMONITOR_EAGER"

func init() {
	if os.Getenv(eagerEnv) != "" {
		fsmonitor.SetEager(true)
	}
}

// crashPoints kills runs at every point, or (turn 0 or 1) at the journal's
// points of that turn and one random point.
func crashPoints(t *testing.T, watchman bool, turn int) {
	if watchman {
		watchmantest.Need(t)
	}
	bin := orketBinary(t)
	rnd := rand.New(rand.NewSource(20261123))
	type crash struct {
		at   string
		args []string // the run's arguments after orket run --yes
	}
	// A writer the edit leaves behind, that would keep changing the tree
	// if nothing stopped it.
	const edit = `echo changed > pkg/a.txt; rm pkg/b.txt; mkdir -p pkg/new; echo n > pkg/new/n.txt; chmod +x pkg/c.txt; git add -A; ` +
		`( trap '' TERM HUP INT; setsid sh -c 'while :; do echo x >> pkg/a.txt; echo y > pkg/stray.txt; sleep 0.05; done' >/dev/null 2>&1 </dev/null & )`
	fail := []string{"--scope", "pkg", "--profile", "fail", "--", "sh", "-c", edit}
	pass := []string{"--scope", "pkg", "--commit", "kept", "--", "sh", "-c", edit}
	worktree := []string{"--scope", "pkg", "--profile", "fail", "--worktree"}
	crashes := []crash{
		{"phase:snapshot", fail}, {"snapshot-published", fail}, {"phase:edit", fail}, {"phase:verify", fail},
		{"phase:revert", fail}, {"change-saved", fail}, {"revert-midway", fail}, {"change-published", fail},
		{"phase:commit", pass}, {"phase:takeout", worktree}, {"taken-out", worktree},
	}
	for i := 0; i < 6; i++ {
		crashes = append(crashes, crash{fmt.Sprintf("object-written#%d", 1+rnd.Intn(12)), fail})
		crashes = append(crashes, crash{fmt.Sprintf("file-restored#%d", 1+rnd.Intn(3)), fail})
	}
	if turn >= 0 {
		var slice []crash
		for i, c := range crashes {
			if i < 11 && i%2 == turn || i == 11+turn {
				slice = append(slice, c)
			}
		}
		crashes = slice
	}
	for _, c := range crashes {
		t.Run(strings.ReplaceAll(c.at, "#", "-"), func(t *testing.T) {
			dir := crashRepo(t)
			env := os.Environ()
			if watchman {
				primeWatchman(t, dir)
				env = append(env, eagerEnv+"=1")
			}
			if c.args[len(c.args)-1] == "--worktree" {
				shell(t, dir, `echo uncommitted > pkg/a.txt; echo new > pkg/w.txt`)
			}
			before, err := fingerprint.Of(dir)
			if err != nil {
				t.Fatal(err)
			}
			run := exec.Command(bin, append([]string{"run", "--yes"}, c.args...)...)
			run.Dir = dir
			run.Env = append(env, "ORKET_TEST_CRASH_AT="+c.at)
			out, err := run.CombinedOutput()
			if run.ProcessState == nil || run.ProcessState.String() != "signal: killed" {
				t.Fatalf("the run was not killed at %s: %v\n%s", c.at, err, out)
			}
			rec := exec.Command(bin, "recover")
			rec.Dir = dir
			rec.Env = env
			if out, err := rec.CombinedOutput(); err != nil {
				t.Fatalf("orket recover: %v\n%s", err, out)
			}
			time.Sleep(300 * time.Millisecond) // anything left running would write now
			after, err := fingerprint.Of(dir)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("after kill at %s and recover (-before +after):\n%s", c.at, diff)
			}
			if _, err := os.Stat(filepath.Join(dir, ".git", "orket", "txn.json")); err == nil {
				t.Error("the journal is left after recover")
			}
		})
	}
}

// orketBinary returns a path that runs this test binary as orket (see
// TestMain), with its crash hook.
func orketBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "orket")
	if err := os.Symlink(exe, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// crashRepo makes a repository with a dirty tree whose verify profile
// "fail" fails after a step that starts a process of its own.
func crashRepo(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[init]\n\tdefaultBranch = main\n"), 0o644)
	for k, v := range map[string]string{"HOME": home, "GIT_CONFIG_NOSYSTEM": "1", "XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com"} {
		t.Setenv(k, v)
	}
	dir := t.TempDir()
	shell(t, dir, `
git init -q
mkdir pkg empty
printf 'a\n' > pkg/a.txt; printf 'b\n' > pkg/b.txt; printf 'c\n' > pkg/c.txt
cat > orket.yaml <<'Y'
verify:
  default: pass
  profiles:
    pass: [{name: ok, run: "true"}]
    fail:
      - {name: busy, run: "( setsid sh -c 'sleep 0.2; echo z > pkg/late.txt' >/dev/null 2>&1 </dev/null & ); true"}
      - {name: no, run: "false"}
Y
git add -A
git commit -q -m init
printf 'staged\n' >> pkg/c.txt; git add pkg/c.txt
printf 'untracked\n' > pkg/u.txt
`)
	return dir
}

// primeWatchman makes git's Watchman hook the core.fsmonitor of the
// repository at dir and gives it a scan cache for that hook, so that the
// next snapshot takes the cache and asks Watchman what changed, as every
// run does on a large repository with a watcher: the first snapshot
// scans whole, the second must ask. The objects those snapshots wrote
// are pruned, so that the run writes as many as without the watcher
// (and its object-written crash points are reached).
func primeWatchman(t *testing.T, dir string) {
	t.Helper()
	watchmantest.Use(t, dir)
	fsmonitor.SetEager(true)
	defer fsmonitor.SetEager(false)
	r, err := txn.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	txntest.PrimeFSMonitor(t, r)
	shell(t, dir, `git prune --expire=now`)
}

func shell(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-ec", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}
