package classify

import (
	"bufio"
	"bytes"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The corpus: testdata/outputs/NAME.txt is what a real tool printed,
// NAME.meta how testdata/capture.sh made it and what it shows (see the
// harness's header). Captures are kept apart into two sets by a fixed
// rule on the name, so that no one picks which outputs the rules are
// measured on:
//
//   - the 49 captures the rules were written from before the corpus was
//     split (legacyCaptures) are always "train";
//   - any other capture is "held-out" when the FNV-1a 32-bit hash of its
//     name is divisible by 3, and "train" otherwise.
//
// Rules are written against the train set and measured on the held-out
// set (TestScores).

const corpusDir = "testdata/outputs"

var legacyCaptures = strings.Fields(`bash-command-not-found bash-unbound-variable
	cargo-bad-manifest clippy-len-zero curl-refused eslint-errors flake8-errors
	go-dial-refused go-env-not-set go-exec-not-found go-gopath-missing
	go-missing-module go-no-module go-no-required-module go-open-missing-file
	go-port-in-use go-test-fail go-type-error go-vet gofmt-l
	javac-incompatible-types javac-package-missing jest-fail make-no-rule
	mypy-arg-type node-assert node-cannot-find-module node-eaddrinuse
	node-econnrefused node-enoent node-env-missing node-env-var-not-set
	npm-missing-script plain-fail psql-refused pytest-assert python-assert
	python-conn-refused python-env-keyerror python-file-not-found
	python-module-not-found python-port-in-use python-type-error
	rust-mismatched-types rust-test-fail rust-unresolved-crate
	sh-command-not-found tsc-type-error vitest-fail`)

// setOf returns the set a capture belongs to: "train" or "held-out".
func setOf(name string) string {
	for _, l := range legacyCaptures {
		if l == name {
			return "train"
		}
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	if h.Sum32()%3 == 0 {
		return "held-out"
	}
	return "train"
}

// A capture is one output of the corpus with its sidecar.
type capture struct {
	name   string
	set    string
	output string
	meta   map[string]string
	want   Expectation
}

func loadCorpus(t testing.TB) []capture {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus in %s: %v", corpusDir, err)
	}
	var cs []capture
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		out, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		mb, err := os.ReadFile(strings.TrimSuffix(f, ".txt") + ".meta")
		if err != nil {
			t.Fatalf("%s: no sidecar: %v", name, err)
		}
		want, err := ParseExpectation(bytes.NewReader(mb))
		if err != nil {
			t.Fatalf("%s.meta: %v", name, err)
		}
		meta := map[string]string{}
		sc := bufio.NewScanner(bytes.NewReader(mb))
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok {
				meta[k] = strings.TrimSpace(v)
			}
		}
		cs = append(cs, capture{name: name, set: setOf(name), output: string(out), meta: meta, want: want})
	}
	return cs
}

// TestCorpusIsWellFormed: every output has its sidecar with the command,
// the tool's version and its exit status (0 for a few clients, redis-cli
// among them, that print an error and exit 0), expectations name only known tags, and the
// corpus is at least three times the 49 outputs it started from.
func TestCorpusIsWellFormed(t *testing.T) {
	cs := loadCorpus(t)
	if len(cs) < 3*len(legacyCaptures) {
		t.Errorf("%d captures, want at least %d", len(cs), 3*len(legacyCaptures))
	}
	known := map[string]bool{}
	for _, tag := range []string{MissingEnvVar, MissingDependency, TypeError, LintError, TestAssertionFailed, BuildConfigError, PortInUse, DBConnectionFailed} {
		known[tag] = true
	}
	metas, _ := filepath.Glob(filepath.Join(corpusDir, "*.meta"))
	if len(metas) != len(cs) {
		t.Errorf("%d sidecars for %d outputs", len(metas), len(cs))
	}
	sets := map[string]int{}
	for _, c := range cs {
		sets[c.set]++
		for _, k := range []string{"command", "version", "exit"} {
			if c.meta[k] == "" {
				t.Errorf("%s.meta: no %s", c.name, k)
			}
		}
		if !c.want.HasChecks {
			t.Errorf("%s.meta: no checks: line", c.name)
		}
		for _, tag := range c.want.Tags {
			if !known[tag] {
				t.Errorf("%s.meta: unknown tag %q", c.name, tag)
			}
		}
		if strings.TrimSpace(c.output) == "" && len(c.want.Tags) > 0 {
			t.Errorf("%s: empty output cannot show a tag", c.name)
		}
	}
	if sets["held-out"] < len(cs)/5 {
		t.Errorf("held-out set has %d of %d captures", sets["held-out"], len(cs))
	}
}
