package verify

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/config"
	"github.com/orket/orket/internal/contain"
)

var tail = config.Tail{MaxLines: 200, MaxBytes: 32768}

func opts(t *testing.T) Options {
	return Options{Root: t.TempDir(), Env: os.Environ(), Tail: tail}
}

func shell(name, cmd string) config.Step {
	return config.Step{Name: name, Shell: cmd, Required: true}
}

// gone reports whether a process no longer runs (an unreaped zombie
// counts as gone).
func gone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] == 'Z'
}

func readPid(t *testing.T, file string) int {
	t.Helper()
	for i := 0; i < 200; i++ {
		if b, err := os.ReadFile(file); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err == nil {
				return pid
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no pid in %s", file)
	return 0
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	for i := 0; i < 300; i++ {
		if gone(pid) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("process %d survived its step", pid)
}

func TestTimeoutKillsTheWholeGroup(t *testing.T) {
	o := opts(t)
	pidfile := filepath.Join(o.Root, "pid")
	s := shell("hang", "sleep 300 & echo $! > pid; wait")
	s.Timeout = 300 * time.Millisecond
	r := RunStep(context.Background(), s, o, nil)
	if !r.TimedOut || r.Status != Failed || r.Interrupted {
		t.Errorf("result %+v, want timed out and failed", r)
	}
	waitGone(t, readPid(t, pidfile))
}

func TestCancelKillsTheWholeGroup(t *testing.T) {
	o := opts(t)
	o.Grace = 200 * time.Millisecond
	pidfile := filepath.Join(o.Root, "pid")
	ctx, cancel := context.WithCancel(context.Background())
	var r *StepResult
	done := make(chan struct{})
	go func() {
		// The grandchild ignores SIGTERM: only the SIGKILL after the grace
		// period stops it.
		r = RunStep(ctx, shell("hang", "sh -c 'trap \"\" TERM; sleep 300' & echo $! > pid; wait"), o, nil)
		close(done)
	}()
	pid := readPid(t, pidfile)
	cancel()
	<-done
	if !r.Interrupted || r.TimedOut || r.Status != Failed {
		t.Errorf("result %+v, want interrupted", r)
	}
	waitGone(t, pid)
}

func TestLeftoverBackgroundProcessIsKilled(t *testing.T) {
	o := opts(t)
	r := RunStep(context.Background(), shell("bg", "sleep 300 & echo $! > pid"), o, nil)
	if r.Status != Passed {
		t.Fatalf("result %+v", r)
	}
	waitGone(t, readPid(t, filepath.Join(o.Root, "pid")))
}

func TestExitCodeAndSignalAreDistinct(t *testing.T) {
	for _, tc := range []struct {
		cmd    string
		code   int
		signal string
	}{
		{"exit 3", 3, ""},
		{"exit 0", 0, ""},
		{"kill -TERM $$", -1, "SIGTERM"},
		{"kill -KILL $$", -1, "SIGKILL"},
		{"kill -SEGV $$", -1, "SIGSEGV"},
	} {
		r := RunStep(context.Background(), shell("x", tc.cmd), opts(t), nil)
		if r.ExitCode != tc.code || r.Signal != tc.signal {
			t.Errorf("%s: exit %d signal %q, want %d %q", tc.cmd, r.ExitCode, r.Signal, tc.code, tc.signal)
		}
	}
	r := RunStep(context.Background(), config.Step{Name: "nope", Argv: []string{"/no/such/program"}, Required: true}, opts(t), nil)
	if r.Status != Failed || r.ExitCode != 127 || !strings.Contains(r.OutputTail, "cannot start /no/such/program") {
		t.Errorf("missing program: %+v", r)
	}
}

func TestEnvDirAndArgv(t *testing.T) {
	o := opts(t)
	os.MkdirAll(filepath.Join(o.Root, "web", "src"), 0o755)
	o.Env = append(o.Env, "ORKET_RUN_ID=r1")
	s := shell("env", `printf '%s %s %s\n' "$(basename "$PWD")" "$GREETING" "$ORKET_RUN_ID"`)
	s.Dir, s.Env = "web/src", map[string]string{"GREETING": "hello world"}
	r := RunStep(context.Background(), s, o, nil)
	if r.OutputTail != "src hello world r1\n" {
		t.Errorf("output %q", r.OutputTail)
	}
	r = RunStep(context.Background(), config.Step{Name: "argv", Argv: []string{"printf", "%s|", "a b", "$HOME"}, Required: true}, o, nil)
	if r.OutputTail != "a b|$HOME|" {
		t.Errorf("argv output %q (an argv must not go through a shell)", r.OutputTail)
	}
}

func TestProfileSemantics(t *testing.T) {
	fail := shell("fail", "echo broken; exit 1")
	optional := shell("optional", "exit 2")
	optional.Required = false
	ok := shell("ok", "true")
	web := shell("web", "true")
	web.When = []string{"web/**"}
	for _, tc := range []struct {
		name     string
		p        config.Resolved
		touch    []string
		skip     map[string]bool
		statuses []string
	}{
		{"fail-fast stops", config.Resolved{Steps: []config.Step{ok, fail, ok2()}, FailFast: true}, nil, nil, []string{"passed", "failed"}},
		{"fail_fast false runs all", config.Resolved{Steps: []config.Step{fail, ok, fail2()}}, nil, nil, []string{"failed", "passed", "failed"}},
		{"optional failure does not stop", config.Resolved{Steps: []config.Step{optional, ok}, FailFast: true}, nil, nil, []string{"failed", "passed"}},
		{"when skips", config.Resolved{Steps: []config.Step{web, ok}, FailFast: true}, []string{"api/a.go"}, nil, []string{"skipped", "passed"}},
		{"when runs", config.Resolved{Steps: []config.Step{web, ok}, FailFast: true}, []string{"web/x/y.ts"}, nil, []string{"passed", "passed"}},
		{"empty touch set runs all", config.Resolved{Steps: []config.Step{web}, FailFast: true}, nil, nil, []string{"passed"}},
		{"skip by name", config.Resolved{Steps: []config.Step{fail, ok}, FailFast: true}, nil, map[string]bool{"fail": true}, []string{"skipped", "passed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := opts(t)
			o.TouchSet, o.Skip = tc.touch, tc.skip
			var got []string
			for _, r := range Run(context.Background(), &tc.p, o) {
				got = append(got, r.Status)
			}
			if diff := cmp.Diff(tc.statuses, got); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
		})
	}
	o := opts(t)
	rs := Run(context.Background(), &config.Resolved{Steps: []config.Step{optional}}, o)
	if rs[0].FailedRequired() {
		t.Error("an optional step's failure must not fail the run")
	}
}

func ok2() config.Step   { return shell("ok2", "true") }
func fail2() config.Step { return shell("fail2", "exit 4") }

// TestParallelOverlaps proves the steps run at the same time without a
// clock: each waits (up to 20 s) for the other to have started.
func TestParallelOverlaps(t *testing.T) {
	a := shell("a", "touch a.started; for i in $(seq 400); do [ -e b.started ] && exit 0; sleep 0.05; done; exit 1")
	b := shell("b", "touch b.started; for i in $(seq 400); do [ -e a.started ] && exit 0; sleep 0.05; done; exit 1")
	rs := Run(context.Background(), &config.Resolved{Steps: []config.Step{a, b}, Parallel: true, FailFast: true}, opts(t))
	for _, r := range rs {
		if r.Status != Passed {
			t.Errorf("%s: %s; the steps did not overlap", r.Name, r.Status)
		}
	}
}

// TestParallelOutputIsNeverInterleaved runs two chatty steps at once and
// checks each step's output arrives as one block, in declared order.
func TestParallelOutputIsNeverInterleaved(t *testing.T) {
	var mu sync.Mutex
	var got strings.Builder
	o := opts(t)
	o.Output = func(name string) io.Writer {
		return writerFunc(func(b []byte) { mu.Lock(); got.Write(b); mu.Unlock() })
	}
	steps := []config.Step{
		shell("first", "for i in $(seq 2000); do echo first $i; done"),
		shell("second", "for i in $(seq 2000); do echo second $i; done"),
	}
	var order []string
	o.Done = func(r *StepResult) { order = append(order, r.Name) }
	Run(context.Background(), &config.Resolved{Steps: steps, Parallel: true, FailFast: true}, o)
	var want strings.Builder
	for _, n := range []string{"first", "second"} {
		for i := 1; i <= 2000; i++ {
			fmt.Fprintf(&want, "%s %d\n", n, i)
		}
	}
	if got.String() != want.String() {
		t.Error("parallel output interleaved or out of order")
	}
	if diff := cmp.Diff([]string{"first", "second"}, order); diff != "" {
		t.Errorf("results order (-want +got):\n%s", diff)
	}
}

func TestParallelFailFastStopsTheOthers(t *testing.T) {
	o := opts(t)
	steps := []config.Step{shell("slow", "sleep 300 & echo $! > pid; wait"), shell("fail", "sleep 0.2; exit 1")}
	rs := Run(context.Background(), &config.Resolved{Steps: steps, Parallel: true, FailFast: true}, o)
	if rs[0].Status != Skipped || rs[0].SkipReason != "fail_fast" || rs[1].Status != Failed {
		t.Errorf("got %s/%s and %s", rs[0].Status, rs[0].SkipReason, rs[1].Status)
	}
	waitGone(t, readPid(t, filepath.Join(o.Root, "pid")))
}

type writerFunc func([]byte)

func (f writerFunc) Write(b []byte) (int, error) { f(b); return len(b), nil }

// TestHugeOutputKeepsATail streams 200 MB through a step (50 MB under
// -short): the tail is exact, the byte count complete, and orket's
// allocations stay far below the output's size.
func TestHugeOutputKeepsATail(t *testing.T) {
	lines := 2_000_000
	if testing.Short() {
		lines = 500_000
	}
	o := opts(t)
	// 100-byte lines, then two known last lines.
	s := shell("huge", `awk 'BEGIN { l = sprintf("%099d", 0); for (i = 0; i < `+strconv.Itoa(lines)+`; i++) print l; print "second to last"; print "last" }'`)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := RunStep(context.Background(), s, o, nil)
	runtime.ReadMemStats(&after)
	if r.OutputBytes != int64(lines*100+len("second to last\nlast\n")) {
		t.Errorf("output_bytes %d", r.OutputBytes)
	}
	if !strings.HasSuffix(r.OutputTail, "\nsecond to last\nlast\n") || len(r.OutputTail) > tail.MaxBytes {
		t.Errorf("tail: %d bytes, ends %q", len(r.OutputTail), r.OutputTail[max(0, len(r.OutputTail)-40):])
	}
	if n := strings.Count(r.OutputTail, "\n"); n > tail.MaxLines {
		t.Errorf("tail has %d lines, cap %d", n, tail.MaxLines)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("allocated %d MB while streaming %d MB", alloc>>20, lines/10_000)
	}
}

// BenchmarkHugeOutput reports the peak resident memory of streaming a
// 200 MB step output.
func BenchmarkHugeOutput(b *testing.B) {
	o := Options{Root: b.TempDir(), Env: os.Environ(), Tail: tail}
	s := shell("huge", `head -c 200000000 /dev/zero | tr '\0' 'x' | fold -w 99`)
	for i := 0; i < b.N; i++ {
		r := RunStep(context.Background(), s, o, nil)
		if r.OutputBytes < 200_000_000 {
			b.Fatalf("output_bytes %d", r.OutputBytes)
		}
	}
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MB")
}

func peakRSS() int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// BenchmarkStep measures what the runner adds to a step: /bin/true
// started and waited for by exec alone, then as a step (its process
// group, its output's pipe and tail), then as a step in a containment
// group (a cgroup of its own where the system allows one).
func BenchmarkStep(b *testing.B) {
	o := Options{Root: b.TempDir(), Env: os.Environ(), Tail: tail}
	s := config.Step{Name: "true", Argv: []string{"/bin/true"}}
	b.Run("exec", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("step", func(b *testing.B) {
		for b.Loop() {
			if r := RunStep(context.Background(), s, o, nil); r.Status != Passed {
				b.Fatal(r.OutputTail)
			}
		}
	})
	b.Run("contained", func(b *testing.B) {
		g := contain.New("bench-" + strconv.Itoa(os.Getpid()))
		defer g.Close()
		o := o
		o.Group = g
		for b.Loop() {
			if r := RunStep(context.Background(), s, o, nil); r.Status != Passed {
				b.Fatal(r.OutputTail)
			}
		}
	})
}
