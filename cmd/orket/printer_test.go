package main

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/orket/orket"
	"github.com/orket/orket/config"
	"github.com/orket/orket/internal/inert"
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
			o := &options{stderr: inert.NewWriter(&stderr), stdout: inert.NewWriter(&stderr), getenv: func(k string) string { return tc.env[k] }, stderrTTY: tc.tty}
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

// TestGitHubAnnotationsGolden: the workflow commands and the step summary
// of a failed run. Besides the sample run's steps, real go test and go vet
// output, produced here in Go modules under the repository: failed
// assertions annotated at their test file (found through the package go
// test names and the step's module, none of them touched), a table test's
// failures on one line as one annotation, a verbose run's passing test
// not annotated, a panic at its frame in the repository, a compile error
// that vet and the build both print annotated once, and a test whose file
// cannot be found annotated with its assertion rather than the last lines.
func TestGitHubAnnotationsGolden(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/greeter\n\ngo 1.22\n")
	write("api/greet_test.go", "")
	write("web/src/app.ts", "")
	res := sampleRun()
	res.Plan.TouchSet = []string{"api/greet.go", "web/src/app.ts"}
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
	var sum bytes.Buffer
	writeSummary(&sum, res)
	golden(t, "step-summary.md", sum.String())

	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the go command is needed for real go test output: %v", err)
	}
	write("svc/go.mod", "module example.com/svc\n\ngo 1.22\n")
	write("svc/internal/calc/calc.go", "package calc\n\n// Add adds.\nfunc Add(a, b int) int { return a - b }\n")
	write("svc/internal/calc/calc_test.go", `package calc

import "testing"

func TestAdd(t *testing.T) {
	for _, tt := range []struct{ a, b, want int }{{1, 1, 2}, {2, 3, 5}, {0, 0, 0}} {
		if got := Add(tt.a, tt.b); got != tt.want {
			t.Errorf("Add(%d, %d):\n got: %d\nwant: %d", tt.a, tt.b, got, tt.want)
		}
	}
}
`)
	write("svc/panics/p_test.go", "package panics\n\nimport \"testing\"\n\nfunc TestIndex(t *testing.T) {\n\ts := []int{1, 2, 3}\n\ti := len(s) + 2\n\t_ = s[i]\n}\n")
	write("svc/util/util_test.go", "package util\n\nimport \"testing\"\n\nfunc TestOK(t *testing.T) { t.Log(\"util is fine\") }\n")
	write("svc/greet/greet.go", "package greet\n\n// Hello greets.\nfunc Hello(n string) string { return \"Hi \" + n }\n")
	write("svc/greet/greet_test.go", `package greet

import "testing"

func TestSetup(t *testing.T) {
	t.Log("cache disabled: CACHE_URL is not set")
}

func TestHello(t *testing.T) {
	if got := Hello("Ada"); got != "Hello, Ada!" {
		t.Errorf("Hello(%q) = %q, want %q", "Ada", got, "Hello, Ada!")
	}
}
`)
	write("tools/go.mod", "module example.com/tools\n\ngo 1.22\n")
	write("tools/gen.go", "package tools\n\nfunc Gen(n string) string { return Prefix + n }\n")
	write("tools/gen_test.go", "package tools\n\nimport \"testing\"\n\nfunc TestGen(t *testing.T) { _ = Gen(\"x\") }\n")
	real := func(name, dir, command string) *verify.StepResult {
		t.Helper()
		cmd := exec.Command("sh", "-c", command)
		cmd.Dir = filepath.Join(root, dir)
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off", "GOTOOLCHAIN=local", "NO_COLOR=1")
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("%s: %s passed:\n%s", name, command, out)
		}
		return &verify.StepResult{Name: name, Command: command, Dir: dir, Status: verify.Failed, Required: true,
			ExitCode: cmd.ProcessState.ExitCode(), OutputTail: string(out)}
	}
	b, err := os.ReadFile("../../classify/testdata/outputs/go-test-fail.txt")
	if err != nil {
		t.Fatal(err)
	}
	res.Steps = append(res.Steps,
		real("unit", "svc", "go test -count=1 ./..."),
		real("unit-v", "svc", "go test -count=1 -v ./greet"),
		real("check", "tools", "go vet ./...; go test -count=1 ./..."),
		real("again", "tools", "go build ./..."),
		// go test's output of another module (example.com/m): its
		// m_test.go is nowhere here.
		&verify.StepResult{Name: "elsewhere", Status: verify.Failed, Required: true, ExitCode: 1, OutputTail: string(b)},
	)
	var out bytes.Buffer
	writeAnnotations(&out, root, res)
	golden(t, "annotations.txt", out.String())
	locations := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if !strings.HasPrefix(line, "::error") && !strings.HasPrefix(line, "::warning") {
			t.Errorf("not a workflow command: %q", line)
		}
		if i := strings.Index(line, ",title="); strings.Contains(line, " file=") && i > 0 {
			locations[line[:i]]++
		}
	}
	for loc, n := range locations {
		if n > 1 {
			t.Errorf("%s is annotated %d times", loc, n)
		}
	}
	if strings.Contains(out.String(), "CACHE_URL") {
		t.Error("the log line of a test that passed (go test -v) is annotated")
	}
}
