package classify

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket/config"
	"github.com/orket/orket/preflight"
)

func env(n string) preflight.Check { return preflight.Check{Type: preflight.EnvVarPresent, Name: n} }
func cmdc(n string) preflight.Check {
	return preflight.Check{Type: preflight.CommandExists, Command: n}
}
func file(p string) preflight.Check { return preflight.Check{Type: preflight.FileExists, Path: p} }
func port(p int) preflight.Check    { return preflight.Check{Type: preflight.PortFree, Port: p} }
func addr(a string) preflight.Check { return preflight.Check{Type: preflight.TCPReachable, Address: a} }

// TestRealOutputs: on every captured output, a result is well formed:
// every signal quotes the output (as a terminal shows it, see Plain), an
// untagged output has no signal and no confidence, a tagged one a
// confidence in (0, 1], every check is valid. What the tags should be is measured by TestScores.
func TestRealOutputs(t *testing.T) {
	c := New(nil)
	for _, cp := range loadCorpus(t) {
		t.Run(cp.name, func(t *testing.T) {
			res := c.Classify(cp.output)
			if len(res.Tags) == 0 && (res.Confidence != 0 || len(res.Signals) != 0 || len(res.Checks) != 0) {
				t.Errorf("an unrecognised failure got confidence %v, signals %v, checks %v", res.Confidence, res.Signals, res.Checks)
			}
			if len(res.Tags) > 0 && (res.Confidence <= 0 || res.Confidence > 1) {
				t.Errorf("confidence %v", res.Confidence)
			}
			for _, s := range res.Signals {
				if !strings.Contains(Plain(cp.output), strings.TrimSuffix(s.Match, "…")) {
					t.Errorf("signal %s quotes %q, which is not in the output", s.Rule, s.Match)
				}
			}
			for _, ch := range res.Checks {
				if err := ch.Validate(); err != nil {
					t.Errorf("check %+v: %v", ch, err)
				}
			}
		})
	}
}

// Every built-in rule is exercised by at least one real output, or is
// listed here with the reason it has none yet.
var untested = map[string]string{}

func TestEveryRuleHasRealOutput(t *testing.T) {
	hit := map[string]bool{}
	c := New(nil)
	for _, cp := range loadCorpus(t) {
		for _, s := range c.ClassifyCommand(cp.output, cp.meta["command"]).Signals {
			hit[s.Rule] = true
		}
	}
	ids := map[string]bool{}
	for _, r := range Builtin() {
		if ids[r.ID] {
			t.Errorf("rule id %s is used twice", r.ID)
		}
		ids[r.ID] = true
		_, excused := untested[r.ID]
		if !hit[r.ID] && !excused {
			t.Errorf("rule %s matches no captured output", r.ID)
		}
		if hit[r.ID] && excused {
			t.Errorf("rule %s is tested now; remove it from untested", r.ID)
		}
	}
}

func TestUpperCaseWordsAreNotVariables(t *testing.T) {
	c := New(nil)
	for _, out := range []string{
		"FAIL\nFAIL\texample.com/m\t0.01s\n",
		"ERROR: HTTP request failed: JSON is not valid\n",
		"WARNING API is not available, URL is not set up\n",
		"TODO is required before release\n",
	} {
		res := c.Classify(out)
		for _, ch := range res.Checks {
			if ch.Type == preflight.EnvVarPresent {
				t.Errorf("%q: took %s for a variable", out, ch.Name)
			}
		}
	}
}

func TestUserRulesComeFirst(t *testing.T) {
	c := New([]config.Rule{{ID: "acme.vault-sealed", Tag: MissingEnvVar, Re: regexp.MustCompile(`vault is sealed`),
		Preflight: []preflight.Check{env("VAULT_TOKEN")}}})
	res := c.Classify("error: vault is sealed\n--- FAIL: TestSecrets (0.00s)\n    secrets_test.go:12: token rejected\n")
	if diff := cmp.Diff([]string{MissingEnvVar, TestAssertionFailed}, res.Tags); diff != "" {
		t.Errorf("tags (-want +got):\n%s", diff)
	}
	if res.Signals[0].Source != "user" || res.Signals[0].Rule != "acme.vault-sealed" {
		t.Errorf("first signal %+v", res.Signals[0])
	}
	if diff := cmp.Diff([]preflight.Check{env("VAULT_TOKEN")}, res.Checks); diff != "" {
		t.Errorf("checks (-want +got):\n%s", diff)
	}
}

// TestFirstError: the line as a person reads it (no log timestamp), and
// the same failure compares equal through Normalize.
func TestFirstError(t *testing.T) {
	a := FirstError("2026/11/22 04:48:47 dial tcp 127.0.0.1:5432: connect: connection refused\n")
	b := FirstError("2026/11/23 09:00:01 dial tcp 127.0.0.1:5432: connect: connection refused\n")
	if a != b || a != "dial tcp 127.0.0.1:5432: connect: connection refused" {
		t.Errorf("%q vs %q", a, b)
	}
	a = FirstError("--- FAIL: TestCleanPath (0.00s)\n")
	b = FirstError("--- FAIL: TestCleanPath (0.31s)\n")
	if a != "--- FAIL: TestCleanPath (0.00s)" || Normalize(a) != Normalize(b) {
		t.Errorf("%q, %q: shown as printed, equal normalised", a, b)
	}
	if FirstError("ok\nall good\n") != "" {
		t.Error("a line with no error word is not an error")
	}
}

// FuzzClassify feeds arbitrary output: the classifier never panics, every
// check it extracts is valid, and Plain keeps every line where it was.
func FuzzClassify(f *testing.F) {
	files, _ := filepath.Glob("testdata/outputs/*.txt")
	for _, file := range files {
		b, _ := os.ReadFile(file)
		f.Add(string(b))
	}
	c := New(nil)
	f.Fuzz(func(t *testing.T, out string) {
		res := c.Classify(out)
		for _, ch := range res.Checks {
			if err := ch.Validate(); err != nil {
				t.Fatalf("invalid check %+v: %v", ch, err)
			}
		}
		if len(res.Tags) == 0 && res.Confidence != 0 {
			t.Fatalf("confidence %v without a tag", res.Confidence)
		}
		if p := Plain(out); strings.Count(p, "\n") != strings.Count(out, "\n") {
			t.Fatalf("Plain changed the number of lines: %q", p)
		}
	})
}

// TestAnchorsChangeNothing: skipping the rules whose anchors are absent
// gives the same results as running every pattern.
func TestAnchorsChangeNothing(t *testing.T) {
	fast, slow := New(nil), New(nil)
	slow.noAnchors = true
	for _, cp := range loadCorpus(t) {
		if diff := cmp.Diff(slow.Classify(cp.output), fast.Classify(cp.output)); diff != "" {
			t.Errorf("%s (-all patterns +anchored):\n%s", cp.name, diff)
		}
	}
}
