package feedback

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// alive reports whether pid is a live process (a zombie is not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}

// pidIn waits for a pid a test process writes to file.
func pidIn(t *testing.T, file string) int {
	t.Helper()
	for i := 0; i < 200; i++ {
		b, _ := os.ReadFile(file)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no pid in %s", file)
	return 0
}

// gone waits a little for pid to die; a live one is killed (it is the
// test's own) and reported.
func gone(t *testing.T, pid int, what string) {
	t.Helper()
	for i := 0; i < 100 && alive(pid); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("%s (pid %d) outlived the summarizer", what, pid)
	}
}

func sh(script string, args ...string) []string {
	return append([]string{"sh", "-c", script, "sh"}, args...)
}

var review = Review{Subject: "the change of run r1 to pkg/api", Content: "diff --git a/x b/x\n+bad example\n",
	Reason: "Examples don't work", Memory: "# Agent Memory\n- **t** — c: earlier learning\n"}

func TestSummarize(t *testing.T) {
	dir := t.TempDir()
	stdin := filepath.Join(dir, "stdin")
	s := &Summarizer{Argv: sh(`cat > "$1"; printf '%s\n\n%s\n' "Never show untested examples. Run them in the verify profile first." "A third sentence."`, stdin)}
	got, err := s.Summarize(context.Background(), review)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Never show untested examples. Run them in the verify profile first."; got != want {
		t.Errorf("learning %q, want %q", got, want)
	}
	// The review prompt, with the change, the reason and the memory.
	b, _ := os.ReadFile(stdin)
	prompt := string(b)
	for _, want := range []string{
		"You are reviewing a rejected change: the change of run r1 to pkg/api.",
		"produce ONE concise learning (1-2\nsentences)",
		"## The Rejected Change\n\ndiff --git a/x b/x\n+bad example\n",
		"## Why It Was Rejected\n\nExamples don't work",
		"## Current Agent Memory\n\n# Agent Memory\n- **t** — c: earlier learning",
		"Respond with ONLY the learning text, no markdown headers or formatting.",
	} {
		if !strings.Contains(prompt, want) {
			t.Errorf("prompt lacks %q:\n%s", want, prompt)
		}
	}
	if p := (Review{}).Prompt(); !strings.Contains(p, "(no reason was given)") || !strings.Contains(p, "## Current Agent Memory\n\n(empty)") {
		t.Errorf("empty review prompt:\n%s", p)
	}
}

func TestSummarizeRedacts(t *testing.T) {
	const token = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	s := &Summarizer{Argv: sh(`echo "Use the token ` + token + ` from the vault."`)}
	got, err := s.Summarize(context.Background(), review)
	if err != nil || strings.Contains(got, token) || !strings.Contains(got, "[REDACTED]") {
		t.Errorf("learning %q, %v", got, err)
	}
}

func TestSummarizeFails(t *testing.T) {
	for _, tc := range []struct {
		name string
		argv []string
		code int
		is   error
		msg  string
	}{
		{"exit status", sh(`cat >/dev/null; echo "model not found" >&2; exit 3`), 3, nil, "summarizer sh: exit status 3: model not found"},
		{"prints nothing", sh(`cat >/dev/null; echo "   "`), 0, ErrNoOutput, "summarizer sh: printed no learning"},
		{"killed by a signal", sh(`kill -9 $$`), -1, nil, "summarizer sh: killed by signal killed"},
		{"not found", []string{filepath.Join(t.TempDir(), "no-such-model")}, -1, nil, "no such file or directory"},
		{"none configured", nil, -1, ErrNoSummarizer, "no summarizer configured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Summarizer{Argv: tc.argv}
			got, err := s.Summarize(context.Background(), review)
			var se *SummaryError
			if !errors.As(err, &se) || got != "" {
				t.Fatalf("got %q, %v", got, err)
			}
			if se.ExitCode != tc.code || se.TimedOut || (tc.is != nil && !errors.Is(err, tc.is)) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %v (%+v)", err, se)
			}
			// The caller falls back to the learned action: never lost.
			l, src, lerr := s.Learn(context.Background(), review, "Validate all code examples")
			if l != "Validate all code examples" || src != SourceFallback {
				t.Errorf("Learn: %q from %s", l, src)
			}
			if (lerr == nil) != (tc.argv == nil) {
				t.Errorf("Learn error %v", lerr)
			}
		})
	}
}

// TestSummarizeHangs: on the timeout the whole group is stopped, its
// children too; one that ignores SIGTERM is killed after the grace.
func TestSummarizeHangs(t *testing.T) {
	for _, tc := range []struct{ name, script string }{
		{"sleeps", `sleep 300 & echo $! > "$1"; sleep 300`},
		{"ignores SIGTERM", `trap "" TERM; sleep 300 & echo $! > "$1"; while :; do sleep 1; done`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pid")
			s := &Summarizer{Argv: sh(tc.script, pidFile), Timeout: 300 * time.Millisecond, Grace: 300 * time.Millisecond}
			start := time.Now()
			got, err := s.Summarize(context.Background(), review)
			took := time.Since(start)
			var se *SummaryError
			if !errors.As(err, &se) || !se.TimedOut || !errors.Is(err, ErrTimedOut) || got != "" {
				t.Fatalf("got %q, %v", got, err)
			}
			if took > 5*time.Second {
				t.Errorf("took %v", took)
			}
			gone(t, pidIn(t, pidFile), "the summarizer's child")
		})
	}
	// The caller's context ends it too.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := (&Summarizer{Argv: sh("sleep 300")}).Summarize(ctx, review); !errors.Is(err, ErrTimedOut) {
		t.Errorf("ctx: %v", err)
	}
}

// TestSummarizeLeavesNothing: what the summariser started and left behind
// dies with it; a process that left the group does not hold orket.
func TestSummarizeLeavesNothing(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	s := &Summarizer{Argv: sh(`sleep 300 & echo $! > "$1"; echo "Learn this."`, pidFile), Grace: 300 * time.Millisecond}
	got, err := s.Summarize(context.Background(), review)
	if err != nil || got != "Learn this." {
		t.Fatalf("got %q, %v", got, err)
	}
	gone(t, pidIn(t, pidFile), "a background child")

	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	escaped := filepath.Join(t.TempDir(), "pid")
	s = &Summarizer{Argv: sh(`setsid sh -c 'echo $$ > "$1"; exec sleep 300' sh "$1" & while [ ! -s "$1" ]; do sleep 0.05; done; echo "Still learned."`, escaped), Grace: 300 * time.Millisecond}
	start := time.Now()
	got, err = s.Summarize(context.Background(), review)
	pid := pidIn(t, escaped)
	defer syscall.Kill(pid, syscall.SIGKILL)
	if err != nil || got != "Still learned." || time.Since(start) > 5*time.Second {
		t.Errorf("got %q, %v after %v", got, err, time.Since(start))
	}
}

// TestSummarizeTooMuch: a summariser that prints without end is stopped
// after 64 KiB and its first two sentences kept; one long sentence is cut
// to 500 characters.
func TestSummarizeTooMuch(t *testing.T) {
	s := &Summarizer{Argv: []string{"yes", "Test examples before showing them."}, Timeout: 10 * time.Second}
	start := time.Now()
	got, err := s.Summarize(context.Background(), review)
	if err != nil || got != "Test examples before showing them. Test examples before showing them." {
		t.Errorf("got %q, %v", got, err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v: not stopped when its output overflowed", took)
	}
	s = &Summarizer{Argv: sh(`cat >/dev/null; i=0; while [ $i -lt 300 ]; do printf 'word%d ' $i; i=$((i+1)); done`)}
	got, err = s.Summarize(context.Background(), review)
	if err != nil || len([]rune(got)) > MaxLearningChars || !strings.HasSuffix(got, "…") || !strings.HasPrefix(got, "word0 word1 ") {
		t.Errorf("got %q (%d characters), %v", got, len([]rune(got)), err)
	}
	if strings.Contains(strings.TrimSuffix(got, "…"), "word299") || strings.HasSuffix(strings.TrimSuffix(got, "…"), " ") {
		t.Errorf("cut badly: %q", got)
	}
}

func TestCleanLearning(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Plain.", "Plain."},
		{"  **Learning:** Don't promise dates.\n\nCheck with accounting. Then reply.", "Learning: Don't promise dates. Check with accounting."},
		{"# Heading\n- bullet one.\n- Bullet two.", "Heading bullet one. Bullet two."},
		{"Use tools, e.g. gofmt, always. Version v1.2 is fine. Third.", "Use tools, e.g. gofmt, always. Version v1.2 is fine."},
		{"Why? Because. No.", "Why? Because."},
		{`He said "stop." Then left. And more.`, `He said "stop." Then left.`},
		{"no end", "no end"},
		{"\n\n", ""},
	} {
		if got := CleanLearning(tc.in); got != tc.want {
			t.Errorf("CleanLearning(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
