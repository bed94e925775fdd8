package feedback

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/orket/orket/internal/helpercmd"
	"github.com/orket/orket/redact"
)

// DefaultSummarizerTimeout is memory.summarizer_timeout's default.
const DefaultSummarizerTimeout = 60 * time.Second

// Bounds of a learning (docs/feedback.md) and of what orket reads of the
// summariser's output.
const (
	MaxLearningChars     = 500
	MaxLearningSentences = 2
	maxSummaryRead       = 64 << 10  // output beyond this stops the summariser
	maxPromptPart        = 256 << 10 // each of the change and the memory, in the prompt
)

// A Summarizer is the optional command (memory.summarizer) that turns a
// rejection into a learning: any model's command line (claude -p, llm,
// ollama run ...). orket ships none.
type Summarizer struct {
	Argv    []string
	Timeout time.Duration // 0: DefaultSummarizerTimeout
	Dir     string        // where it runs ("": orket's directory)
	Env     []string      // its environment (nil: orket's)
	// Redactor redacts what it printed before it is kept (nil: the
	// known secret shapes).
	Redactor *redact.Redactor
	// Grace is how long a SIGTERM'd process group has before SIGKILL
	// (0: 2 s).
	Grace time.Duration
}

// A Review is what the summariser is asked about.
type Review struct {
	// Subject names what was rejected: "the change of run X to pkg/api",
	// `the file "plan.md"`.
	Subject string
	// Content is the rejected change (a patch) or file.
	Content string
	Reason  string // the reviewer's reason; "" when none was given
	Memory  string // the current agent memory
}

// Prompt returns the review prompt for r: the task, then the rejected
// change, the reason and the current memory, each under its heading,
// then the form of the answer (docs/feedback.md, The summariser).
func (r Review) Prompt() string {
	var b strings.Builder
	subject := r.Subject
	if subject == "" {
		subject = "a change"
	}
	fmt.Fprintf(&b, "You are reviewing a rejected change: %s. A person rejected it instead of\n", subject)
	b.WriteString("approving it. Analyze what went wrong and produce ONE concise learning (1-2\n")
	b.WriteString("sentences) that should guide future changes.\n\n")
	b.WriteString("## The Rejected Change\n\n")
	b.WriteString(clip(r.Content, maxPromptPart))
	b.WriteString("\n\n## Why It Was Rejected\n\n")
	if strings.TrimSpace(r.Reason) == "" {
		b.WriteString("(no reason was given)")
	} else {
		b.WriteString(r.Reason)
	}
	b.WriteString("\n\n## Current Agent Memory\n\n")
	if strings.TrimSpace(r.Memory) == "" {
		b.WriteString("(empty)")
	} else {
		b.WriteString(clip(r.Memory, maxPromptPart))
	}
	b.WriteString("\n\nRespond with ONLY the learning text, no markdown headers or formatting.\n")
	return b.String()
}

// clip keeps the end of text within max bytes (on a rune boundary),
// saying what it left out.
func clip(text string, max int) string {
	if len(text) <= max {
		return text
	}
	cut := len(text) - max
	for cut < len(text) && !utf8.RuneStart(text[cut]) {
		cut++
	}
	return fmt.Sprintf("[... %d bytes left out ...]\n", cut) + text[cut:]
}

// A SummaryError is a summariser that failed: it could not start, exited
// non-zero, timed out or printed nothing.
type SummaryError struct {
	Argv     []string
	TimedOut bool
	ExitCode int    // -1 when it did not exit on its own
	Stderr   string // its last line on stderr, redacted
	Err      error
}

func (e *SummaryError) Error() string {
	name := "summarizer"
	if len(e.Argv) > 0 {
		name = "summarizer " + e.Argv[0]
	}
	msg := name + ": " + e.Err.Error()
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}

func (e *SummaryError) Unwrap() error { return e.Err }

// Errors a SummaryError wraps.
var (
	ErrNoSummarizer = errors.New("no summarizer configured")
	ErrTimedOut     = errors.New("timed out")
	ErrNoOutput     = errors.New("printed no learning")
)

// Summarize runs the summariser with r's prompt on stdin and returns its
// learning: its stdout, terminal escapes removed, redacted, folded to one
// line, at most two sentences and MaxLearningChars characters. It runs
// in its own process group; on the timeout (or ctx's end) the group gets
// SIGTERM and, after the grace, SIGKILL, and when the summariser exits
// whatever it left running in its group is killed, so no child outlives
// the call. Output beyond 64 KiB is not read: the summariser is stopped
// and what it printed so far is used. Any failure is a *SummaryError;
// the caller falls back to the learned action.
func (s *Summarizer) Summarize(ctx context.Context, r Review) (string, error) {
	if s == nil || len(s.Argv) == 0 {
		return "", &SummaryError{Err: ErrNoSummarizer, ExitCode: -1}
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultSummarizerTimeout
	}
	fail := func(err error, code int, stderr string, timedOut bool) (string, error) {
		return "", &SummaryError{Argv: s.Argv, Err: err, ExitCode: code, Stderr: stderr, TimedOut: timedOut}
	}
	res, err := helpercmd.Run(ctx, helpercmd.Cmd{Argv: s.Argv, Dir: s.Dir, Env: s.Env,
		Stdin: strings.NewReader(r.Prompt()), Timeout: timeout, Grace: s.Grace, MaxStdout: maxSummaryRead})
	if err != nil {
		return fail(err, -1, "", false)
	}

	red := s.Redactor
	lastErr := lastLine(red.Redact(stripControl(res.Stderr)))
	code := res.ExitCode
	switch {
	case res.TimedOut:
		return fail(fmt.Errorf("%w after %s", ErrTimedOut, timeout), -1, lastErr, true)
	case res.Overflow:
		// What it printed so far is used.
	case res.Err != nil:
		var ee *exec.ExitError
		if errors.As(res.Err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				return fail(fmt.Errorf("killed by signal %v", ws.Signal()), code, lastErr, false)
			}
			return fail(fmt.Errorf("exit status %d", code), code, lastErr, false)
		}
		return fail(res.Err, code, lastErr, false)
	}
	learning := CleanLearning(red.Redact(stripControl(res.Stdout)))
	if learning == "" {
		return fail(ErrNoOutput, code, lastErr, false)
	}
	return learning, nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return oneLine(lines[len(lines)-1], 200)
}

// CleanLearning makes a summariser's output a learning: markdown
// emphasis and list or heading markers at the start removed, folded to
// one line, at most MaxLearningSentences sentences and MaxLearningChars
// characters (cut at a word, with an ellipsis).
func CleanLearning(out string) string {
	var parts []string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		line = strings.TrimLeft(line, "#>*-+ \t")
		if line != "" {
			parts = append(parts, line)
		}
	}
	s := strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
	s = strings.ReplaceAll(s, "**", "")
	s = firstSentences(s, MaxLearningSentences)
	r := []rune(s)
	if len(r) <= MaxLearningChars {
		return s
	}
	cut := MaxLearningChars - 1
	for i := cut; i > MaxLearningChars/2; i-- {
		if unicode.IsSpace(r[i]) {
			cut = i
			break
		}
	}
	return strings.TrimRightFunc(string(r[:cut]), unicode.IsSpace) + "…"
}

// firstSentences returns the first n sentences of s: a sentence ends at
// ".", "!" or "?" followed by a space and a capital letter, a digit or a
// quote (so "e.g. this" and "v1.2" do not end one).
func firstSentences(s string, n int) string {
	count := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '.' && c != '!' && c != '?' {
			continue
		}
		j := i + 1
		for j < len(s) && (s[j] == '.' || s[j] == '!' || s[j] == '?' || s[j] == '"' || s[j] == '\'' || s[j] == ')') {
			j++
		}
		if j == len(s) {
			return s
		}
		if s[j] != ' ' || j+1 >= len(s) {
			continue
		}
		next, _ := utf8.DecodeRuneInString(s[j+1:])
		if !unicode.IsUpper(next) && !unicode.IsDigit(next) && next != '"' && next != '\'' && next != '`' {
			continue
		}
		count++
		if count == n {
			return s[:j]
		}
		i = j
	}
	return s
}

// Learn returns the learning for a rejection: the summariser's when one
// is configured and answers, else fallback (the learned action). The
// error says why the summariser's was not used (nil when it was, or
// when there is none); the learning is never empty.
func (s *Summarizer) Learn(ctx context.Context, r Review, fallback string) (learning, source string, err error) {
	if s == nil || len(s.Argv) == 0 {
		return fallback, SourceFallback, nil
	}
	out, err := s.Summarize(ctx, r)
	if err != nil {
		return fallback, SourceFallback, err
	}
	return out, SourceSummarizer, nil
}

// Where a learning came from.
const (
	SourceSummarizer = "summarizer"
	SourceFallback   = "learned_action" // the deterministic learned action
)
