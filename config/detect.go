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

// A dirDetection is the detection of one directory: the names it holds,
// and the steps, test commands and protect globs found in it so far.
type dirDetection struct {
	det     *Detection
	covered map[string][]string // ecosystem -> dirs already holding it
	dir     string              // repository-relative
	abs     string
	names   []string // the directory's entries

	steps   []Step
	tests   []testCommand
	protect []string
}

// detectDir adds what dir's manifests imply to det: its steps (named after
// dir and run there), what it skipped, its caches and protect globs.
func detectDir(root, dir string, det *Detection, covered map[string][]string) {
	d := &dirDetection{det: det, covered: covered, dir: dir, abs: filepath.Join(root, filepath.FromSlash(dir))}
	if entries, err := os.ReadDir(d.abs); err == nil {
		for _, e := range entries {
			d.names = append(d.names, e.Name())
		}
	}
	hasMakeTest := d.has("Makefile") && makeTestTarget().MatchString(d.read("Makefile"))
	if isExample(dir) {
		d.skipExample(hasMakeTest)
		return
	}
	d.goModule()
	d.nodePackage()
	d.cargoCrate()
	d.pythonProject()
	if hasMakeTest {
		d.makeTest()
	}
	for _, s := range d.steps {
		if dir != "." {
			s.Name = dir + ":" + s.Name
			s.Dir = dir
		}
		det.Steps = append(det.Steps, s)
	}
	det.protect(dir, d.protect...)
}

// has reports whether the directory holds a file (not a directory) name.
func (d *dirDetection) has(name string) bool {
	fi, err := os.Stat(filepath.Join(d.abs, name))
	return err == nil && !fi.IsDir()
}

// read returns a file's content ("" when it cannot be read).
func (d *dirDetection) read(name string) string {
	b, _ := os.ReadFile(filepath.Join(d.abs, name))
	return string(b)
}

// rel returns a file's repository-relative path.
func (d *dirDetection) rel(name string) string {
	if d.dir == "." {
		return name
	}
	return d.dir + "/" + name
}

// present returns the globs that match a file in the directory (matched
// against the names, so that a directory name is never read as a
// pattern).
func (d *dirDetection) present(globs ...string) []string {
	var out []string
	for _, g := range globs {
		if slices.ContainsFunc(d.names, func(n string) bool { ok, _ := path.Match(g, n); return ok }) {
			out = append(out, g)
		}
	}
	return out
}

// config returns the configuration files of a tool that the directory
// has, or the tool's usual one unless the root already has one of them
// (tools such as golangci-lint read a parent directory's).
func (d *dirDetection) config(globs ...string) []string {
	if p := d.present(globs...); len(p) > 0 {
		return p
	}
	for _, g := range globs {
		if d.dir != "." && slices.Contains(d.det.Protect, g) {
			return nil
		}
	}
	return globs[:1]
}

// inside reports whether the directory lies inside one already holding
// the ecosystem eco: nested manifests of workspace-style ecosystems belong
// to the outer one.
func (d *dirDetection) inside(eco string) bool {
	for _, c := range d.covered[eco] {
		if c == "." || strings.HasPrefix(d.dir, c+"/") {
			return true
		}
	}
	return false
}

// add adds a required step.
func (d *dirDetection) add(name, cmd string) {
	d.steps = append(d.steps, Step{Name: name, Shell: cmd, Required: true})
}

// skipExample lists the manifests of an example directory as skipped.
func (d *dirDetection) skipExample(hasMakeTest bool) {
	for _, m := range []struct{ file, reason string }{
		{"go.mod", "an example module"},
		{"package.json", "an example package"},
		{"Cargo.toml", "an example crate"},
		{"pyproject.toml", "an example project"},
		{"pytest.ini", "an example project"},
		{"setup.cfg", "an example project"},
	} {
		if d.has(m.file) {
			d.det.Skipped = append(d.det.Skipped, Skip{Path: d.rel(m.file), Reason: m.reason})
		}
	}
	if hasMakeTest {
		d.det.Skipped = append(d.det.Skipped, Skip{Path: d.rel("Makefile"), Reason: "test target of an example"})
	}
}

// goModule detects a Go module: go vet and go test.
func (d *dirDetection) goModule() {
	if !d.has("go.mod") {
		return
	}
	d.det.cache("~/.cache/go-build", "~/go/pkg/mod")
	d.det.Found = append(d.det.Found, d.rel("go.mod"))
	d.add("go-vet", "go vet ./...")
	d.steps[len(d.steps)-1].When = []string{prefixGlob(d.dir, "**/*.go"), d.rel("go.mod"), d.rel("go.sum")}
	d.add("go-test", "go test ./...")
	d.tests = append(d.tests, testCommand{d.rel("go.mod"), "go test ./..."})
	d.protect = append(d.protect, "**/*_test.go", "**/testdata/**")
	d.protect = append(d.protect, d.config(".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json")...)
}

// nodePackage detects a Node package: its lint, typecheck and test
// scripts, run by the package manager its lock file names. A package
// inside another is skipped.
func (d *dirDetection) nodePackage() {
	if !d.has("package.json") {
		return
	}
	if d.inside("node") {
		d.skipNestedNode()
		return
	}
	d.covered["node"] = append(d.covered["node"], d.dir)
	d.det.cache("~/.npm")
	d.det.Found = append(d.det.Found, d.rel("package.json"))
	var pkg struct {
		Scripts         map[string]string `json:"scripts"`
		Dependencies    map[string]any    `json:"dependencies"`
		DevDependencies map[string]any    `json:"devDependencies"`
	}
	_ = json.Unmarshal([]byte(d.read("package.json")), &pkg) // a broken package.json just has no scripts
	pm := "npm"
	switch {
	case d.has("pnpm-lock.yaml"):
		pm = "pnpm"
	case d.has("yarn.lock"):
		pm = "yarn"
	case d.has("bun.lockb") || d.has("bun.lock"):
		pm = "bun"
	}
	for _, s := range []string{"lint", "typecheck", "type-check", "test"} {
		body, ok := pkg.Scripts[s]
		if !ok || strings.Contains(body, "no test specified") {
			continue
		}
		d.add(pm+"-"+s, pm+" run "+s)
		if s == "test" {
			d.tests = append(d.tests, testCommand{d.rel("package.json"), pm + " run test"})
		}
	}
	d.protect = append(d.protect, "**/*.test.*", "**/*.spec.*", "**/__tests__/**")
	for _, t := range nodeTools {
		_, dev := pkg.DevDependencies[t.pkg]
		_, dep := pkg.Dependencies[t.pkg]
		if dev || dep {
			d.protect = append(d.protect, d.config(t.globs...)...)
		}
	}
}

// skipNestedNode lists a package inside another as skipped: its scripts
// run only if the outer one runs them (workspaces); say so rather than
// drop it.
func (d *dirDetection) skipNestedNode() {
	var pkg struct {
		Scripts map[string]string `json:"scripts"`
	}
	_ = json.Unmarshal([]byte(d.read("package.json")), &pkg)
	for _, sc := range []string{"test", "lint", "typecheck", "type-check"} {
		if body, ok := pkg.Scripts[sc]; ok && !strings.Contains(body, "no test specified") {
			d.det.Skipped = append(d.det.Skipped, Skip{Path: d.rel("package.json"),
				Reason: "a package inside another; its " + sc + " script runs only through the outer one (add a step with dir: " + d.dir + " to run it)"})
			break
		}
	}
}

// cargoCrate detects a Rust crate (not one inside another): cargo test.
func (d *dirDetection) cargoCrate() {
	if !d.has("Cargo.toml") || d.inside("rust") {
		return
	}
	d.covered["rust"] = append(d.covered["rust"], d.dir)
	d.det.cache("~/.cargo/registry", "~/.cargo/git")
	d.det.Found = append(d.det.Found, d.rel("Cargo.toml"))
	d.add("cargo-test", "cargo test")
	d.tests = append(d.tests, testCommand{d.rel("Cargo.toml"), "cargo test"})
	d.protect = append(d.protect, "tests/**")
	d.protect = append(d.protect, d.config("clippy.toml", ".clippy.toml")...)
	d.protect = append(d.protect, d.present("rustfmt.toml", ".rustfmt.toml")...)
}

// pythonProject detects a Python project: ruff and mypy when
// pyproject.toml configures them, and pytest.
func (d *dirDetection) pythonProject() {
	if !d.has("pytest.ini") && !d.has("pyproject.toml") && !d.has("setup.cfg") {
		return
	}
	pyproject := d.read("pyproject.toml")
	d.det.cache("~/.cache/pip")
	var manifest string
	for _, f := range []string{"pyproject.toml", "pytest.ini", "setup.cfg"} {
		if d.has(f) {
			d.det.Found = append(d.det.Found, d.rel(f))
			if manifest == "" {
				manifest = d.rel(f)
			}
		}
	}
	if strings.Contains(pyproject, "[tool.ruff") {
		d.add("ruff", "ruff check .")
	}
	if strings.Contains(pyproject, "[tool.mypy") || d.has("mypy.ini") {
		d.add("mypy", "mypy .")
	}
	d.add("pytest", "python3 -m pytest")
	d.tests = append(d.tests, testCommand{manifest, "python3 -m pytest"})
	d.protect = append(d.protect, "tests/**", "**/test_*.py", "**/*_test.py", "**/conftest.py")
	d.protect = append(d.protect, d.present("pytest.ini", "tox.ini", "mypy.ini", ".flake8", "ruff.toml", ".ruff.toml", ".pylintrc")...)
}

// makeTest detects a Makefile test target, which gives way to the
// ecosystem's own test command of the same directory: that is what its
// tools expect, and a Makefile test target often does more (cleans
// caches, builds, runs integration suites) and takes much longer.
func (d *dirDetection) makeTest() {
	if len(d.tests) > 0 {
		d.det.Skipped = append(d.det.Skipped, Skip{Path: d.rel("Makefile"), Reason: makeSkipReason(d.tests)})
		return
	}
	d.det.Found = append(d.det.Found, d.rel("Makefile"))
	d.add("make-test", "make test")
	d.protect = append(d.protect, "Makefile")
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
