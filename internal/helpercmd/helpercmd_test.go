package helpercmd

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func sh(script string, args ...string) []string {
	return append([]string{"sh", "-c", script, "sh"}, args...)
}

// live returns the processes of group pgid that are still running (not
// zombies).
func live(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// groupGone checks that nothing is left of the group whose leader wrote
// its pid to file; what is left (the test's own) is killed and reported.
func groupGone(t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	pgid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pgid <= 0 {
		t.Fatalf("no pid in %s: %v", file, err)
	}
	left := live(pgid)
	for i := 0; i < 100 && len(left) > 0; i++ {
		time.Sleep(20 * time.Millisecond)
		left = live(pgid)
	}
	if len(left) > 0 {
		syscall.Kill(-pgid, syscall.SIGKILL)
		t.Errorf("processes %v of its group outlived Run", left)
	}
}

// signal returns the signal that ended a command, 0 when none did.
func signal(err error) syscall.Signal {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return ws.Signal()
		}
	}
	return 0
}

func TestRunStdinStdout(t *testing.T) {
	res, err := Run(context.Background(), Cmd{Argv: sh(`tr a-z A-Z`), Stdin: strings.NewReader("make it loud\n")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "MAKE IT LOUD\n" || res.Err != nil || res.ExitCode != 0 || res.TimedOut || res.Overflow {
		t.Errorf("result %+v", res)
	}
}

func TestRunExitStatus(t *testing.T) {
	for _, tc := range []struct {
		name   string
		argv   []string
		code   int
		signal syscall.Signal
		stderr string
	}{
		{"exits 0", sh(`echo fine >&2`), 0, 0, "fine\n"},
		{"exits 3", sh(`echo "model not found" >&2; exit 3`), 3, 0, "model not found\n"},
		{"killed by a signal", sh(`echo dying >&2; kill -9 $$`), -1, syscall.SIGKILL, "dying\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Run(context.Background(), Cmd{Argv: tc.argv})
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tc.code || signal(res.Err) != tc.signal || res.Stderr != tc.stderr || res.TimedOut || res.Overflow {
				t.Errorf("result %+v", res)
			}
			var ee *exec.ExitError
			if (tc.code != 0) != errors.As(res.Err, &ee) {
				t.Errorf("error %v", res.Err)
			}
		})
	}
}

func TestRunDoesNotStart(t *testing.T) {
	res, err := Run(context.Background(), Cmd{Argv: []string{filepath.Join(t.TempDir(), "no-such-model")}})
	if res != nil || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing command: %+v, %v", res, err)
	}
	res, err = Run(context.Background(), Cmd{})
	if res != nil || !errors.Is(err, ErrNoCommand) {
		t.Errorf("no command: %+v, %v", res, err)
	}
}

// TestRunTimeout: on the timeout the whole group gets SIGTERM; one that
// ignores it, and its child, are killed after the grace.
func TestRunTimeout(t *testing.T) {
	const timeout, grace = 300 * time.Millisecond, 400 * time.Millisecond
	for _, tc := range []struct {
		name   string
		script string
		signal syscall.Signal
		killed bool // by SIGKILL after the grace
	}{
		{"sleeps", `echo $$ > "$1"; sleep 300 & sleep 300`, syscall.SIGTERM, false},
		{"ignores SIGTERM", `echo $$ > "$1"; trap "" TERM; sleep 300 & while :; do sleep 1; done`, syscall.SIGKILL, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pid")
			start := time.Now()
			res, err := Run(context.Background(), Cmd{Argv: sh(tc.script, pidFile), Timeout: timeout, Grace: grace})
			took := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			if !res.TimedOut || res.Overflow || res.ExitCode != -1 || signal(res.Err) != tc.signal {
				t.Errorf("result %+v", res)
			}
			if tc.killed && took < timeout+grace || took > timeout+grace+5*time.Second {
				t.Errorf("took %v", took)
			}
			groupGone(t, pidFile)
		})
	}
}

// TestRunCanceled: the end of the caller's context stops it as the
// timeout does.
func TestRunCanceled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := Run(ctx, Cmd{Argv: sh(`sleep 300`), Grace: 300 * time.Millisecond})
	if err != nil || !res.TimedOut || time.Since(start) > 5*time.Second {
		t.Errorf("result %+v, %v after %v", res, err, time.Since(start))
	}
}

// TestRunOverflow: a command that prints without end is stopped, its
// child too, once MaxStdout bytes have been read; they are kept.
func TestRunOverflow(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	const limit = 100 << 10
	start := time.Now()
	res, err := Run(context.Background(), Cmd{Argv: sh(`echo $$ > "$1"; sleep 300 & yes "print this"`, pidFile),
		MaxStdout: limit, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Overflow || res.TimedOut || len(res.Stdout) != limit || !strings.HasPrefix(res.Stdout, "print this\nprint this\n") {
		t.Errorf("result: overflow %v, timed out %v, %d bytes of stdout", res.Overflow, res.TimedOut, len(res.Stdout))
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %v", took)
	}
	groupGone(t, pidFile)

	// Under the cap, nothing is stopped.
	res, err = Run(context.Background(), Cmd{Argv: sh(`echo short`), MaxStdout: limit})
	if err != nil || res.Overflow || res.Stdout != "short\n" || res.ExitCode != 0 {
		t.Errorf("under the cap: %+v, %v", res, err)
	}
}

// TestRunStderrTail: of a long stderr the end is kept.
func TestRunStderrTail(t *testing.T) {
	res, err := Run(context.Background(), Cmd{Argv: sh(`{ echo first; head -c 50000 /dev/zero | tr '\0' x; printf '\nlast line\n'; } >&2; exit 1`)})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Stderr, "first") || !strings.HasSuffix(res.Stderr, "x\nlast line\n") ||
		len(res.Stderr) < StderrTail || len(res.Stderr) > 2*StderrTail {
		t.Errorf("stderr of %d bytes: %.40q...%q", len(res.Stderr), res.Stderr, res.Stderr[max(0, len(res.Stderr)-40):])
	}
	if res.ExitCode != 1 {
		t.Errorf("exit code %d", res.ExitCode)
	}
}

// TestRunLeavesNothing: what the command started and left in its group
// dies with it; a process that left the group does not hold Run past
// the grace.
func TestRunLeavesNothing(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	res, err := Run(context.Background(), Cmd{Argv: sh(`echo $$ > "$1"; sleep 300 & echo done`, pidFile), Grace: 300 * time.Millisecond})
	if err != nil || res.Stdout != "done\n" || res.ExitCode != 0 || res.Err != nil {
		t.Fatalf("result %+v, %v", res, err)
	}
	groupGone(t, pidFile)

	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	escaped := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	res, err = Run(context.Background(), Cmd{Argv: sh(`setsid sh -c 'echo $$ > "$1"; exec sleep 300' sh "$1" & while [ ! -s "$1" ]; do sleep 0.05; done; echo still`, escaped),
		Grace: 300 * time.Millisecond})
	if b, err := os.ReadFile(escaped); err == nil {
		if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); pid > 0 {
			defer syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if err != nil || res.Stdout != "still\n" || res.ExitCode != 0 || time.Since(start) > 5*time.Second {
		t.Errorf("result %+v, %v after %v", res, err, time.Since(start))
	}
}
