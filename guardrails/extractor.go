package guardrails

// The optional lessons.extractor: a command (any model's command line)
// that rewrites a proposal's lesson text. It runs as feedback's
// summariser does, through internal/helpercmd: its own process group,
// stdin the cluster as JSON, stdout the new text, bounded in time and
// output; on any failure the deterministic text stays and the failure is
// returned to be logged.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/orket/orket/classify"
	"github.com/orket/orket/feedback"
	"github.com/orket/orket/internal/helpercmd"
	"github.com/orket/orket/redact"
)

// DefaultExtractorTimeout is lessons.extractor_timeout's default.
const DefaultExtractorTimeout = 60 * time.Second

const maxExtractorRead = 64 << 10

// An Extractor is the lessons.extractor command.
type Extractor struct {
	Argv     []string
	Timeout  time.Duration    // 0: DefaultExtractorTimeout
	Dir      string           // where it runs ("": orket's directory)
	Env      []string         // its environment (nil: orket's)
	Redactor *redact.Redactor // redacts its output (nil: the known shapes)
	Grace    time.Duration    // between SIGTERM and SIGKILL of its group (0: 2 s)
}

// ExtractorInstruction heads what the extractor reads.
const ExtractorInstruction = "Rewrite lesson_text as ONE short imperative rule for this coding agent (at most two sentences), " +
	"keeping the commands, paths and variable names it cites exactly as written. Respond with the rule only, no markdown."

// ExtractorInput is the JSON the extractor gets on stdin.
type ExtractorInput struct {
	Instruction string   `json:"instruction"`
	Agent       string   `json:"agent"`
	Cluster     Cluster  `json:"cluster"`
	LessonText  string   `json:"lesson_text"`
	Change      Change   `json:"constraint_update"`
	Count       int      `json:"count"`
	Total       int      `json:"total"`
	Sources     []Signal `json:"sources"`
}

// An ExtractorError is an extractor that failed: it could not start,
// exited non-zero, timed out or printed nothing.
type ExtractorError struct {
	Argv     []string
	TimedOut bool
	Stderr   string // its last line on stderr, redacted
	Err      error
}

func (e *ExtractorError) Error() string {
	name := "extractor"
	if len(e.Argv) > 0 {
		name = "extractor " + e.Argv[0]
	}
	msg := name + ": " + e.Err.Error()
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}

func (e *ExtractorError) Unwrap() error { return e.Err }

// Errors an ExtractorError wraps.
var (
	ErrExtractorTimedOut = errors.New("timed out")
	ErrExtractorNoOutput = errors.New("printed no lesson")
)

// Apply rewrites p's lesson text (and the line its change writes) with
// the extractor's. With no extractor, or when it fails, p keeps its
// deterministic text; the error says why (nil when there is none).
// Removal proposals are left as they are.
func (x *Extractor) Apply(ctx context.Context, p *Proposal) error {
	if x == nil || len(x.Argv) == 0 || p.ConstraintUpdate.Type == Removal {
		return nil
	}
	text, err := x.Extract(ctx, p)
	if err != nil {
		return err
	}
	p.DeterministicText = p.LessonText
	p.LessonText, p.TextSource = text, SourceExtractor
	p.ConstraintUpdate.NewText = text
	return nil
}

// Extract runs the extractor on p's cluster and returns its text:
// stdout without terminal escapes, redacted, one line, at most two
// sentences and 500 characters (feedback.CleanLearning).
func (x *Extractor) Extract(ctx context.Context, p *Proposal) (string, error) {
	in, err := json.Marshal(ExtractorInput{Instruction: ExtractorInstruction, Agent: p.Agent, Cluster: p.Cluster,
		LessonText: p.LessonText, Change: p.ConstraintUpdate, Count: p.Count, Total: p.Total, Sources: p.Sources})
	if err != nil {
		return "", err
	}
	timeout := x.Timeout
	if timeout <= 0 {
		timeout = DefaultExtractorTimeout
	}
	fail := func(err error, stderr string, timedOut bool) (string, error) {
		return "", &ExtractorError{Argv: x.Argv, Err: err, Stderr: stderr, TimedOut: timedOut}
	}
	res, err := helpercmd.Run(ctx, helpercmd.Cmd{Argv: x.Argv, Dir: x.Dir, Env: x.Env,
		Stdin: bytes.NewReader(append(in, '\n')), Timeout: timeout, Grace: x.Grace, MaxStdout: maxExtractorRead})
	if err != nil {
		return fail(err, "", false)
	}

	red := x.Redactor
	errLines := strings.Split(strings.TrimSpace(red.Redact(res.Stderr)), "\n")
	lastErr := oneLine(stripControl(errLines[len(errLines)-1]), 200)
	switch {
	case res.TimedOut:
		return fail(fmt.Errorf("%w after %s", ErrExtractorTimedOut, timeout), lastErr, true)
	case res.Overflow:
		// What it printed so far is used.
	case res.Err != nil:
		return fail(res.Err, lastErr, false)
	}
	text := feedback.CleanLearning(red.Redact(stripControl(res.Stdout)))
	if text == "" {
		return fail(ErrExtractorNoOutput, lastErr, false)
	}
	return text, nil
}

// stripControl removes terminal escapes and control characters but
// newlines and tabs.
func stripControl(s string) string {
	s = ansiStrip(s)
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return -1
		}
		return r
	}, s)
}

func ansiStrip(s string) string { return classify.StripANSI(s) }
