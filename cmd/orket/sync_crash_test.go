package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/internal/fsroot"
)

// memoryRecords is a clone's shared memory as sets: each log's lines,
// sorted (a sync may write them in another order), and the agent memory.
func memoryRecords(t *testing.T, dir string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	files, _ := filepath.Glob(filepath.Join(dir, ".orket", "memory", "*"))
	for _, f := range files {
		// A kill between an atomic write's temporary file and its rename
		// leaves the file (fsroot.TempPrefix): no record, read by nothing,
		// swept by a later sync once a minute old (store.SweepTemps).
		if strings.HasSuffix(f, ".lock") || strings.HasSuffix(f, ".idx") || strings.HasSuffix(f, ".meta") ||
			strings.HasSuffix(f, ".pruned") || strings.HasPrefix(filepath.Base(f), fsroot.TempPrefix) {
			continue
		}
		fi, err := os.Stat(f)
		if err != nil || fi.IsDir() {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		sort.Strings(lines)
		out[filepath.Base(f)] = lines
	}
	return out
}

// TestSyncPullSurvivesKills kills orket sync --pull with SIGKILL at each
// step of its write-back (the memory's objects made durable, the agent
// memory, each log, the guardrails, the memory ref) and
// proves that the next sync --pull ends with exactly the memory an
// uninterrupted one gives: no record lost, none twice, nothing torn.
//
// Under -short (make test) it kills at three of the points.
func TestSyncPullSurvivesKills(t *testing.T) {
	bin := orketBinary(t)
	// (The journal of an in-place write, which needs shards of earlier
	// days, is memsync's TestInterruptedWriteBack.)
	points := []string{"sync:objects-synced", "sync:memory-written", "sync:log-written",
		"sync:log-written#2", "sync:guardrails-written", "sync:ref-updated"}
	if testing.Short() {
		points = []string{"sync:objects-synced", "sync:log-written", "sync:ref-updated"}
	}
	work := t.TempDir()
	run := func(dir string, env []string, args ...string) *exec.Cmd {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		return cmd
	}
	must := func(cmd *exec.Cmd) {
		t.Helper()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
		}
	}
	shell(t, work, `
git init -q --bare remote.git
git clone -q remote.git a 2>/dev/null
cd a
mkdir src
printf 'fine\n' > src/a.txt
cat > orket.yaml <<'Y'
verify:
  default: all
  profiles:
    all: [{name: check, run: "! grep -q bad src/a.txt"}]
Y
git add -A
git -c user.email=a@example.com -c user.name=A commit -q -m init
git push -q origin HEAD:main 2>/dev/null
cd ..
git clone -q -b main remote.git b 2>/dev/null
`)
	a, b := filepath.Join(work, "a"), filepath.Join(work, "b")
	fail := func(dir string, n int) {
		cmd := run(dir, nil, "run", "--yes", "--agent", "claude", "--task", fmt.Sprintf("T%d", n), "--scope", "src", "--",
			"sh", "-c", fmt.Sprintf("echo bad%d > src/a.txt", n))
		cmd.CombinedOutput() // it fails its check, as meant
	}
	// Both clones learn and share; then each learns more, a shares it,
	// and b's next pull appends to logs it synced before (in place,
	// under the journal) besides merging its own new records.
	fail(a, 1)
	fail(a, 2)
	must(run(a, nil, "sync"))
	fail(b, 3)
	must(run(b, nil, "sync"))
	fail(a, 4)
	fail(b, 5)
	must(run(a, nil, "sync"))
	// What an uninterrupted pull gives.
	clean := filepath.Join(work, "clean")
	shell(t, work, "cp -a b clean")
	began := time.Now()
	must(run(clean, nil, "sync", "--pull"))
	took := time.Since(began)
	want := memoryRecords(t, clean)
	if n := len(want["failure_lessons.jsonl"]); n != 5 {
		t.Fatalf("the clean pull holds %d lessons, want 5", n)
	}
	for _, at := range points {
		t.Run(at, func(t *testing.T) {
			dir := filepath.Join(work, "kill-"+strings.NewReplacer(":", "-", "#", "-").Replace(at))
			shell(t, work, "cp -a b "+filepath.Base(dir))
			kill := run(dir, []string{"ORKET_TEST_CRASH_AT=" + at}, "sync", "--pull")
			out, _ := kill.CombinedOutput()
			if kill.ProcessState.String() != "signal: killed" {
				t.Fatalf("orket sync --pull was not killed at %s: %s\n%s", at, kill.ProcessState, out)
			}
			must(run(dir, nil, "sync", "--pull"))
			if diff := cmp.Diff(want, memoryRecords(t, dir)); diff != "" {
				t.Errorf("after a kill at %s and another pull, the memory differs from an uninterrupted pull (-want +got):\n%s", at, diff)
			}
		})
	}
	// And at random moments of a pull: anywhere between its start and
	// how long an uninterrupted one took.
	kills := 24
	if testing.Short() {
		kills = 4
	}
	rnd := seeded(t)
	for i := range kills {
		delay := time.Duration(rnd.Int64N(int64(took)))
		t.Run(fmt.Sprintf("random-%d-%s", i, delay.Round(time.Millisecond)), func(t *testing.T) {
			dir := filepath.Join(work, fmt.Sprintf("random-%d", i))
			shell(t, work, "cp -a b "+filepath.Base(dir))
			if out, err := killAfter(run(dir, nil, "sync", "--pull"), delay); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			must(run(dir, nil, "sync", "--pull"))
			if diff := cmp.Diff(want, memoryRecords(t, dir)); diff != "" {
				t.Errorf("after a kill %s into the pull and another pull, the memory differs from an uninterrupted pull (-want +got):\n%s", delay, diff)
			}
		})
	}
}

// seeded is a random source for a test's random kill points, seeded from
// ORKET_TEST_SEED when set (to replay a failure), else from the clock;
// the seed is logged.
func seeded(t *testing.T) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("ORKET_TEST_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("ORKET_TEST_SEED=%q: %v", s, err)
		}
		seed = n
	}
	t.Logf("random kill points: ORKET_TEST_SEED=%d replays them", seed)
	return rand.New(rand.NewPCG(seed, seed))
}

// killAfter starts cmd, sends it SIGKILL after delay unless it ended
// first, and waits for it; its error is only a failure to start, or an
// end other than success or that kill.
func killAfter(cmd *exec.Cmd, delay time.Duration) ([]byte, error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	timer := time.AfterFunc(delay, func() { cmd.Process.Kill() })
	err := cmd.Wait()
	timer.Stop()
	if err != nil && cmd.ProcessState.String() != "signal: killed" {
		return out.Bytes(), fmt.Errorf("%s: %v", strings.Join(cmd.Args, " "), err)
	}
	return out.Bytes(), nil
}

// TestResolveSurvivesKills kills orket task resolve just before and just
// after its one line: the task is escalated or resolved, never a torn
// state, and resolving again finishes the job or says it is done.
func TestResolveSurvivesKills(t *testing.T) {
	bin := orketBinary(t)
	for _, tc := range []struct{ at, after string }{
		{"resolve:before-event", "ESCALATED"},
		{"resolve:after-event", "open"},
	} {
		t.Run(tc.at, func(t *testing.T) {
			dir := crashRepo(t)
			orket := func(env []string, args ...string) ([]byte, error) {
				cmd := exec.Command(bin, args...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), env...)
				return cmd.CombinedOutput()
			}
			if out, err := orket(nil, "escalate", "T", "--reason", "stuck"); err != nil {
				t.Fatalf("escalate: %v\n%s", err, out)
			}
			cmd := exec.Command(bin, "task", "resolve", "T", "--reason", "fixed")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "ORKET_TEST_CRASH_AT="+tc.at)
			out, _ := cmd.CombinedOutput()
			if cmd.ProcessState.String() != "signal: killed" {
				t.Fatalf("orket task resolve was not killed at %s: %s\n%s", tc.at, cmd.ProcessState, out)
			}
			list, err := orket(nil, "task", "list")
			if err != nil || !strings.Contains(string(list), tc.after) || strings.Contains(string(list), "warning") {
				t.Fatalf("after a kill at %s: %v\n%s", tc.at, err, list)
			}
			out, err = orket(nil, "task", "resolve", "T", "--reason", "fixed")
			switch {
			case tc.after == "ESCALATED" && err != nil:
				t.Errorf("resolving again: %v\n%s", err, out)
			case tc.after == "open" && !strings.Contains(string(out), "not escalated"):
				t.Errorf("resolving a resolved task: %s", out)
			}
			if list, _ := orket(nil, "task", "list"); !strings.Contains(string(list), "open") {
				t.Errorf("the task is not open after resolving:\n%s", list)
			}
		})
	}
	// And at random moments of a resolve.
	rnd := seeded(t)
	var took time.Duration
	for i := range 6 {
		dir := crashRepo(t)
		orket := func(args ...string) *exec.Cmd {
			cmd := exec.Command(bin, args...)
			cmd.Dir = dir
			return cmd
		}
		if out, err := orket("escalate", "T", "--reason", "stuck").CombinedOutput(); err != nil {
			t.Fatalf("escalate: %v\n%s", err, out)
		}
		if i == 0 { // the first, uninterrupted, times one
			began := time.Now()
			if out, err := orket("task", "resolve", "T", "--reason", "fixed").CombinedOutput(); err != nil {
				t.Fatalf("resolve: %v\n%s", err, out)
			}
			took = time.Since(began)
			continue
		}
		delay := time.Duration(rnd.Int64N(int64(took)))
		if out, err := killAfter(orket("task", "resolve", "T", "--reason", "fixed"), delay); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		list, err := orket("task", "list").CombinedOutput()
		if err != nil || strings.Contains(string(list), "warning") || !strings.Contains(string(list), "ESCALATED") && !strings.Contains(string(list), "open") {
			t.Fatalf("after a kill %s into a resolve: %v\n%s", delay, err, list)
		}
		out, err := orket("task", "resolve", "T", "--reason", "fixed").CombinedOutput()
		if err != nil && !strings.Contains(string(out), "not escalated") {
			t.Errorf("resolving again after a kill %s in: %v\n%s", delay, err, out)
		}
		if list, _ := orket("task", "list").CombinedOutput(); !strings.Contains(string(list), "open") {
			t.Errorf("the task is not open after a kill %s in and resolving again:\n%s", delay, list)
		}
	}
}
