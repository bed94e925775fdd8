package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/orket/orket/preflight"
)

// Each invalid fixture starts with "# want: LINE: MESSAGE" and
// "# schema: reject|accept" (whether the JSON Schema alone catches it).
var wantLine = regexp.MustCompile(`(?m)^# want: (\d+): (.*)$`)

func TestInvalidFixtures(t *testing.T) {
	files, _ := filepath.Glob("testdata/invalid/*.yaml")
	if len(files) < 20 {
		t.Fatalf("found %d invalid fixtures", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			m := wantLine.FindSubmatch(data)
			if m == nil {
				t.Fatal("fixture has no # want: line")
			}
			line, _ := strconv.Atoi(string(m[1]))
			_, err = Parse(data, "orket.yaml")
			ce, ok := err.(*Error)
			if !ok {
				t.Fatalf("Parse: got %v (%T), want *Error", err, err)
			}
			if ce.File != "orket.yaml" || ce.Line != line {
				t.Errorf("error at %s:%d, want orket.yaml:%d (%v)", ce.File, ce.Line, line, ce)
			}
			if !strings.Contains(ce.Msg, string(m[2])) {
				t.Errorf("message %q does not contain %q", ce.Msg, m[2])
			}
			if ce.Hint == "" {
				t.Errorf("no hint for %q", ce.Msg)
			}
		})
	}
}

func TestValidFixtures(t *testing.T) {
	files, _ := filepath.Glob("testdata/valid/*.yaml")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if _, err := Load(f); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestSpecExample(t *testing.T) {
	c, err := Load("testdata/valid/spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Profile("release")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range r.Steps {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{"vet", "test", "race", "docs-links"}, names); diff != "" {
		t.Errorf("release steps (-want +got):\n%s", diff)
	}
	if r.FailFast || r.Parallel {
		t.Errorf("release: fail_fast %v parallel %v, want false false", r.FailFast, r.Parallel)
	}
	test := r.Steps[1]
	if test.Timeout != 5*time.Minute || test.Env["CGO_ENABLED"] != "0" || !test.Required ||
		!cmp.Equal(test.When, []string{"**/*.go", "go.mod"}) {
		t.Errorf("test step: %+v", test)
	}
	if r.Steps[3].Required {
		t.Error("docs-links: required should be false")
	}
	q, _ := c.Profile("")
	if q.Name != "quick" || !q.FailFast {
		t.Errorf("default profile: %+v", q)
	}
	if c.Lessons.HalfLife != 14*24*time.Hour || c.Lessons.Retention.MaxAge != 90*24*time.Hour ||
		c.Lessons.Tail.MaxBytes != 32768 || c.Lessons.TopK != 3 {
		t.Errorf("lessons: %+v", c.Lessons)
	}
	if len(c.Classify.Rules) != 1 || !c.Classify.Rules[0].Re.MatchString("error: vault is sealed") {
		t.Errorf("rules: %+v", c.Classify.Rules)
	}
	want := []preflight.Check{{Type: "env_var_present", Name: "VAULT_TOKEN"}}
	if diff := cmp.Diff(want, c.Classify.Rules[0].Preflight); diff != "" {
		t.Errorf("rule preflight (-want +got):\n%s", diff)
	}
	if _, err := c.Profile("nightly"); err == nil {
		t.Error("unknown profile resolved")
	}
}

func TestDefaultsWhenOmitted(t *testing.T) {
	c, err := Load("testdata/valid/minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d := Defaults()
	if diff := cmp.Diff(d.Lessons, c.Lessons); diff != "" {
		t.Errorf("lessons (-want +got):\n%s", diff)
	}
	r, _ := c.Profile("")
	if r.Name != "quick" || r.Steps[0].Name != "make test" || !r.FailFast || r.Parallel {
		t.Errorf("resolved: %+v", r)
	}
}

// TestLearningLoopKeys reads the keys of the guardrails and of sync
// (docs/config.md) as written, and their defaults when they are not.
func TestLearningLoopKeys(t *testing.T) {
	c, err := Load("testdata/valid/learning-loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type keys struct {
		MinSamples, MinClusterSize int
		Frequency                  float64
		Extractor                  []string
		ExtractorTimeout           time.Duration
		MaxVersions, SampleSize    int
		Sync, Remote               string
	}
	got := keys{c.Lessons.MinSamples, c.Lessons.MinClusterSize, c.Lessons.FrequencyThreshold, c.Lessons.Extractor,
		c.Lessons.ExtractorTimeout, c.Guardrails.MaxVersions, c.Stats.SampleSize, c.Memory.Sync, c.Memory.Remote}
	want := keys{8, 4, 0.25, []string{"llm", "-m", "small"}, 30 * time.Second, 5, 10, "auto", "team"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	d, err := Load("testdata/valid/minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got = keys{d.Lessons.MinSamples, d.Lessons.MinClusterSize, d.Lessons.FrequencyThreshold, d.Lessons.Extractor,
		d.Lessons.ExtractorTimeout, d.Guardrails.MaxVersions, d.Stats.SampleSize, d.Memory.Sync, d.Memory.Remote}
	want = keys{5, 3, 0.10, nil, time.Minute, 10, 20, "", "origin"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}

func TestArgvAndInheritance(t *testing.T) {
	c, err := Load("testdata/valid/argv.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := c.Profile("")
	if r.Name != "ci" || !r.Parallel || !r.FailFast {
		t.Errorf("ci: %+v", r)
	}
	lint := r.Steps[0]
	if diff := cmp.Diff([]string{"golangci-lint", "run", "./..."}, lint.Argv); diff != "" || lint.Dir != "" {
		t.Errorf("lint argv (-want +got):\n%s dir %q", diff, lint.Dir)
	}
	if lint.Command() != "golangci-lint run ./..." {
		t.Errorf("Command() = %q", lint.Command())
	}
	if r.Steps[1].Env["N"] != "3" || r.Steps[1].Env["GOFLAGS"] != "-count=1" {
		t.Errorf("env: %v", r.Steps[1].Env)
	}
	if !cmp.Equal(c.Scope, []string{"pkg/api"}) {
		t.Errorf("scope: %v", c.Scope)
	}
}

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"14d", 14 * 24 * time.Hour, true},
		{"1d12h", 36 * time.Hour, true},
		{"90s", 90 * time.Second, true},
		{"1.5h", 90 * time.Minute, true},
		{"d", 0, false},
		{"2w", 0, false},
		{"-1d", 0, false},
		{"5 minutes", 0, false},
	} {
		got, err := ParseDuration(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// TestSchema checks the JSON Schema against the loader: it accepts every
// valid fixture and the example of the docs, and rejects every invalid
// fixture the loader rejects for a structural reason.
func TestSchema(t *testing.T) {
	c := jsonschema.NewCompiler()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(Schema)))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource("orket.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("orket.json")
	if err != nil {
		t.Fatal(err)
	}
	validate := func(t *testing.T, f string) error {
		data, _ := os.ReadFile(f)
		var v any
		if err := yaml.Unmarshal(data, &v); err != nil {
			return err
		}
		// Round-trip through JSON so the validator sees JSON types.
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		return sch.Validate(inst)
	}
	valid, _ := filepath.Glob("testdata/valid/*.yaml")
	for _, f := range valid {
		if err := validate(t, f); err != nil {
			t.Errorf("%s: schema rejects a valid file: %v", f, err)
		}
	}
	invalid, _ := filepath.Glob("testdata/invalid/*.yaml")
	for _, f := range invalid {
		data, _ := os.ReadFile(f)
		reject := strings.Contains(string(data), "# schema: reject")
		err := validate(t, f)
		if reject && err == nil {
			t.Errorf("%s: schema accepts an invalid file", f)
		}
		if !reject && err != nil {
			t.Errorf("%s: marked schema: accept, but the schema rejects it: %v", f, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, dir := range []string{"testdata/valid", "testdata/invalid"} {
		files, _ := filepath.Glob(dir + "/*.yaml")
		for _, file := range files {
			data, _ := os.ReadFile(file)
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "orket.yaml")
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		// A configuration that loads resolves every profile it names.
		for _, name := range c.Verify.Order {
			r, err := c.Profile(name)
			if err != nil || len(r.Steps) == 0 {
				t.Fatalf("profile %q: %v", name, err)
			}
		}
		if _, err := c.Profile(""); err != nil {
			t.Fatalf("default profile: %v", err)
		}
	})
}
