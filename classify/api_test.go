package classify

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/orket/orket/config"
	"github.com/orket/orket/preflight"
)

func readOutput(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(corpusDir, name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestExplain: on real outputs, which rule matched which line, and which
// rules nearly matched and why.
func TestExplain(t *testing.T) {
	type at struct {
		Rule   string
		Line   int
		Reason string // for near misses: the reason's first words
	}
	tests := []struct {
		name    string
		matches []at
		near    []at // only the near misses listed here are compared
	}{
		{name: "psql-auth-failed",
			matches: []at{{Rule: "postgres.connection", Line: 1}, {Rule: "postgres.auth", Line: 1}}},
		{name: "go-test-fail",
			matches: []at{{Rule: "go.test.fail", Line: 2}}},
		{name: "go-test-http-refused",
			near: []at{{Rule: "go.test.fail", Line: 2, Reason: "every match was rejected"}}},
		{name: "go-test-race",
			near: []at{{Rule: "go.test.fail", Line: 5, Reason: "the pattern did not match"}}},
		{name: "node-fetch-refused",
			near: []at{{Rule: "python.type-error", Line: 5, Reason: "the output lacks the context"}}},
		{name: "pg-isready-refused",
			matches: []at{{Rule: "pg_isready.no-response", Line: 1}}},
	}
	c := New(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := readOutput(t, tt.name)
			e := c.Explain(out)
			var got []at
			for _, m := range e.Matches {
				got = append(got, at{Rule: m.Rule, Line: m.Line})
				if line := strings.Split(out, "\n")[m.Line-1]; !strings.Contains(line, strings.TrimSuffix(strings.SplitN(m.Match, "\n", 2)[0], "…")) {
					t.Errorf("%s: line %d %q does not hold the match %q", m.Rule, m.Line, line, m.Match)
				}
			}
			if diff := cmp.Diff(tt.matches, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("matches (-want +got):\n%s", diff)
			}
			for _, w := range tt.near {
				found := false
				for _, n := range e.NearMisses {
					if n.Rule == w.Rule {
						found = true
						if n.Line != w.Line || !strings.HasPrefix(n.Reason, w.Reason) {
							t.Errorf("near miss %s: line %d, reason %q; want line %d, reason %q...", n.Rule, n.Line, n.Reason, w.Line, w.Reason)
						}
					}
				}
				if !found {
					t.Errorf("no near miss for %s; got %+v", w.Rule, e.NearMisses)
				}
			}
			if diff := cmp.Diff(c.Classify(out), e.Result); diff != "" {
				t.Errorf("Explain's result differs from Classify's (-Classify +Explain):\n%s", diff)
			}
			if !strings.Contains(e.String(), "tags: ") {
				t.Errorf("String() = %q", e.String())
			}
		})
	}
}

// TestNearMissesAreDistinctive: a near miss by anchor names a literal of
// at least minNearMiss characters that is on the line it points at.
func TestNearMissesAreDistinctive(t *testing.T) {
	c := New(nil)
	for _, cp := range loadCorpus(t) {
		lines := strings.Split(Plain(cp.output), "\n")
		for _, n := range c.Explain(cp.output).NearMisses {
			if n.Anchor == "" {
				continue
			}
			if len(n.Anchor) < minNearMiss || !strings.Contains(strings.ToLower(lines[n.Line-1]), n.Anchor) {
				t.Errorf("%s: near miss %s at line %d (%q) by anchor %q", cp.name, n.Rule, n.Line, lines[n.Line-1], n.Anchor)
			}
		}
	}
}

// TestTestDir: a directory of saved logs with expectations, as a user
// keeps them for their own rules.
func TestTestDir(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("auth.log", readOutput(t, "psql-auth-failed"))
	write("auth.expect", "# the password was wrong\ntags: db_connection_failed\n")
	write("refused.log", readOutput(t, "psql-refused"))
	write("refused.expect", "tags: db_connection_failed\nchecks: tcp_reachable:127.0.0.1:5432\n")
	write("panic.log", readOutput(t, "go-test-panic"))
	write("panic.expect", "tags: none\n")
	write("wrong.log", readOutput(t, "go-test-race"))
	write("wrong.expect", "tags: test_assertion_failed\n")
	write("orphan.log", "some output\n")
	write("notes.md", "not a log\n")

	rep, err := New(nil).TestDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name           string
		Pass           bool
		Missing, Extra []string
		HasErr         bool
	}
	var got []row
	for _, f := range rep.Files {
		got = append(got, row{f.Name, f.Pass, f.Missing, f.Extra, f.Err != ""})
	}
	want := []row{
		{Name: "auth.log", Pass: true},
		{Name: "orphan.log", HasErr: true},
		{Name: "panic.log", Pass: true},
		{Name: "refused.log", Pass: true},
		{Name: "wrong.log", Missing: []string{TestAssertionFailed}},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if rep.Passed != 3 || rep.Failed != 2 {
		t.Errorf("passed %d, failed %d; want 3, 2", rep.Passed, rep.Failed)
	}
	if rep.Scores.Outputs != 4 || rep.Scores.ExactMatch != 0.75 || rep.Scores.ChecksFound != 1 {
		t.Errorf("scores %+v", rep.Scores)
	}
	if s := rep.String(); !strings.Contains(s, "FAIL wrong.log: want [test_assertion_failed], got []") || !strings.Contains(s, "3 passed, 2 failed") {
		t.Errorf("String():\n%s", s)
	}

	if _, err := New(nil).TestDir(t.TempDir()); err == nil {
		t.Error("an empty directory is an error")
	}
}

// TestTestDirOnTheCorpus: the corpus itself is a directory TestDir reads,
// and it scores it as TestScores does.
func TestTestDirOnTheCorpus(t *testing.T) {
	c := New(nil)
	rep, err := c.TestDir(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	var sc Scorer
	for _, cp := range loadCorpus(t) {
		sc.Add(cp.want, c.Classify(cp.output))
	}
	if diff := cmp.Diff(sc.Scores(), rep.Scores); diff != "" {
		t.Errorf("scores (-corpus +TestDir):\n%s", diff)
	}
}

func TestParseExpectation(t *testing.T) {
	tests := []struct {
		in      string
		want    Expectation
		wantErr bool
	}{
		{in: "tags: a, b\n", want: Expectation{Tags: []string{"a", "b"}}},
		{in: "command: x\ntags: \nchecks: \n", want: Expectation{Tags: []string{}, Checks: nil, HasChecks: true}},
		{in: "tags: none\nchecks: port_free:8080, tcp_reachable:127.0.0.1:5432\n",
			want: Expectation{Tags: []string{}, Checks: []preflight.Check{port(8080), addr("127.0.0.1:5432")}, HasChecks: true}},
		{in: "checks: env_var_present:X\n", wantErr: true},
		{in: "tags: a\nchecks: port_free:http\n", wantErr: true},
		{in: "tags: a\nchecks: nonsense\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseExpectation(strings.NewReader(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			if tt.wantErr {
				return
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestFormatCheck: a check written as ParseCheck reads it, for every type.
func TestFormatCheck(t *testing.T) {
	for _, tt := range []struct {
		ch   preflight.Check
		want string
	}{
		{env("API_TOKEN"), "env_var_present:API_TOKEN"},
		{cmdc("psql"), "command_exists:psql"},
		{file("config/app.yaml"), "file_exists:config/app.yaml"},
		{port(8080), "port_free:8080"},
		{addr("127.0.0.1:5432"), "tcp_reachable:127.0.0.1:5432"},
	} {
		got := FormatCheck(tt.ch)
		if got != tt.want {
			t.Errorf("FormatCheck(%+v) = %q, want %q", tt.ch, got, tt.want)
		}
		back, err := ParseCheck(got)
		if err != nil || back != tt.ch {
			t.Errorf("ParseCheck(%q) = %+v, %v; want %+v", got, back, err, tt.ch)
		}
	}
}

// TestClassifyWithBaseline: real pairs of one step's passing and failing
// output (testdata/baselines, made by capture.sh).
func TestClassifyWithBaseline(t *testing.T) {
	tests := []struct {
		name    string
		whole   []string // what Classify says of the failing output
		tags    []string // what ClassifyWithBaseline says
		allNew  bool     // every signal on a new line
		noneNew bool     // no signal on a new line
	}{
		// The passing run warned about CACHE_URL too: only the failed
		// assertion is new, and it is the evidence.
		{name: "go-test-env-warning", whole: []string{MissingEnvVar, TestAssertionFailed}, tags: []string{TestAssertionFailed}, allNew: true},
		// The new lines say nothing a rule knows: the whole output is
		// read, and its signal is on an old line.
		{name: "go-run-no-new-evidence", whole: []string{MissingEnvVar}, tags: []string{MissingEnvVar}, noneNew: true},
	}
	c := New(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			read := func(kind string) string {
				b, err := os.ReadFile(filepath.Join("testdata/baselines", tt.name+"."+kind+".txt"))
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
			pass, fail := read("pass"), read("fail")
			if diff := cmp.Diff(tt.whole, c.Classify(fail).Tags); diff != "" {
				t.Errorf("Classify tags (-want +got):\n%s", diff)
			}
			res := c.ClassifyWithBaseline(fail, pass)
			if diff := cmp.Diff(tt.tags, res.Tags); diff != "" {
				t.Errorf("tags (-want +got):\n%s", diff)
			}
			for _, s := range res.Signals {
				if tt.allNew && !s.New || tt.noneNew && s.New {
					t.Errorf("signal %s on %q: new = %v", s.Rule, s.Match, s.New)
				}
			}
			// Without a baseline every line is new, and the result is
			// Classify's with every signal marked new.
			whole := c.Classify(fail)
			for i := range whole.Signals {
				whole.Signals[i].New = true
			}
			if diff := cmp.Diff(whole, c.ClassifyWithBaseline(fail, "")); diff != "" {
				t.Errorf("no baseline (-Classify +WithBaseline):\n%s", diff)
			}
		})
	}
}

func TestNewLines(t *testing.T) {
	pass := "ok  \texample.com/m\t0.003s\nwarning: CACHE_URL is not set\nrun 1 at 2026-11-23T14:00:00Z\n"
	fail := "ok  \texample.com/m\t1.250s\nwarning: CACHE_URL is not set\nrun 2 at 2026-11-24T09:30:00Z\n\n--- FAIL: TestAdd (0.00s)\nwarning: CACHE_URL is not set\n"
	// Durations, timestamps and counts differ; the second warning is one
	// more than the passing run printed.
	if diff := cmp.Diff([]int{4, 5}, NewLines(fail, pass)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// BenchmarkClassifyTail: a 32 KiB tail, the most a lesson keeps, made of
// real outputs. It is the worst case: every tool's output at once, so
// that most rules' anchors are present and their patterns run (a real
// tool's tail of 32 KiB is several times faster). Speed is measured here,
// never asserted by a test.
func BenchmarkClassifyTail(b *testing.B) {
	var sb strings.Builder
	for _, cp := range loadCorpus(b) {
		sb.WriteString(cp.output)
	}
	tail := sb.String()
	tail = tail[len(tail)-32<<10:]
	c := New(nil)
	b.SetBytes(int64(len(tail)))
	for b.Loop() {
		c.Classify(tail)
	}
}

// BenchmarkClassifyCorpus classifies every captured output, one at a
// time, as orket does a failed step's: the cost of a real failure, where
// BenchmarkClassifyTail's mix of many tools is the worst case.
func BenchmarkClassifyCorpus(b *testing.B) {
	cs := loadCorpus(b)
	c := New(nil)
	n := 0
	for _, cp := range cs {
		n += len(cp.output)
	}
	b.SetBytes(int64(n))
	for b.Loop() {
		for _, cp := range cs {
			c.Classify(cp.output)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(len(cs)), "µs/output")
}

// TestExplanationString: what orket classify --explain prints. A user
// rule is marked; a match starting on a blank line (a pattern beginning
// with \s*) is shown on the line of its text.
func TestExplanationString(t *testing.T) {
	user := New([]config.Rule{{ID: "acme.vault-sealed", Tag: MissingEnvVar, Re: regexp.MustCompile(`vault is sealed`),
		Preflight: []preflight.Check{env("VAULT_TOKEN")}}})
	tests := []struct {
		name string
		c    *Classifier
		in   string
		want string
	}{
		{name: "user rule", c: user, in: "fetching\nerror: vault is sealed\n",
			want: `tags: missing_env_var (confidence 0.95)
check: environment variable VAULT_TOKEN is set
first error: error: vault is sealed
matched:
  line 2: acme.vault-sealed (missing_env_var, user rule) matched "vault is sealed"
    error: vault is sealed
`},
		{name: "match after a blank line", c: New(nil), in: "● adds\n\n    Expected: 5\n    Received: -1\n",
			want: `tags: test_assertion_failed (confidence 0.80)
matched:
  line 3: node.assertion (test_assertion_failed) matched "Expected: 5\n    Received:"
    Expected: 5
`},
		{name: "no tag, a near miss", c: New(nil), in: "Get \"http://127.0.0.1:18099/\": dial tcp 127.0.0.1:18099: connect: connection refused\n",
			want: `tags: none (no rule recognises this output)
first error: Get "http://127.0.0.1:18099/": dial tcp 127.0.0.1:18099: connect: connection refused
cause: line 1: Get "http://127.0.0.1:18099/": dial tcp 127.0.0.1:18099: connect: connection refused
looked like:
  line 1: a failed connection, but nothing says it was to a database or cache: no client library, no database word on the line, no well-known database port
    Get "http://127.0.0.1:18099/": dial tcp 127.0.0.1:18099: connect: connection refused
nearly matched:
  line 1: go.dial-refused (db_connection_failed): the pattern did not match, though this line holds ": connect: connection refused"
    Get "http://127.0.0.1:18099/": dial tcp 127.0.0.1:18099: connect: connection refused
  line 1: db.refused (db_connection_failed): the pattern did not match, though this line holds ": connect: connection refused"
    Get "http://127.0.0.1:18099/": dial tcp 127.0.0.1:18099: connect: connection refused
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.c.Explain(tt.in).String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
