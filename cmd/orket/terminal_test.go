package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// needTmux returns tmux's path, installing it from Debian's packages when
// it is missing and this is root on a system with apt-get; it skips, saying
// why, only when it cannot.
func needTmux(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("tmux"); err == nil {
		return p
	}
	if _, err := exec.LookPath("apt-get"); err != nil || os.Geteuid() != 0 {
		t.Skip("tmux is missing and cannot be installed here (apt-get as root): the terminal tests need a real terminal")
	}
	for _, args := range [][]string{{"update", "-qq"}, {"install", "-y", "-qq", "tmux"}} {
		cmd := exec.Command("apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("tmux is missing and apt-get %s failed: %v\n%s", args[0], err, out)
		}
	}
	p, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux was installed but is not on PATH")
	}
	return p
}

// A terminal is a tmux session running one command in a real pty.
type terminal struct {
	t      *testing.T
	tmux   string
	socket string
	name   string
}

func newTerminal(t *testing.T, dir, command string) *terminal {
	t.Helper()
	term := &terminal{t: t, tmux: needTmux(t), socket: filepath.Join(t.TempDir(), "tmux.sock"), name: "orket"}
	// The shell stays after the command, so its last words can be read.
	script := fmt.Sprintf("cd %q && %s; echo \"EXIT=$?\"; sleep 60", dir, command)
	term.run("new-session", "-d", "-s", term.name, "-x", "200", "-y", "50", "sh", "-c", script)
	t.Cleanup(func() { exec.Command(term.tmux, "-S", term.socket, "kill-server").Run() })
	return term
}

func (term *terminal) run(args ...string) string {
	term.t.Helper()
	cmd := exec.Command(term.tmux, append([]string{"-S", term.socket}, args...)...)
	// A person's terminal: the tmux server started here passes its
	// environment to the command, and CI (set on a CI machine) would make
	// orket ask no one.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CI=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "TERM=xterm-256color")
	out, err := cmd.CombinedOutput()
	if err != nil {
		term.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// screen is what the terminal shows.
func (term *terminal) screen() string { return term.run("capture-pane", "-p", "-t", term.name) }

// waitFor waits until the screen shows s.
func (term *terminal) waitFor(s string, limit time.Duration) string {
	term.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		scr := term.screen()
		if strings.Contains(scr, s) {
			return scr
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("the terminal never showed %q; it shows:\n%s", s, scr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRejectAsksOnATerminal drives orket reject on a real terminal: it
// asks once why the change was rejected, takes the answer, lets Enter
// skip, and stops waiting after 30 s (3 s under -short, through the test
// binary's own hook).
func TestRejectAsksOnATerminal(t *testing.T) {
	bin := orketBinary(t)
	limit, reject := reasonWait, bin+" reject"
	if testing.Short() {
		limit = 3 * time.Second
		reject = "ORKET_TEST_REASON_WAIT=" + limit.String() + " " + reject
	}
	for _, tc := range []struct {
		name, keys, reason, category string
		wait                         time.Duration
	}{
		{"answer", "the examples are wrong", "the examples are wrong", "examples", 0},
		{"enter skips", "", "No reason provided", "other", 0},
		{"no answer", "-", "No reason provided", "other", limit + 5*time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := crashRepo(t)
			kept := exec.Command(bin, "run", "--yes", "--scope", "pkg", "--", "sh", "-c", "echo kept > pkg/a.txt")
			kept.Dir = dir
			if out, err := kept.CombinedOutput(); err != nil {
				t.Fatalf("the kept run: %v\n%s", err, out)
			}
			term := newTerminal(t, dir, reject)
			term.waitFor("Why was it rejected? It helps the next run. Enter to skip:", 10*time.Second)
			start := time.Now()
			switch tc.keys {
			case "-": // nobody answers
			case "":
				term.run("send-keys", "-t", term.name, "Enter")
			default:
				term.run("send-keys", "-t", term.name, "-l", tc.keys)
				term.run("send-keys", "-t", term.name, "Enter")
			}
			scr := term.waitFor("EXIT=", 10*time.Second+tc.wait)
			if !strings.Contains(scr, "EXIT=0") || !strings.Contains(scr, "rejected run ") {
				t.Fatalf("orket reject did not finish well:\n%s", scr)
			}
			if tc.wait > 0 {
				// (orket's wait began as it printed the question, a moment
				// before the test saw it.)
				if waited := time.Since(start); waited < limit-time.Second || waited > limit+5*time.Second {
					t.Errorf("waited %s for a reason; the limit is %s", waited, limit)
				}
				if !strings.Contains(scr, "no answer in "+limit.String()) {
					t.Errorf("the terminal does not say it stopped waiting:\n%s", scr)
				}
			}
			list := exec.Command(bin, "feedback", "list", "--json")
			list.Dir = dir
			out, err := list.Output()
			if err != nil {
				t.Fatal(err)
			}
			var res struct {
				Entries []struct {
					Reason   string `json:"reason"`
					Category string `json:"category"`
				} `json:"entries"`
			}
			if err := json.Unmarshal(out, &res); err != nil || len(res.Entries) != 1 {
				t.Fatalf("feedback list: %v\n%s", err, out)
			}
			if e := res.Entries[0]; e.Reason != tc.reason || e.Category != tc.category {
				t.Errorf("recorded %q (%s), want %q (%s)", e.Reason, e.Category, tc.reason, tc.category)
			}
		})
	}
}
