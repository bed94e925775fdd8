package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// goMakeSkip is why a Makefile test target beside go.mod is left out.
const goMakeSkip = "test target: go.mod gives go test ./..., the ecosystem's own test command"

func TestDetect(t *testing.T) {
	type step struct{ Name, Cmd, Dir string }
	goProtect := []string{"**/*_test.go", "**/testdata/**", ".golangci.yml", ".github/workflows/**"}
	for _, tc := range []struct {
		dir     string
		found   []string
		steps   []step
		skipped []Skip
		protect []string
	}{
		{dir: "go", found: []string{"go.mod"},
			steps:   []step{{"go-vet", "go vet ./...", ""}, {"go-test", "go test ./...", ""}},
			protect: goProtect},
		// The nested pnpm package belongs to the outer workspace.
		// A package inside it is named, not run.
		{dir: "node", found: []string{"package.json"},
			steps:   []step{{"npm-lint", "npm run lint", ""}, {"npm-typecheck", "npm run typecheck", ""}, {"npm-test", "npm run test", ""}},
			skipped: []Skip{{"pnpm/package.json", "a package inside another; its lint script runs only through the outer one (add a step with dir: pnpm to run it)"}},
			protect: []string{"**/*.test.*", "**/*.spec.*", "**/__tests__/**", ".github/workflows/**"}},
		// npm's placeholder test script is not a test.
		{dir: "node/pnpm", found: []string{"package.json"},
			steps:   []step{{"pnpm-lint", "pnpm run lint", ""}},
			protect: []string{"**/*.test.*", "**/*.spec.*", "**/__tests__/**", ".github/workflows/**"}},
		{dir: "rust", found: []string{"Cargo.toml"},
			steps:   []step{{"cargo-test", "cargo test", ""}},
			protect: []string{"tests/**", "clippy.toml", ".github/workflows/**"}},
		{dir: "python", found: []string{"pyproject.toml"},
			steps:   []step{{"ruff", "ruff check", ""}, {"pytest", "python3 -m pytest", ""}},
			protect: []string{"tests/**", "**/test_*.py", "**/*_test.py", "**/conftest.py", ".github/workflows/**"}},
		// go test ./... wins over a Makefile test target beside go.mod.
		{dir: "make", found: []string{"go.mod"},
			steps:   []step{{"go-vet", "go vet ./...", ""}, {"go-test", "go test ./...", ""}},
			skipped: []Skip{{"Makefile", goMakeSkip}},
			protect: goProtect},
		// A Go module with a Makefile, example modules and a nested tool
		// module (the shape of go-chi/chi and urfave/cli): the examples are
		// left out, the nested module that is not an example is kept, the
		// lint config and CI the repository has are proposed for protect.
		{dir: "gomake", found: []string{"go.mod", "cmd/tool/go.mod"},
			steps: []step{
				{"go-vet", "go vet ./...", ""}, {"go-test", "go test ./...", ""},
				{"cmd/tool:go-vet", "go vet ./...", "cmd/tool"}, {"cmd/tool:go-test", "go test ./...", "cmd/tool"}},
			skipped: []Skip{
				{"Makefile", goMakeSkip},
				{"_examples/rest/go.mod", "an example module"},
				{"_examples/rest/Makefile", "test target of an example"},
				{"demo/package.json", "an example package"},
				{"examples/hello/go.mod", "an example module"}},
			protect: []string{"**/*_test.go", "**/testdata/**", ".golangci.yaml", ".github/workflows/**"}},
		// A Makefile test target is used when no manifest is beside it.
		{dir: "makeonly", found: []string{"Makefile"},
			steps:   []step{{"make-test", "make test", ""}},
			protect: []string{"Makefile", ".gitlab-ci.yml"}},
		// A package.json without a test script gives no test command.
		{dir: "nodemake", found: []string{"package.json", "Makefile"},
			steps:   []step{{"npm-lint", "npm run lint", ""}, {"make-test", "make test", ""}},
			protect: []string{"**/*.test.*", "**/*.spec.*", "**/__tests__/**", "eslint.config.*", "Makefile", ".github/workflows/**"}},
		// A Node package with devDependencies (the shape of lukeed/kleur):
		// npm's test script wins over make test; each dev tool's config is
		// proposed, as the package has it or by its usual name.
		{dir: "nodedev", found: []string{"package.json"},
			steps:   []step{{"npm-lint", "npm run lint", ""}, {"npm-test", "npm run test", ""}},
			skipped: []Skip{{"Makefile", "test target: package.json gives npm run test, the ecosystem's own test command"}},
			protect: []string{"**/*.test.*", "**/*.spec.*", "**/__tests__/**", "eslint.config.*", ".prettierrc*", "tsconfig*.json", "vitest.config.*", ".github/workflows/**"}},
		{dir: "monorepo", found: []string{"go.mod", "services/billing/pytest.ini", "web/package.json"},
			steps: []step{
				{"go-vet", "go vet ./...", ""}, {"go-test", "go test ./...", ""},
				{"services/billing:pytest", "python3 -m pytest", "services/billing"},
				{"web:yarn-test", "yarn run test", "web"}},
			protect: []string{"**/*_test.go", "**/testdata/**", ".golangci.yml",
				"services/billing/tests/**", "services/billing/**/test_*.py", "services/billing/**/*_test.py",
				"services/billing/**/conftest.py", "services/billing/pytest.ini",
				"web/**/*.test.*", "web/**/*.spec.*", "web/**/__tests__/**", ".github/workflows/**"}},
		{dir: "empty"},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			det, err := Detect("testdata/detect/" + tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			var got []step
			for _, s := range det.Steps {
				got = append(got, step{s.Name, s.Command(), s.Dir})
			}
			if diff := cmp.Diff(tc.steps, got); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.found, det.Found); diff != "" {
				t.Errorf("found (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.skipped, det.Skipped); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.protect, det.Protect); diff != "" {
				t.Errorf("protect (-want +got):\n%s", diff)
			}
			// What init writes for it loads, and runs the same steps.
			data := Render(det)
			c, err := Parse(data, "orket.yaml")
			if err != nil {
				t.Fatalf("rendered orket.yaml does not load: %v\n%s", err, data)
			}
			r, _ := c.Profile("")
			if len(tc.steps) > 0 && len(r.Steps) != len(tc.steps) {
				t.Errorf("rendered profile has %d steps, want %d", len(r.Steps), len(tc.steps))
			}
			for i := range tc.steps {
				if i < len(r.Steps) && (r.Steps[i].Command() != tc.steps[i].Cmd || r.Steps[i].Dir != tc.steps[i].Dir) {
					t.Errorf("rendered step %d: %+v", i, r.Steps[i])
				}
			}
			// Every skip is named in the file, with its reason.
			for _, sk := range tc.skipped {
				if want := "# skipped " + sk.Path + " (" + sk.Reason + ")\n"; !strings.Contains(string(data), want) {
					t.Errorf("rendered orket.yaml lacks %q:\n%s", want, data)
				}
			}
			// The protect proposal is a comment that, uncommented, is the
			// proposed list.
			if diff := cmp.Diff(tc.protect, uncommentedProtect(t, data)); diff != "" {
				t.Errorf("protect comment, uncommented (-want +got):\n%s", diff)
			}
		})
	}
}

// uncommentedProtect returns the list of the "# protect: [...]" comment of
// a rendered orket.yaml, read as YAML.
func uncommentedProtect(t *testing.T, data []byte) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if yamlLine, ok := strings.CutPrefix(line, "# protect: "); ok {
			var doc struct {
				Protect []string `yaml:"protect"`
			}
			if err := yaml.Unmarshal([]byte("protect: "+yamlLine), &doc); err != nil {
				t.Fatalf("protect comment is not YAML when uncommented: %v\n%s", err, line)
			}
			out = append(out, doc.Protect...)
		}
		if strings.HasPrefix(line, "protect:") {
			t.Errorf("protect: is written as a key; the loader does not know it yet:\n%s", data)
		}
	}
	return out
}

// TestRenderHeader checks that the file init writes points at what the
// user has (orket schema), not at a path of orket's own repository.
func TestRenderHeader(t *testing.T) {
	data := string(Render(&Detection{}))
	if strings.Contains(data, "docs/config.md") {
		t.Errorf("orket.yaml names docs/config.md, which is not in the user's repository:\n%s", data)
	}
	for _, want := range []string{"orket schema prints the JSON Schema of this file", "orket schema --check shows how it resolves"} {
		if !strings.Contains(data, want) {
			t.Errorf("orket.yaml lacks %q:\n%s", want, data)
		}
	}
}

func TestDetectedNothing(t *testing.T) {
	_, err := Detected("testdata/detect/empty")
	if _, ok := err.(*Error); !ok {
		t.Fatalf("Detected on an empty repository: %v", err)
	}
}

func TestFormatDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{90 * 24 * time.Hour, "90d"},
		{14 * 24 * time.Hour, "14d"},
		{36 * time.Hour, "36h"},
		{5 * time.Minute, "5m"},
		{90 * time.Second, "90s"},
		{90 * time.Minute, "1h30m"},
		{150 * time.Second, "2m30s"},
		{1500 * time.Millisecond, "1.5s"},
		{500 * time.Millisecond, "500ms"},
		{24*time.Hour + 30*time.Minute, "24h30m"},
		{time.Hour + 5*time.Second, "1h5s"},
		{0, "0s"},
		{-2 * time.Hour, "-2h"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			got := FormatDuration(tc.d)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("FormatDuration(%d) (-want +got):\n%s", tc.d, diff)
			}
			if tc.d > 0 {
				back, err := ParseDuration(got)
				if err != nil || back != tc.d {
					t.Errorf("ParseDuration(%q) = %v, %v; want %v", got, back, err, tc.d)
				}
			}
		})
	}
}
