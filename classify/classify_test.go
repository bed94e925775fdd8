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

// Every file in testdata/outputs is real output of a tool (capture.sh made
// it); each must be classified as the table says, and every file must be
// in the table.
var cases = map[string]struct {
	tags   []string
	checks []preflight.Check
}{
	"go-missing-module":        {[]string{MissingDependency}, nil},
	"go-no-required-module":    {[]string{MissingDependency}, nil},
	"go-type-error":            {[]string{TypeError}, nil},
	"go-vet":                   {[]string{LintError}, nil},
	"go-test-fail":             {[]string{TestAssertionFailed}, nil},
	"go-env-not-set":           {[]string{MissingEnvVar, TestAssertionFailed}, []preflight.Check{env("DATABASE_URL")}},
	"go-dial-refused":          {[]string{DBConnectionFailed}, []preflight.Check{addr("127.0.0.1:5432")}},
	"go-port-in-use":           {[]string{PortInUse}, []preflight.Check{port(18080)}},
	"go-open-missing-file":     {[]string{BuildConfigError}, []preflight.Check{file("config/app.yaml")}},
	"go-no-module":             {[]string{BuildConfigError}, nil},
	"gofmt-l":                  {[]string{LintError}, nil},
	"python-module-not-found":  {[]string{MissingDependency}, nil},
	"python-env-keyerror":      {[]string{MissingEnvVar}, []preflight.Check{env("DATABASE_URL")}},
	"python-file-not-found":    {[]string{BuildConfigError}, []preflight.Check{file("config/app.yaml")}},
	"python-type-error":        {[]string{TypeError}, nil},
	"python-assert":            {[]string{TestAssertionFailed}, nil},
	"python-port-in-use":       {[]string{PortInUse}, nil},
	"python-conn-refused":      {nil, nil}, // no address, no database named: nothing to say
	"pytest-assert":            {[]string{TestAssertionFailed}, nil},
	"mypy-arg-type":            {[]string{TypeError}, nil},
	"flake8-errors":            {[]string{LintError}, nil},
	"tsc-type-error":           {[]string{TypeError}, nil},
	"eslint-errors":            {[]string{LintError}, nil},
	"jest-fail":                {[]string{TestAssertionFailed}, nil},
	"vitest-fail":              {[]string{TestAssertionFailed}, nil},
	"npm-missing-script":       {[]string{BuildConfigError}, nil},
	"go-exec-not-found":        {[]string{MissingDependency}, []preflight.Check{cmdc("protoc-missing")}},
	"cargo-bad-manifest":       {[]string{BuildConfigError}, nil},
	"node-enoent":              {[]string{BuildConfigError}, []preflight.Check{file("config/app.json")}},
	"node-env-var-not-set":     {[]string{MissingEnvVar}, []preflight.Check{env("REDIS_URL")}},
	"go-gopath-missing":        {[]string{MissingDependency}, nil},
	"clippy-len-zero":          {[]string{LintError}, nil},
	"node-cannot-find-module":  {[]string{MissingDependency}, nil},
	"node-eaddrinuse":          {[]string{PortInUse}, []preflight.Check{port(18082)}},
	"node-econnrefused":        {[]string{DBConnectionFailed}, []preflight.Check{addr("127.0.0.1:5432")}},
	"node-assert":              {[]string{TestAssertionFailed}, nil},
	"node-env-missing":         {[]string{MissingEnvVar}, []preflight.Check{env("API_TOKEN")}},
	"sh-command-not-found":     {[]string{MissingDependency}, []preflight.Check{cmdc("terraform-missing-cli")}},
	"bash-command-not-found":   {[]string{MissingDependency}, []preflight.Check{cmdc("kubectl-missing")}},
	"bash-unbound-variable":    {[]string{MissingEnvVar}, []preflight.Check{env("DEPLOY_TARGET")}},
	"make-no-rule":             {[]string{BuildConfigError}, nil},
	"rust-mismatched-types":    {[]string{TypeError}, nil},
	"rust-test-fail":           {[]string{TestAssertionFailed}, nil},
	"rust-unresolved-crate":    {[]string{MissingDependency}, nil},
	"javac-incompatible-types": {[]string{TypeError}, nil},
	"javac-package-missing":    {[]string{MissingDependency, TypeError}, nil},
	"psql-refused":             {[]string{DBConnectionFailed}, []preflight.Check{addr("127.0.0.1:5432")}},
	"plain-fail":               {nil, nil}, // FAIL, HTTP, JSON are words, not variables
	"curl-refused":             {nil, nil}, // port 9 is no database
}

func TestRealOutputs(t *testing.T) {
	files, _ := filepath.Glob("testdata/outputs/*.txt")
	if len(files) != len(cases) {
		t.Errorf("%d outputs, %d cases: every captured output needs a case", len(files), len(cases))
	}
	c := New(nil)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		t.Run(name, func(t *testing.T) {
			want, ok := cases[name]
			if !ok {
				t.Fatal("no case for this output")
			}
			b, _ := os.ReadFile(f)
			res := c.Classify(string(b))
			if diff := cmp.Diff(want.tags, res.Tags, cmpEmpty); diff != "" {
				t.Errorf("tags (-want +got):\n%s\nsignals: %+v", diff, res.Signals)
			}
			if diff := cmp.Diff(want.checks, res.Checks, cmpEmptyChecks); diff != "" {
				t.Errorf("checks (-want +got):\n%s", diff)
			}
			if len(want.tags) == 0 && (res.Confidence != 0 || len(res.Signals) != 0) {
				t.Errorf("an unrecognised failure got confidence %v, signals %v", res.Confidence, res.Signals)
			}
			if len(want.tags) > 0 && (res.Confidence <= 0 || res.Confidence > 1) {
				t.Errorf("confidence %v", res.Confidence)
			}
			for _, s := range res.Signals {
				if !strings.Contains(string(b), strings.TrimSuffix(s.Match, "…")) {
					t.Errorf("signal %s quotes %q, which is not in the output", s.Rule, s.Match)
				}
			}
		})
	}
}

// Every built-in rule is exercised by at least one real output, or is
// listed here with the reason it has none yet.
var untested = map[string]string{
	"golangci.linter":      "golangci-lint is not installed here",
	"junit.failure":        "maven cannot fetch JUnit here (offline)",
	"postgres.auth":        "no PostgreSQL server here",
	"mysql.cannot-connect": "no MySQL client here", "redis.cannot-connect": "no Redis client here",
}

func TestEveryRuleHasRealOutput(t *testing.T) {
	hit := map[string]bool{}
	c := New(nil)
	files, _ := filepath.Glob("testdata/outputs/*.txt")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, s := range c.Classify(string(b)).Signals {
			hit[s.Rule] = true
		}
	}
	ids := map[string]bool{}
	for _, r := range Builtin {
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
	res := c.Classify("error: vault is sealed\n--- FAIL: TestSecrets (0.00s)\n")
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

func TestFirstErrorIsNormalised(t *testing.T) {
	a := FirstError("2026/11/22 04:48:47 dial tcp 127.0.0.1:5432: connect: connection refused\n")
	b := FirstError("2026/11/23 09:00:01 dial tcp 127.0.0.1:5432: connect: connection refused\n")
	if a != b || a != "dial tcp 127.0.0.1:5432: connect: connection refused" {
		t.Errorf("%q vs %q", a, b)
	}
	if FirstError("ok\nall good\n") != "" {
		t.Error("a line with no error word is not an error")
	}
}

var cmpEmpty = cmp.Transformer("nilToEmpty", func(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
})

var cmpEmptyChecks = cmp.Transformer("nilToEmptyChecks", func(s []preflight.Check) []preflight.Check {
	if s == nil {
		return []preflight.Check{}
	}
	return s
})

// FuzzClassify feeds arbitrary output: the classifier never panics, every
// check it extracts is valid, and every signal quotes the input.
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
	})
}
