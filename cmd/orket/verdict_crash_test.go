package main

import (
	"bufio"
	"encoding/json"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestAttemptCountSurvivesKills kills the second of three failing attempts
// at a task with SIGKILL: at every point of the run from inside (before
// and after its evaluation is appended, and the transaction's phases),
// and from outside at random moments. After orket recover, the count
// orket reports is exactly the count of the evaluation log's whole lines,
// recounted here independently; and the third attempt adds exactly one:
// never torn, never double-counted, never an increment lost. (Under
// -short, make test's: the two points around the evaluation, two of the
// transaction's and two random kills from outside.)
func TestAttemptCountSurvivesKills(t *testing.T) {
	bin := orketBinary(t)
	fail := []string{"run", "--yes", "--task", "T", "--scope", "pkg", "--profile", "judged", "--", "sh", "-c", "echo changed > pkg/a.txt"}
	type kill struct {
		at    string        // a crash point inside orket, or
		after time.Duration // a SIGKILL from outside after this long
	}
	kills := []kill{{at: "judge:before-evaluation"}, {at: "judge:after-evaluation"}, {at: "phase:snapshot"}, {at: "phase:edit"},
		{at: "phase:verify"}, {at: "phase:revert"}, {at: "change-saved"}, {at: "change-published"}}
	rnd := rand.New(rand.NewSource(20261123))
	for i := 0; i < 8; i++ {
		kills = append(kills, kill{after: time.Duration(rnd.Intn(600)) * time.Millisecond})
	}
	if testing.Short() {
		kills = []kill{kills[0], kills[1], kills[4], kills[6], kills[8], kills[9]}
	}
	for _, k := range kills {
		name := k.at
		if name == "" {
			name = "outside-" + k.after.String()
		}
		t.Run(name, func(t *testing.T) {
			dir := crashRepo(t)
			// A failure that is the change's (without it the step
			// passes), so that every rejection counts.
			shell(t, dir, `cat >> orket.yaml <<'Y'
    judged:
      - {name: busy, run: "( setsid sh -c 'sleep 0.2; echo z > pkg/late.txt' >/dev/null 2>&1 </dev/null & ); true"}
      - {name: check, run: "! grep -q changed pkg/a.txt"}
Y`)
			run := func(env ...string) (*exec.Cmd, []byte) {
				cmd := exec.Command(bin, fail...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), env...)
				out, _ := cmd.CombinedOutput()
				return cmd, out
			}
			if cmd, out := run(); cmd.ProcessState.ExitCode() != 1 {
				t.Fatalf("attempt 1: exit %d\n%s", cmd.ProcessState.ExitCode(), out)
			}
			// Attempt 2, killed.
			cmd := exec.Command(bin, fail...)
			cmd.Dir = dir
			cmd.Env = os.Environ()
			if k.at != "" {
				cmd.Env = append(cmd.Env, "ORKET_TEST_CRASH_AT="+k.at)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if k.at == "" {
				time.Sleep(k.after)
				cmd.Process.Signal(syscall.SIGKILL)
			}
			cmd.Wait()
			if k.at != "" && cmd.ProcessState.String() != "signal: killed" {
				t.Fatalf("attempt 2 was not killed at %s: %s", k.at, cmd.ProcessState)
			}
			rec := exec.Command(bin, "recover")
			rec.Dir = dir
			if out, err := rec.CombinedOutput(); err != nil {
				t.Fatalf("orket recover: %v\n%s", err, out)
			}
			n := recount(t, dir)
			switch {
			case n < 1 || n > 2:
				t.Fatalf("after the kill the log counts %d rejections, want 1 or 2", n)
			case k.at == "judge:after-evaluation" && n != 2, k.at != "" && k.at != "judge:after-evaluation" && n != 1:
				t.Fatalf("killed at %s, the log counts %d rejections", k.at, n)
			}
			if got := reported(t, bin, dir); got != n {
				t.Fatalf("orket task list reports %d rejections, the log holds %d", got, n)
			}
			// Attempt 3 adds exactly one; the third rejection escalates.
			want := 1
			if n+1 >= 3 {
				want = 6
			}
			if cmd, out := run(); cmd.ProcessState.ExitCode() != want {
				t.Fatalf("attempt 3 after %d counted: exit %d, want %d\n%s", n, cmd.ProcessState.ExitCode(), want, out)
			}
			if got := recount(t, dir); got != n+1 {
				t.Fatalf("attempt 3: the log counts %d, want %d", got, n+1)
			}
			if got := reported(t, bin, dir); got != n+1 {
				t.Fatalf("attempt 3: orket reports %d, want %d", got, n+1)
			}
		})
	}
}

// recount counts, independently of orket's reader, the distinct runs
// whose whole evaluation line is a counted rejection of task T; a torn
// line (not JSON) is not a run.
func recount(t *testing.T, dir string) int {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, ".orket", "memory", "evaluations.jsonl"))
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	runs := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e struct {
			RunID   string `json:"run_id"`
			Task    string `json:"task"`
			Verdict string `json:"verdict"`
			Counted bool   `json:"counted"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		if e.Task == "T" && e.Counted && (e.Verdict == "REJECT" || e.Verdict == "ESCALATE") {
			runs[e.RunID] = true
		}
	}
	return len(runs)
}

// reported is the count orket task list gives for task T.
func reported(t *testing.T, bin, dir string) int {
	t.Helper()
	cmd := exec.Command(bin, "task", "list", "--json", "--task", "T")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("orket task list: %v\n%s", err, out)
	}
	var res struct {
		Tasks []struct {
			Rejections int `json:"rejections"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Tasks) != 1 {
		t.Fatalf("orket task list: %v\n%s", err, out)
	}
	return res.Tasks[0].Rejections
}
