package config

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseTOML(t *testing.T) {
	got := parseTOML(`# a comment with [tool.ruff]
title = "a # not a comment" # a comment
[project]
requires-python = '>=3.10'
dependencies = [
  "a[extra]>=1", # comment ] inside
  'b',
]
"quoted.key" = 1
[tool.ruff]
fix = true
lint.select = ["E"]
[[tool.mypy.overrides]]
module = "x"
[tool.mypy]
files = "src"
inline = {a = "b", c = [1, 2]}
multi = """
x"""
date = 1979-05-27T07:32:00Z
[package]
rust-version.workspace = true
`)
	for key, want := range map[string]tomlValue{
		"title":                          {Kind: 's', Str: "a # not a comment"},
		"project.requires-python":        {Kind: 's', Str: ">=3.10"},
		"project.dependencies":           {Kind: 'a', Strs: []string{"a[extra]>=1", "b"}},
		"project.quoted.key":             {Kind: 'o', Str: "1"},
		"tool.ruff.fix":                  {Kind: 'b', Bool: true},
		"tool.ruff.lint.select":          {Kind: 'a', Strs: []string{"E"}},
		"tool.mypy.overrides.module":     {Kind: 's', Str: "x"},
		"tool.mypy.files":                {Kind: 's', Str: "src"},
		"tool.mypy.inline.a":             {Kind: 's', Str: "b"},
		"tool.mypy.multi":                {Kind: 's', Str: "x"},
		"tool.mypy.date":                 {Kind: 'o', Str: "1979-05-27T07:32:00Z"},
		"package.rust-version.workspace": {Kind: 'b', Bool: true},
	} {
		if diff := cmp.Diff(want, got[key]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", key, diff)
		}
	}
	// A document it cannot read keeps the keys before the problem.
	got = parseTOML("a = 1\nb = \nc = 2\n")
	if _, ok := got["a"]; !ok || len(got) != 1 {
		t.Errorf("broken document: %v", got)
	}
}

func TestParseINI(t *testing.T) {
	got := parseINI("# c\n[mypy]\nfiles =\n    src,\n    tools\nstrict: True\n; c\n[tool:pytest]\ntestpaths = tests\n")
	want := map[string]string{"mypy.files": "src,\ntools", "mypy.strict": "True", "tool:pytest.testpaths": "tests"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRuntimeSatisfied(t *testing.T) {
	for _, tc := range []struct {
		name, needs, installed string
		want                   bool
	}{
		{"node", ">=22", "v20.11.1", false},
		{"node", ">=20", "v20.11.1", true},
		{"node", ">= 18.0.0", "v20.11.1", true},
		{"node", ">=22.12 || ^23", "v23.1.0", true},
		{"node", ">=22.12 || ^23", "v22.11.0", false},
		{"node", "^18.18 || >=20", "v20.0.0", true},
		{"node", "^18.18", "v19.0.0", false},
		{"node", "~20.5", "v20.9.0", false},
		{"node", "~20.5", "v20.5.3", true},
		{"node", "20.x", "v20.11.1", true},
		{"node", "20", "v21.0.0", false},
		{"node", ">=18 <21", "v20.11.1", true},
		{"node", ">=18 <20", "v20.11.1", false},
		{"node", "18 - 20", "v20.11.1", true},
		{"node", "18 - 20.1", "v20.11.1", false},
		{"node", ">20", "v20.11.1", false},
		{"node", "<=20", "v20.11.1", true},
		{"node", "^0.2.3", "v0.3.0", false},
		{"node", "*", "v20.11.1", true},
		{"python", ">=3.12", "3.11.7", false},
		{"python", ">=3.9,<4", "3.11.7", true},
		{"python", ">=3.8, !=3.11.*", "3.11.7", false},
		{"python", "==3.11.*", "3.11.7", true},
		{"python", "~=3.10", "3.11.7", true},
		{"python", "~=3.10.2", "3.11.7", false},
		{"python", ">3.11", "3.11.7", true},
		{"rust", "1.74", "1.80.0", true},
		{"rust", "1.85", "1.80.0", false},
		{"go", "1.22", "go1.26.8", true},
		{"go", "1.27rc1", "go1.26.8", false},
		{"go", "1.26.9", "go1.26.8", false},
	} {
		got, err := Runtime{Name: tc.name, Needs: tc.needs}.Satisfied(tc.installed)
		if err != nil || got != tc.want {
			t.Errorf("%s %q with %s: %v, %v; want %v", tc.name, tc.needs, tc.installed, got, err, tc.want)
		}
	}
	if _, err := (Runtime{Name: "python", Needs: "3.12"}).Satisfied("3.12.0"); err == nil {
		t.Errorf("a specifier without an operator is read")
	}
}

func TestInstalledVersion(t *testing.T) {
	for out, want := range map[string]string{
		"v20.11.1\n":                          "v20.11.1",
		"Python 3.11.7\n":                     "3.11.7",
		"rustc 1.80.0 (051478957 2024-07-21)": "1.80.0",
		"go version go1.26.8 linux/amd64\n":   "go1.26.8",
		"command not found":                   "",
	} {
		if got := InstalledVersion(out); got != want {
			t.Errorf("InstalledVersion(%q) = %q, want %q", out, got, want)
		}
	}
}

func TestRewriter(t *testing.T) {
	for cmd, want := range map[string]string{
		"eslint --fix src":                 "eslint --fix src",
		"eslint --fix-dry-run src":         "",
		"eslint src && prettier --write .": "prettier --write .",
		"prettier --check .":               "",
		"npx prettier -w .":                "npx prettier -w .",
		"gofmt -l . | (! grep .)":          "",
		"gofmt -w .":                       "gofmt -w .",
		"black .":                          "black .",
		"black --check .":                  "",
		"poetry run black --diff src":      "",
		"python -m isort src":              "python -m isort src",
		"isort --check-only src":           "",
		"ruff format":                      "ruff format",
		"ruff format --check":              "",
		"ruff check --fix":                 "ruff check --fix",
		"ruff check --no-fix":              "",
		"cargo fmt":                        "cargo fmt",
		"cargo fmt --check":                "",
		"cargo clippy --fix":               "cargo clippy --fix",
		"go mod tidy":                      "go mod tidy",
		"go mod tidy -diff":                "",
		"go vet ./...":                     "",
		"sed -i s/a/b/ f":                  "sed -i s/a/b/ f",
		"sed -n p f":                       "",
		"./gradlew spotlessApply check":    "./gradlew spotlessApply check",
		"mvn spotless:check verify":        "",
		"biome check --write .":            "biome check --write .",
		"biome check .":                    "",
	} {
		if got := rewriter(cmd, false); got != want {
			t.Errorf("rewriter(%q) = %q, want %q", cmd, got, want)
		}
	}
	// With fix = true in ruff's configuration, ruff check rewrites.
	if got := rewriter("ruff check src", true); got != "ruff check src" {
		t.Errorf("ruff check with fix = true: %q", got)
	}
	if got := rewriter("ruff check --no-fix", true); got != "" {
		t.Errorf("ruff check --no-fix with fix = true: %q", got)
	}
}

func TestMakefile(t *testing.T) {
	mk := parseMakefile(".PHONY: all check lint test\nVAR := x\nall: check\ncheck: lint\n\t@$(MAKE) test\nlint:\n\t-golangci-lint run \\\n\t  --fix\ntest: export FOO=1\ntest:\n\tgo test ./...\nbuild: ; go build\n")
	if !mk.has("check") || !mk.has("test") || mk.has(".PHONY") || mk.has("VAR") {
		t.Fatalf("targets: %v", mk)
	}
	if !mk.runs("check", "lint") || !mk.runs("check", "test") || mk.runs("test", "check") {
		t.Errorf("check runs lint (prerequisite) and test (through make)")
	}
	if diff := cmp.Diff([]string{"go build"}, mk.recipe("build")); diff != "" {
		t.Errorf("inline recipe (-want +got):\n%s", diff)
	}
	if w := rewriter(joinLines(mk.recipe("check")), false); w != "golangci-lint run --fix" {
		t.Errorf("check's recipe, its prerequisites' included: %q", w)
	}
}

func joinLines(l []string) string {
	s := ""
	for _, x := range l {
		s += x + "\n"
	}
	return s
}

// TestDetectConfig checks the steps, notes and runtimes that come from a
// project's own configuration, and that no detected step rewrites files.
func TestDetectConfig(t *testing.T) {
	for _, tc := range []struct {
		dir      string
		steps    []string
		notes    map[string]string
		runtimes []Runtime
	}{
		{dir: "pysetupcfg", steps: []string{"mypy", "python3 -m pytest"},
			notes: map[string]string{"mypy": "setup.cfg names what to check (files = src/app.py); plain mypy checks that"}},
		{dir: "rustver", steps: []string{"cargo test"},
			runtimes: []Runtime{{Name: "rust", Needs: "1.74", File: "Cargo.toml", Key: "rust-version", Dir: "."}}},
		{dir: "pyfix", steps: []string{"ruff check --no-fix", "python3 -m pytest"},
			notes: map[string]string{"ruff": "pyproject.toml sets fix = true: --no-fix keeps the check from rewriting files"}},
		{dir: "python", steps: []string{"ruff check", "python3 -m pytest"},
			notes: map[string]string{"pytest": "pyproject.toml sets testpaths; pytest without paths runs those"}},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			det, err := Detect(filepath.Join("testdata/detect", tc.dir))
			if err != nil {
				t.Fatal(err)
			}
			var steps []string
			for _, s := range det.Steps {
				steps = append(steps, s.Command())
			}
			if diff := cmp.Diff(tc.steps, steps); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.notes, det.Notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.runtimes, det.Runtimes); diff != "" {
				t.Errorf("runtimes (-want +got):\n%s", diff)
			}
		})
	}
	dirs, _ := filepath.Glob("testdata/detect/*")
	for _, d := range dirs {
		det, err := Detect(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range det.Steps {
			dir := &dirDetection{abs: filepath.Join(d, s.Dir)}
			if w := rewriter(s.Command(), dir.ruffFixes()); w != "" {
				t.Errorf("%s: step %s rewrites files: %s", d, s.Name, w)
			}
		}
	}
}
