package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket"
	"github.com/orket/orket/config"
	"github.com/orket/orket/lessons"
	"github.com/orket/orket/preflight"
	"github.com/orket/orket/verify"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name, got string) {
	t.Helper()
	file := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

// goOutput is what go test printed for a failing test (kept from a real run).
const goOutput = `?   	example.com/greeter	[no test files]
--- FAIL: TestGreeting (0.00s)
    greet_test.go:8: Greeting("Ada") = "Hi Ada", want "Hello, Ada!"
FAIL
FAIL	example.com/greeter/api	0.012s
FAIL
`

func sampleRun() *orket.Record {
	return &orket.Record{
		RunID:   "20261122T040000Z-abc123",
		Code:    orket.EVerifyFailedReverted,
		Error:   "step test failed (exit 1); the change was reverted",
		Request: orket.RecordRequest{EditSource: "command", Instruction: "agent -p 'rename UserID'", Scope: []string{"api"}, Profile: "quick"},
		Plan: orket.Plan{TouchSet: []string{"api/greet.go"}, TouchCount: 1, Measured: true,
			Steps: []orket.PlanStep{{Name: "vet"}, {Name: "web", Skip: "when"}, {Name: "docs", Skip: "skip"}, {Name: "links"}, {Name: "test"}}},
		Steps: []*verify.StepResult{
			{Name: "vet", Status: verify.Passed, Required: true, DurationMS: 412},
			{Name: "web", Status: verify.Skipped, SkipReason: "when", Required: true},
			{Name: "docs", Status: verify.Skipped, SkipReason: "skip", Required: true},
			{Name: "links", Status: verify.Failed, Required: false, ExitCode: 2, DurationMS: 50, OutputTail: "broken link: docs/x.md\n"},
			{Name: "test", Status: verify.Failed, Required: true, ExitCode: 1, DurationMS: 1234, OutputTail: goOutput, Command: "go test ./..."},
		},
	}
}

// replay drives a printer through a run the way orket.Execute does.
func replay(p *runPrinter, res *orket.Record) {
	p.Planned(res)
	p.EditStarted(res)
	p.EditDone(&verify.StepResult{Name: "edit", Status: verify.Passed, DurationMS: 1500})
	p.Touched(res)
	for _, s := range res.Steps {
		if s.Status != verify.Skipped {
			p.StepStarted(config.Step{Name: s.Name, Shell: s.Command})
		}
		p.StepDone(s)
	}
}

func TestHumanOutputGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		tty  bool
		env  map[string]string
	}{
		{"run-plain.txt", false, nil},
		{"run-terminal.txt", true, nil},
		{"run-terminal-nocolor.txt", true, map[string]string{"NO_COLOR": "1"}},
		{"run-ci.txt", true, map[string]string{"CI": "true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			o := &options{stderr: &stderr, stdout: &stderr, getenv: func(k string) string { return tc.env[k] }, stderrTTY: tc.tty}
			o.noColor = tc.env["NO_COLOR"] != ""
			p := newRunPrinter(o)
			fixed := time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)
			p.now = func() time.Time { return fixed }
			p.every = time.Hour
			replay(p, sampleRun())
			golden(t, tc.name, stderr.String())
		})
	}
}

func TestGitHubAnnotationsGolden(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "api"), 0o755)
	os.MkdirAll(filepath.Join(root, "web", "src"), 0o755)
	os.WriteFile(filepath.Join(root, "api", "greet_test.go"), nil, 0o644)
	os.WriteFile(filepath.Join(root, "web", "src", "app.ts"), nil, 0o644)
	res := sampleRun()
	res.Plan.TouchSet = []string{"api/greet.go", "api/greet_test.go"}
	res.Steps = append(res.Steps,
		&verify.StepResult{Name: "vet2", Status: verify.Failed, Required: true, ExitCode: 1,
			OutputTail: "# example.com/greeter/api\n# [example.com/greeter/api]\napi/greet.go:14:2: fmt.Sprintf format %d has arg name of wrong type string\n"},
		&verify.StepResult{Name: "tsc", Status: verify.Failed, Required: true, ExitCode: 2, Dir: "web",
			OutputTail: "src/app.ts(12,5): error TS2322: Type 'string' is not assignable to type 'number'.\n"},
		&verify.StepResult{Name: "plain", Status: verify.Failed, Required: true, ExitCode: 1,
			OutputTail: "connection refused, 100% of retries, a: b\n"},
	)
	res.Barrier = &orket.Barrier{Outside: []string{"main.go"}}
	res.Advisories = []lessons.Advisory{{Title: "Missing environment variable DATABASE_URL", Count: 3, FailedCommand: "go test ./...",
		LastSeen: time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)}}
	res.Preflight = []preflight.Result{{Check: preflight.Check{Type: preflight.EnvVarPresent, Name: "DATABASE_URL"}, Detail: "DATABASE_URL is not set (or empty)", Source: "lesson 7d53bd9a"}}
	var out bytes.Buffer
	writeAnnotations(&out, root, res)
	golden(t, "annotations.txt", out.String())
	var sum bytes.Buffer
	writeSummary(&sum, res)
	golden(t, "step-summary.md", sum.String())
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if !strings.HasPrefix(line, "::error") && !strings.HasPrefix(line, "::warning") {
			t.Errorf("not a workflow command: %q", line)
		}
	}
}
