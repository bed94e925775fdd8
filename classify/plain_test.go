package classify

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPlain(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "no escape is returned as is", in: "FAIL\texample.com/m\t0.01s\n", want: "FAIL\texample.com/m\t0.01s\n"},
		{name: "SGR colours", in: "\x1b[31mFAIL\x1b[0m x\n", want: "FAIL x\n"},
		{name: "256 colours and bold", in: "\x1b[1m\x1b[38;5;9merror[E0308]\x1b[0m: mismatched types", want: "error[E0308]: mismatched types"},
		{name: "erase line and cursor moves", in: "\x1b[2K\x1b[1G\x1b[1Aline\x1b[?25l\n", want: "line\n"},
		{name: "OSC 8 hyperlink ended by ST", in: "see \x1b]8;;https://x.dev/e\x1b\\the docs\x1b]8;;\x1b\\.\n", want: "see the docs.\n"},
		{name: "OSC title ended by BEL", in: "\x1b]0;jest\x07PASS\n", want: "PASS\n"},
		{name: "charset selection", in: "\x1b(Bok\x1b=\n", want: "ok\n"},
		{name: "CRLF line ends", in: "a\r\nb\r\n", want: "a\nb\n"},
		{name: "a rewritten line keeps its last text", in: "10%\r50%\r\x1b[Kdone\nnext", want: "done\nnext"},
		{name: "a line rewritten to nothing", in: "spinner\r\nok\n", want: "spinner\nok\n"},
		{name: "no final newline", in: "\x1b[31mx\x1b[0m", want: "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Plain(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Plain(%q) (-want +got):\n%s", tt.in, diff)
			}
			if strings.Count(got, "\n") != strings.Count(tt.in, "\n") {
				t.Errorf("Plain(%q) = %q changed the number of lines", tt.in, got)
			}
		})
	}
}

// TestColouredOutputReadsAsPlain: real output captured with colours on
// (FORCE_COLOR, --color=always) or on a pseudo-terminal (script(1): escape
// sequences, "\r\n", lines rewritten by a spinner) gives the signals and
// checks of the same case captured without colour.
func TestColouredOutputReadsAsPlain(t *testing.T) {
	tests := []struct{ coloured, plain string }{
		{"color-jest-fail", "jest-fail"},
		{"color-pty-jest-fail", "jest-fail"},
		{"color-vitest-fail", "vitest-fail"},
		{"color-pytest-fail", "pytest-assert"},
		{"color-rust-mismatched-types", "rust-mismatched-types"},
		{"color-rust-test-fail", "rust-test-fail"},
		{"color-tsc-pretty", "tsc-type-error"},
		{"color-pty-bash-unbound-variable", "bash-unbound-variable"},
	}
	c := New(nil)
	type view struct {
		Tags    []string
		Signals []Signal
		Checks  any
	}
	for _, tt := range tests {
		t.Run(tt.coloured, func(t *testing.T) {
			out := readOutput(t, tt.coloured)
			if !strings.ContainsAny(out, "\x1b\r") {
				t.Fatalf("%s has neither an escape sequence nor a carriage return", tt.coloured)
			}
			col, pl := c.Classify(out), c.Classify(readOutput(t, tt.plain))
			if diff := cmp.Diff(view{pl.Tags, pl.Signals, pl.Checks}, view{col.Tags, col.Signals, col.Checks}); diff != "" {
				t.Errorf("(-%s +%s):\n%s", tt.plain, tt.coloured, diff)
			}
		})
	}
}

// TestColourIsNotEvidence: go test's output coloured as test wrappers
// colour it (gotestsum, richgo: "\x1b[31mFAIL\x1b[0m") reads exactly as
// the real uncoloured output, FirstError and signals included; so does the
// whole corpus, whose coloured captures leave no escape in what is kept.
func TestColourIsNotEvidence(t *testing.T) {
	c := New(nil)
	for _, name := range []string{"go-test-fail", "go-test-fail-verbose", "go-env-not-set"} {
		plain := readOutput(t, name)
		coloured := plain
		for _, w := range []string{"--- FAIL", "FAIL", "ok  ", "=== RUN"} {
			coloured = strings.ReplaceAll(coloured, w, "\x1b[31m"+w+"\x1b[0m")
		}
		if diff := cmp.Diff(c.Classify(plain), c.Classify(coloured)); diff != "" {
			t.Errorf("%s (-plain +coloured):\n%s", name, diff)
		}
		if diff := cmp.Diff(c.Explain(plain), c.Explain(coloured)); diff != "" {
			t.Errorf("%s: Explain (-plain +coloured):\n%s", name, diff)
		}
	}
	for _, cp := range loadCorpus(t) {
		res := c.Classify(cp.output)
		if strings.ContainsAny(res.FirstError, "\x1b\r") {
			t.Errorf("%s: first error %q", cp.name, res.FirstError)
		}
		for _, s := range res.Signals {
			if strings.ContainsAny(s.Match, "\x1b\r") {
				t.Errorf("%s: signal %s quotes %q", cp.name, s.Rule, s.Match)
			}
		}
	}
}

// TestSignalsAreDistinct: a rule matching the same text several times
// (Maven repeating a resolution error per module, pgx per attempt) is one
// signal, and one line in Explain; its distinct texts are all kept.
func TestSignalsAreDistinct(t *testing.T) {
	tests := []struct {
		name    string
		rule    string
		matches []string
	}{
		{name: "mvn-registry-unreachable", rule: "maven.resolution",
			matches: []string{"or one of its dependencies could not be resolved", "Failed to read artifact descriptor for"}},
		{name: "go-pgx-refused", rule: "pgx.dial", matches: []string{"127.0.0.1:5432 (127.0.0.1): dial error:"}},
		{name: "go-pgx-refused", rule: "go.dial-refused", matches: []string{"dial tcp 127.0.0.1:5432: connect: connection refused"}},
		{name: "junit5-fail", rule: "junit.failure",
			matches: []string{"expected: <true> but was: <false>", "expected: <5> but was: <-1>", "AssertionFailedError"}},
		{name: "node-mysql2-access-denied", rule: "mysql.access-denied",
			matches: []string{"Access denied for user 'app'@'127.0.0.1' (using password: YES)"}},
	}
	c := New(nil)
	for _, tt := range tests {
		t.Run(tt.name+"/"+tt.rule, func(t *testing.T) {
			out := readOutput(t, tt.name)
			if n := strings.Count(out, tt.matches[0]); n < 2 {
				t.Fatalf("the output holds %q %d time(s); the case needs a repeat", tt.matches[0], n)
			}
			var got, explained []string
			for _, s := range c.Classify(out).Signals {
				if s.Rule == tt.rule {
					got = append(got, s.Match)
				}
			}
			for _, m := range c.Explain(out).Matches {
				if m.Rule == tt.rule {
					explained = append(explained, m.Match)
				}
			}
			if diff := cmp.Diff(tt.matches, got); diff != "" {
				t.Errorf("signals (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.matches, explained); diff != "" {
				t.Errorf("Explain (-want +got):\n%s", diff)
			}
		})
	}
	type key struct{ rule, match string }
	for _, cp := range loadCorpus(t) {
		seen := map[key]bool{}
		for _, s := range c.Classify(cp.output).Signals {
			if k := (key{s.Rule, s.Match}); seen[k] {
				t.Errorf("%s: %s quotes %q twice", cp.name, s.Rule, s.Match)
			} else {
				seen[k] = true
			}
		}
	}
}

// TestRepeatedSignalIsNewOnce: with a baseline, a text the passing run
// printed once and the failing run twice is one signal, and it is new
// (one of its occurrences is).
func TestRepeatedSignalIsNewOnce(t *testing.T) {
	line := "dial tcp 127.0.0.1:5432: connect: connection refused\n"
	pass := "retrying\n" + line + "connected\n"
	fail := "retrying\n" + line + "retrying\n" + line + "FAIL\n"
	res := New(nil).ClassifyWithBaseline(fail, pass)
	want := []Signal{{Source: "regex", Rule: "go.dial-refused", Tag: DBConnectionFailed, Match: strings.TrimSpace(line), New: true}}
	if diff := cmp.Diff(want, res.Signals); diff != "" {
		t.Errorf("signals (-want +got):\n%s", diff)
	}
}
