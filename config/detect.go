package config

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/orket/orket/internal/lazyre"
)

// A Detection is what orket found in a repository's manifests: the verify
// steps it would run, which files told it so, what it found and left out,
// and the paths it proposes to protect from an edit.
type Detection struct {
	Found   []string // manifest paths, repository-relative ("go.mod", "web/package.json")
	Steps   []Step
	Skipped []Skip
	// Protect lists doublestar globs of the checks an edit could weaken
	// (tests, lint configs, CI workflows) for the toolchains found, for
	// the protect: proposal orket init writes as a comment.
	Protect []string
	// SandboxWrite lists the caches the toolchains found write outside
	// the repository (sandbox.write).
	SandboxWrite []string
}

// A Skip is a manifest or Makefile test target that detection found and
// left out, and why.
type Skip struct {
	Path   string `json:"path"`   // repository-relative ("Makefile", "examples/hello/go.mod")
	Reason string `json:"reason"` // "an example module"
}

// detectDepth is how deep below the root manifests are looked for: the root
// and two levels of subdirectories cover the usual monorepo layouts.
const detectDepth = 2

// skipDirs are never searched for manifests.
var skipDirs = map[string]bool{
	"node_modules": true, "vendor": true, "target": true, "dist": true,
	"build": true, "testdata": true, "__pycache__": true, "venv": true,
}

// exampleDirs hold examples, samples and demos: their manifests are found
// and reported as skipped, never run, since their steps would verify the
// examples rather than the project.
var exampleDirs = map[string]bool{
	"example": true, "examples": true, "_example": true, "_examples": true,
	"sample": true, "samples": true, "demo": true, "demos": true,
}

// isExample reports whether a repository-relative directory is an example
// directory or lies below one.
func isExample(dir string) bool {
	for _, e := range strings.Split(dir, "/") {
		if exampleDirs[e] {
			return true
		}
	}
	return false
}

// Detect looks for go.mod, package.json, Cargo.toml, Python test
// configuration and a Makefile test target at the root of a repository and
// below it, and returns the verify steps they imply. Steps of a
// subdirectory run there (dir) and are named after it ("web:npm-test").
// An ecosystem's own test command wins over a Makefile test target in the
// same directory, and manifests in example directories are left out; both
// are listed in Skipped with the reason.
func Detect(root string) (*Detection, error) {
	det := &Detection{}
	var dirs []string
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil // an unreadable subdirectory holds nothing we can run
		}
		if !e.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel != "." {
			if strings.HasPrefix(e.Name(), ".") || skipDirs[e.Name()] || hasControl(e.Name()) {
				// A name with a line break in it would break the
				// comments and steps orket init writes; no project
				// keeps its manifests there.
				return filepath.SkipDir
			}
			if strings.Count(rel, "/")+1 > detectDepth {
				return filepath.SkipDir
			}
		}
		dirs = append(dirs, rel)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(dirs, func(i, j int) bool {
		if dirs[i] == "." || dirs[j] == "." {
			return dirs[i] == "."
		}
		return dirs[i] < dirs[j]
	})
	covered := map[string][]string{} // ecosystem -> dirs already holding it
	for _, dir := range dirs {
		detectDir(root, dir, det, covered)
	}
	if len(det.Found) > 0 {
		det.protect(".", ciGlobs(root)...)
	}
	return det, nil
}

// hasControl reports whether s holds a control character.
func hasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0
}

var makeTestTarget = lazyre.New(`(?m)^test[ \t]*:([^=]|$)`)

// A testCommand is an ecosystem's own test step and the manifest it comes
// from, which a Makefile test target in the same directory gives way to.
type testCommand struct{ manifest, command string }

// nodeTools maps a Node dev tool to the globs of its configuration files,
// the usual name first.
var nodeTools = []struct {
	pkg   string
	globs []string
}{
	{"eslint", []string{"eslint.config.*", ".eslintrc*"}},
	{"prettier", []string{".prettierrc*", "prettier.config.*"}},
	{"typescript", []string{"tsconfig*.json"}},
	{"jest", []string{"jest.config.*"}},
	{"vitest", []string{"vitest.config.*"}},
	{"mocha", []string{".mocharc*"}},
	{"@biomejs/biome", []string{"biome.json*"}},
	{"stylelint", []string{".stylelintrc*", "stylelint.config.*"}},
}

func detectDir(root, dir string, det *Detection, covered map[string][]string) {
	abs := filepath.Join(root, filepath.FromSlash(dir))
	has := func(name string) bool {
		fi, err := os.Stat(filepath.Join(abs, name))
		return err == nil && !fi.IsDir()
	}
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(abs, name))
		return string(b)
	}
	rel := func(name string) string {
		if dir == "." {
			return name
		}
		return dir + "/" + name
	}
	// present returns the globs that match a file in dir (matched against
	// the names, so that a directory name is never read as a pattern).
	var names []string
	if entries, err := os.ReadDir(abs); err == nil {
		for _, e := range entries {
			names = append(names, e.Name())
		}
	}
	present := func(globs ...string) []string {
		var out []string
		for _, g := range globs {
			if slices.ContainsFunc(names, func(n string) bool { ok, _ := path.Match(g, n); return ok }) {
				out = append(out, g)
			}
		}
		return out
	}
	// config returns the configuration files of a tool that dir has, or
	// the tool's usual one unless the root already has one of them (tools
	// such as golangci-lint read a parent directory's).
	config := func(globs ...string) []string {
		if p := present(globs...); len(p) > 0 {
			return p
		}
		for _, g := range globs {
			if dir != "." && slices.Contains(det.Protect, g) {
				return nil
			}
		}
		return globs[:1]
	}
	hasMakeTest := has("Makefile") && makeTestTarget().MatchString(read("Makefile"))

	if isExample(dir) {
		for _, m := range []struct{ file, reason string }{
			{"go.mod", "an example module"},
			{"package.json", "an example package"},
			{"Cargo.toml", "an example crate"},
			{"pyproject.toml", "an example project"},
			{"pytest.ini", "an example project"},
			{"setup.cfg", "an example project"},
		} {
			if has(m.file) {
				det.Skipped = append(det.Skipped, Skip{Path: rel(m.file), Reason: m.reason})
			}
		}
		if hasMakeTest {
			det.Skipped = append(det.Skipped, Skip{Path: rel("Makefile"), Reason: "test target of an example"})
		}
		return
	}

	// Nested manifests of workspace-style ecosystems belong to the outer one.
	inside := func(eco string) bool {
		for _, d := range covered[eco] {
			if d == "." || strings.HasPrefix(dir, d+"/") {
				return true
			}
		}
		return false
	}
	var steps []Step
	add := func(name, cmd string) { steps = append(steps, Step{Name: name, Shell: cmd, Required: true}) }
	var tests []testCommand
	var protect []string

	if has("go.mod") {
		det.cache("~/.cache/go-build", "~/go/pkg/mod")
		det.Found = append(det.Found, rel("go.mod"))
		add("go-vet", "go vet ./...")
		steps[len(steps)-1].When = []string{prefixGlob(dir, "**/*.go"), rel("go.mod"), rel("go.sum")}
		add("go-test", "go test ./...")
		tests = append(tests, testCommand{rel("go.mod"), "go test ./..."})
		protect = append(protect, "**/*_test.go", "**/testdata/**")
		protect = append(protect, config(".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json")...)
	}
	nestedNode := inside("node")
	if has("package.json") && !nestedNode {
		covered["node"] = append(covered["node"], dir)
		det.cache("~/.npm")
		det.Found = append(det.Found, rel("package.json"))
		var pkg struct {
			Scripts         map[string]string `json:"scripts"`
			Dependencies    map[string]any    `json:"dependencies"`
			DevDependencies map[string]any    `json:"devDependencies"`
		}
		_ = json.Unmarshal([]byte(read("package.json")), &pkg) // a broken package.json just has no scripts
		pm := "npm"
		switch {
		case has("pnpm-lock.yaml"):
			pm = "pnpm"
		case has("yarn.lock"):
			pm = "yarn"
		case has("bun.lockb") || has("bun.lock"):
			pm = "bun"
		}
		for _, s := range []string{"lint", "typecheck", "type-check", "test"} {
			body, ok := pkg.Scripts[s]
			if !ok || strings.Contains(body, "no test specified") {
				continue
			}
			add(pm+"-"+s, pm+" run "+s)
			if s == "test" {
				tests = append(tests, testCommand{rel("package.json"), pm + " run test"})
			}
		}
		protect = append(protect, "**/*.test.*", "**/*.spec.*", "**/__tests__/**")
		for _, t := range nodeTools {
			_, dev := pkg.DevDependencies[t.pkg]
			_, dep := pkg.Dependencies[t.pkg]
			if dev || dep {
				protect = append(protect, config(t.globs...)...)
			}
		}
	}
	if has("package.json") && nestedNode {
		// A package inside another: its scripts run only if the outer
		// one runs them (workspaces); say so rather than drop it.
		var pkg struct {
			Scripts map[string]string `json:"scripts"`
		}
		_ = json.Unmarshal([]byte(read("package.json")), &pkg)
		for _, sc := range []string{"test", "lint", "typecheck", "type-check"} {
			if body, ok := pkg.Scripts[sc]; ok && !strings.Contains(body, "no test specified") {
				det.Skipped = append(det.Skipped, Skip{Path: rel("package.json"),
					Reason: "a package inside another; its " + sc + " script runs only through the outer one (add a step with dir: " + dir + " to run it)"})
				break
			}
		}
	}
	if has("Cargo.toml") && !inside("rust") {
		covered["rust"] = append(covered["rust"], dir)
		det.cache("~/.cargo/registry", "~/.cargo/git")
		det.Found = append(det.Found, rel("Cargo.toml"))
		add("cargo-test", "cargo test")
		tests = append(tests, testCommand{rel("Cargo.toml"), "cargo test"})
		protect = append(protect, "tests/**")
		protect = append(protect, config("clippy.toml", ".clippy.toml")...)
		protect = append(protect, present("rustfmt.toml", ".rustfmt.toml")...)
	}
	pyproject := read("pyproject.toml")
	if has("pytest.ini") || has("pyproject.toml") || has("setup.cfg") {
		det.cache("~/.cache/pip")
		var manifest string
		for _, f := range []string{"pyproject.toml", "pytest.ini", "setup.cfg"} {
			if has(f) {
				det.Found = append(det.Found, rel(f))
				if manifest == "" {
					manifest = rel(f)
				}
			}
		}
		if strings.Contains(pyproject, "[tool.ruff") {
			add("ruff", "ruff check .")
		}
		if strings.Contains(pyproject, "[tool.mypy") || has("mypy.ini") {
			add("mypy", "mypy .")
		}
		add("pytest", "python3 -m pytest")
		tests = append(tests, testCommand{manifest, "python3 -m pytest"})
		protect = append(protect, "tests/**", "**/test_*.py", "**/*_test.py", "**/conftest.py")
		protect = append(protect, present("pytest.ini", "tox.ini", "mypy.ini", ".flake8", "ruff.toml", ".ruff.toml", ".pylintrc")...)
	}
	if hasMakeTest {
		if len(tests) > 0 {
			// The ecosystem's own test command is what its tools expect;
			// a Makefile test target often does more (cleans caches,
			// builds, runs integration suites) and takes much longer.
			det.Skipped = append(det.Skipped, Skip{Path: rel("Makefile"), Reason: makeSkipReason(tests)})
		} else {
			det.Found = append(det.Found, rel("Makefile"))
			add("make-test", "make test")
			protect = append(protect, "Makefile")
		}
	}
	for _, s := range steps {
		if dir != "." {
			s.Name = dir + ":" + s.Name
			s.Dir = dir
		}
		det.Steps = append(det.Steps, s)
	}
	det.protect(dir, protect...)
}

// makeSkipReason says why a Makefile test target gives way to the
// ecosystem test commands of its directory.
func makeSkipReason(tests []testCommand) string {
	var gives []string
	for _, t := range tests {
		gives = append(gives, t.manifest+" gives "+t.command)
	}
	if len(tests) == 1 {
		return "test target: " + gives[0] + ", the ecosystem's own test command"
	}
	return "test target: " + strings.Join(gives, "; ") + ": the ecosystems' own test commands"
}

// cache adds paths to the sandbox.write proposal, once each.
func (det *Detection) cache(paths ...string) {
	for _, p := range paths {
		if !slices.Contains(det.SandboxWrite, p) {
			det.SandboxWrite = append(det.SandboxWrite, p)
		}
	}
}

// protect adds globs of dir to the protect proposal, leaving out those a
// root glob already covers.
func (det *Detection) protect(dir string, globs ...string) {
	for _, g := range globs {
		if dir != "." && strings.HasPrefix(g, "**/") && slices.Contains(det.Protect, g) {
			continue
		}
		if g = prefixGlob(dir, g); !slices.Contains(det.Protect, g) {
			det.Protect = append(det.Protect, g)
		}
	}
}

// ciGlobs returns the CI configurations a repository has, or GitHub's
// workflows when it has none of them.
func ciGlobs(root string) []string {
	var out []string
	for _, g := range []string{".github/workflows/**", ".gitlab-ci.yml", ".circleci/**", ".buildkite/**", "azure-pipelines.yml", "Jenkinsfile"} {
		if _, err := os.Stat(filepath.Join(root, strings.TrimSuffix(g, "/**"))); err == nil {
			out = append(out, g)
		}
	}
	if len(out) == 0 {
		out = []string{".github/workflows/**"}
	}
	return out
}

func prefixGlob(dir, glob string) string {
	if dir == "." {
		return glob
	}
	return path.Join(dir, glob)
}

// Detected returns a configuration for a repository without orket.yaml:
// the defaults and one profile, "detected", of the detected steps. It
// fails when nothing was detected.
func Detected(root string) (*Config, error) {
	det, err := Detect(root)
	if err != nil {
		return nil, err
	}
	if len(det.Steps) == 0 {
		return nil, &Error{File: FileName, Msg: "no orket.yaml and no verify steps detected (looked for go.mod, package.json, Cargo.toml, pyproject.toml, pytest.ini, setup.cfg, a Makefile test target)",
			Hint: "run orket init, then edit verify.profiles in orket.yaml"}
	}
	c := Defaults()
	c.Detected = det.Found
	c.Verify.Default = "detected"
	c.Verify.Order = []string{"detected"}
	c.Verify.Profiles["detected"] = &Profile{Name: "detected", Steps: det.Steps}
	c.Sandbox.Write = det.SandboxWrite
	return c, nil
}

// Render writes the orket.yaml that orket init creates for a detection.
func Render(det *Detection) []byte {
	var b strings.Builder
	b.WriteString("# orket.yaml: how orket verifies a change to this repository.\n")
	b.WriteString("# Written by orket init. orket schema prints the JSON Schema of this file;\n")
	b.WriteString("# orket schema --check shows how it resolves.\n")
	b.WriteString("version: 1\n")
	b.WriteString("# scope: [pkg/api]   # default --scope for orket run\n")
	b.WriteString("verify:\n  default: quick\n  profiles:\n    quick:\n")
	if len(det.Steps) == 0 {
		b.WriteString("      # Nothing to run was detected. Replace this step with your checks.\n")
		b.WriteString("      - name: todo\n")
		b.WriteString("        run: " + yamlString(`echo "orket.yaml: add your verify steps to verify.profiles.quick" >&2; exit 1`) + "\n")
	} else {
		fmt.Fprintf(&b, "      # detected from %s\n", strings.Join(det.Found, ", "))
	}
	for _, sk := range det.Skipped {
		fmt.Fprintf(&b, "      # skipped %s (%s)\n", sk.Path, sk.Reason)
	}
	for _, s := range det.Steps {
		b.WriteString("      - name: " + yamlString(s.Name) + "\n")
		b.WriteString("        run: " + yamlString(s.Shell) + "\n")
		if s.Dir != "" {
			b.WriteString("        dir: " + yamlString(s.Dir) + "\n")
		}
		if len(s.When) > 0 {
			q := make([]string, len(s.When))
			for i, w := range s.When {
				q[i] = yamlString(w)
			}
			b.WriteString("        when: [" + strings.Join(q, ", ") + "]\n")
		}
	}
	b.WriteString(`lessons:
  top_k: 3          # advisories shown before a run
  half_life: 14d    # how fast old failures fade
preflight:
  strict: false     # true: a failed preflight check stops the run
  checks: []        # e.g. - {type: command_exists, command: go}
`)
	if len(det.Protect) > 0 {
		q := make([]string, len(det.Protect))
		for i, g := range det.Protect {
			q[i] = yamlString(g)
		}
		b.WriteString("# Checks an edit must not weaken (tests, lint configs, CI), proposed for the\n")
		b.WriteString("# toolchains found. Uncommented, an edit that modifies or deletes them is\n")
		b.WriteString("# refused (E_WRITE_PROTECTED); without it, changed tests make a run CONDITIONAL.\n")
		b.WriteString("# protect: [" + strings.Join(q, ", ") + "]\n")
	}
	b.WriteString("# Edit commands write only in their scope, a private $TMPDIR and these paths\n")
	b.WriteString("# (the kernel sandbox, where Linux has Landlock; mode: required or off).\n")
	b.WriteString("sandbox:\n  mode: auto\n")
	if len(det.SandboxWrite) > 0 {
		q := make([]string, len(det.SandboxWrite))
		for i, w := range det.SandboxWrite {
			q[i] = yamlString(w)
		}
		b.WriteString("  write: [" + strings.Join(q, ", ") + "]   # the toolchains' caches\n")
	} else {
		b.WriteString("  write: []   # e.g. build caches such as ~/.cache/go-build\n")
	}
	return []byte(b.String())
}

var plainYAML = lazyre.New(`^[A-Za-z0-9_./-][A-Za-z0-9_ ./:+=-]*$`)

// yamlString quotes s for a YAML flow or block scalar when it needs it.
func yamlString(s string) string {
	if plainYAML().MatchString(s) && !strings.Contains(s, ": ") && !strings.HasSuffix(s, ":") &&
		!strings.HasSuffix(s, " ") && !isYAMLKeyword(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

func isYAMLKeyword(s string) bool {
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "null", "~", "y", "n":
		return true
	}
	_, err := fmt.Sscanf(s, "%g", new(float64))
	return err == nil
}
