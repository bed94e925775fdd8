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

// TestReviewGateOnATerminal drives orket lessons review on a real terminal
// (docs/guardrails.md, The review gate): the box is drawn, v shows the
// sources, a approves (v1 is written), q defers and leaves the proposal
// pending.
func TestReviewGateOnATerminal(t *testing.T) {
	bin := orketBinary(t)
	dir, pending := gateRepo(t, bin)
	before := pending()
	if len(before) != 2 {
		t.Fatalf("pending before the review: %v, want two proposals", before)
	}

	term := newTerminal(t, dir, bin+" lessons review")
	scr := term.waitFor("[a] Approve  [r] Reject  [v] View Full  [q] Defer", 10*time.Second)
	for _, want := range []string{"╭", "Guardrails Update Proposal", "Agent: claude", "Version: none → v1", "Source Feedback: 5 entries", "+ Export DATABASE_URL", "proposal 1 of 2"} {
		if !strings.Contains(scr, want) {
			t.Errorf("the box does not show %q:\n%s", want, scr)
		}
	}
	term.run("send-keys", "-t", term.name, "v")
	// The sources scroll above the box drawn again: read the scrollback.
	all := func() string { return term.run("capture-pane", "-p", "-S", "-500", "-t", term.name) }
	deadline := time.Now().Add(10 * time.Second)
	for scr = all(); strings.Count(scr, "[a] Approve") < 2 && time.Now().Before(deadline); scr = all() {
		time.Sleep(50 * time.Millisecond)
	}
	header := "Proposal " + strings.Fields(before[0])[0] + " for claude (proposed)"
	if !strings.Contains(scr, header) || strings.Count(scr, "missing_env_var") < 5 || strings.Count(scr, "[a] Approve") < 2 {
		t.Errorf("v does not show the sources, then the box again:\n%s", scr)
	}
	term.run("send-keys", "-t", term.name, "a")
	term.waitFor("claude's guardrails are now v1", 10*time.Second)
	term.waitFor("proposal 2 of 2", 10*time.Second)
	term.run("send-keys", "-t", term.name, "q")
	scr = term.waitFor("EXIT=", 10*time.Second)
	if !strings.Contains(scr, "EXIT=0") || !strings.Contains(scr, "deferred "+strings.Fields(before[1])[0]) {
		t.Fatalf("the review did not end well:\n%s", scr)
	}
	if _, err := os.Stat(filepath.Join(dir, ".orket", "guardrails", "claude", "v1.md")); err != nil {
		t.Errorf("approving wrote no v1: %v", err)
	}
	after := pending()
	if len(after) != 1 || after[0] != strings.Fields(before[1])[0]+" deferred" {
		t.Errorf("pending after the review: %v, want the second proposal deferred", after)
	}
}

// gateRepo makes a repository where agent claude failed five times one
// way and three times another: two pending proposals. pending lists them
// ("id status") as orket lessons review --json does.
func gateRepo(t *testing.T, bin string) (string, func() []string) {
	t.Helper()
	home := t.TempDir()
	for k, v := range map[string]string{"HOME": home, "GIT_CONFIG_NOSYSTEM": "1", "XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com",
		"ORKET_USER": "alice", "CI": "", "DATABASE_URL": ""} {
		t.Setenv(k, v)
	}
	dir := t.TempDir()
	shell(t, dir, `
git init -q
mkdir src
printf 'a\n' > src/a.txt
cat > orket.yaml <<'Y'
verify:
  default: test
  profiles:
    test: [{name: test, run: 'test -n "$DATABASE_URL" || { echo "error: environment variable DATABASE_URL is not set" >&2; exit 1; }'}]
    lint: [{name: lint, run: 'echo "src/a.txt:1: line too long" >&2; exit 1'}]
verdict: {escalate_after: 0}
Y
git add -A
git commit -q -m init
`)
	// Five failures of one kind, three of another: two proposals.
	for i, profile := range []string{"test", "test", "test", "test", "test", "lint", "lint", "lint"} {
		run := exec.Command(bin, "run", "--yes", "--agent", "claude", "--profile", profile, "--scope", "src", "--", "sh", "-c", fmt.Sprintf("echo run%d > src/a.txt", i))
		run.Dir = dir
		if out, err := run.CombinedOutput(); err == nil {
			t.Fatalf("run %d passed:\n%s", i, out)
		}
	}
	pending := func() []string {
		t.Helper()
		list := exec.Command(bin, "lessons", "review", "--json")
		list.Dir = dir
		out, err := list.Output()
		if err != nil {
			t.Fatalf("orket lessons review --json: %v", err)
		}
		var res struct {
			Pending []struct{ ID, Status string }
		}
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, p := range res.Pending {
			ids = append(ids, p.ID+" "+p.Status)
		}
		return ids
	}
	return dir, pending

}

// TestReviewGateRejectsAndStops: r asks a reason on the terminal (Enter
// alone asks again), a reason rejects; Ctrl-C interrupts the review
// (exit 130) and what is left stays pending; with stdout redirected the
// review lists and exits without reading a key.
func TestReviewGateRejectsAndStops(t *testing.T) {
	bin := orketBinary(t)
	dir, pending := gateRepo(t, bin)
	before := pending()
	if len(before) != 2 {
		t.Fatalf("pending before the review: %v, want two proposals", before)
	}
	first, second := strings.Fields(before[0])[0], strings.Fields(before[1])[0]

	term := newTerminal(t, dir, bin+" lessons review")
	term.waitFor("proposal 1 of 2", 10*time.Second)
	term.run("send-keys", "-t", term.name, "r")
	term.waitFor("Why reject it?", 10*time.Second)
	term.run("send-keys", "-t", term.name, "Enter")
	term.waitFor("a rejection needs a reason; press a key again", 10*time.Second)
	term.run("send-keys", "-t", term.name, "r")
	term.run("send-keys", "-t", term.name, "-l", "not our conventionX")
	term.run("send-keys", "-t", term.name, "BSpace")
	term.run("send-keys", "-t", term.name, "Enter")
	if scr := term.waitFor("rejected "+first+": ", 10*time.Second); !strings.Contains(scr, "rejected "+first+": not our convention\n") {
		t.Errorf("the reason was not read as typed (Backspace erases):\n%s", scr)
	}
	term.waitFor("proposal 2 of 2", 10*time.Second)
	term.run("send-keys", "-t", term.name, "C-c")
	scr := term.waitFor("EXIT=", 10*time.Second)
	if !strings.Contains(scr, "EXIT=130") || !strings.Contains(scr, "orket: E_INTERRUPTED: the review was interrupted (Ctrl-C)") {
		t.Fatalf("Ctrl-C did not interrupt the review:\n%s", scr)
	}
	if after := pending(); len(after) != 1 || after[0] != second+" proposed" {
		t.Errorf("pending after the review: %v, want only the second, still proposed", after)
	}

	// stdout is a file: nothing is drawn, no key is read.
	list := newTerminal(t, dir, bin+" lessons review > ../review.txt")
	scr = list.waitFor("EXIT=", 10*time.Second)
	if !strings.Contains(scr, "EXIT=0") {
		t.Fatalf("the review with stdout redirected did not exit at once:\n%s", scr)
	}
	out, err := os.ReadFile(filepath.Join(filepath.Dir(dir), "review.txt"))
	if err != nil || !strings.HasPrefix(string(out), second+"  claude  proposed  ") {
		t.Errorf("review.txt: %q (%v), want the listing", out, err)
	}
}
