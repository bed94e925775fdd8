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
	// Tools lists the programs the steps run, for orket init to say
	// which are missing.
	Tools []Tool
	// Runtimes lists the runtime versions the manifests ask for.
	Runtimes []Runtime
	// Notes says, for a step (by name), what in the project's own
	// configuration chose its command.
	Notes map[string]string
}

// A Tool is a program the detected steps run.
type Tool struct {
	Command string   `json:"tool"`             // as a step runs it: "mvn", "./gradlew", "python3"
	Module  bool     `json:"module,omitempty"` // a Python module, run as python3 -m Command
	Dir     string   `json:"dir,omitempty"`    // repository-relative directory the steps run in, for ./gradlew
	Steps   []string `json:"steps"`            // the steps that run it
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
	needs   map[string][]string // step name -> the programs it runs ("-m pytest": a Python module)
	notes   map[string]string   // step name -> what chose its command
}

// detectDir adds what dir's manifests imply to det: its steps (named after
// dir and run there), what it skipped, its caches and protect globs.
func detectDir(root, dir string, det *Detection, covered map[string][]string) {
	d := &dirDetection{det: det, covered: covered, dir: dir, abs: filepath.Join(root, filepath.FromSlash(dir)),
		needs: map[string][]string{}, notes: map[string]string{}}
	if entries, err := os.ReadDir(d.abs); err == nil {
		for _, e := range entries {
			d.names = append(d.names, e.Name())
		}
	}
	var mk makefile
	if d.has("Makefile") {
		mk = parseMakefile(d.read("Makefile"))
	}
	if isExample(dir) {
		d.skipExample(mk.has("test"))
		return
	}
	d.goModule()
	d.nodePackage()
	d.cargoCrate()
	d.pythonProject()
	d.javaProject()
	d.makeTargets(mk)
	for _, s := range d.steps {
		local := s.Name
		if dir != "." {
			s.Name = dir + ":" + s.Name
			s.Dir = dir
		}
		det.Steps = append(det.Steps, s)
		for _, t := range d.needs[local] {
			det.need(t, dir, s.Name)
		}
		if n := d.notes[local]; n != "" {
			if det.Notes == nil {
				det.Notes = map[string]string{}
			}
			det.Notes[s.Name] = n
		}
	}
	det.protect(dir, d.protect...)
}

// need records that step runs tool ("-m NAME" for a Python module), in
// dir when the tool's path is relative.
func (det *Detection) need(tool, dir, step string) {
	t := Tool{Command: tool}
	if name, ok := strings.CutPrefix(tool, "-m "); ok {
		t = Tool{Command: name, Module: true}
	}
	if strings.HasPrefix(t.Command, "./") && dir != "." {
		t.Dir = dir
	}
	for i := range det.Tools {
		if o := &det.Tools[i]; o.Command == t.Command && o.Module == t.Module && o.Dir == t.Dir {
			o.Steps = append(o.Steps, step)
			return
		}
	}
	t.Steps = []string{step}
	det.Tools = append(det.Tools, t)
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

// add adds a required step, and the programs it runs: its command's
// first word, and tools ("-m NAME" for a Python module).
func (d *dirDetection) add(name, cmd string, tools ...string) {
	d.steps = append(d.steps, Step{Name: name, Shell: cmd, Required: true})
	prog, _, _ := strings.Cut(cmd, " ")
	d.needs[name] = append([]string{prog}, tools...)
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
	if m := goLine().FindStringSubmatch(d.read("go.mod")); m != nil {
		d.runtime("go", m[1], "go.mod", "go")
	}
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
		Engines         map[string]any    `json:"engines"`
	}
	_ = json.Unmarshal([]byte(d.read("package.json")), &pkg) // a broken package.json just has no scripts
	if v, ok := pkg.Engines["node"].(string); ok && strings.TrimSpace(v) != "" {
		d.runtime("node", v, "package.json", "engines.node")
	}
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
		if w := scriptRewriter(pkg.Scripts, s, d.ruffFixes()); w != "" {
			d.det.Skipped = append(d.det.Skipped, Skip{Path: d.rel("package.json"),
				Reason: "its " + s + " script runs " + w + ", which rewrites files; a verify step must only check them"})
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
	cargo := parseTOML(d.read("Cargo.toml"))
	for _, k := range []string{"package.rust-version", "workspace.package.rust-version"} {
		if v := cargo[k]; v.Kind == 's' && v.Str != "" {
			d.runtime("rust", v.Str, "Cargo.toml", "rust-version")
			break
		}
	}
	d.protect = append(d.protect, "tests/**")
	d.protect = append(d.protect, d.config("clippy.toml", ".clippy.toml")...)
	d.protect = append(d.protect, d.present("rustfmt.toml", ".rustfmt.toml")...)
}

// pythonProject detects a Python project: ruff and mypy when the project
// configures them, and pytest, each reading the project's own
// configuration: plain mypy when it names the files to check, ruff check
// --no-fix when it sets fix = true.
func (d *dirDetection) pythonProject() {
	if !d.has("pytest.ini") && !d.has("pyproject.toml") && !d.has("setup.cfg") {
		return
	}
	pyproject := parseTOML(d.read("pyproject.toml"))
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
	if v := pyproject["project.requires-python"]; v.Kind == 's' && strings.TrimSpace(v.Str) != "" {
		d.runtime("python", v.Str, "pyproject.toml", "requires-python")
	}
	if file, ok := d.ruffConfig(); ok {
		if d.ruffFixes() {
			d.add("ruff", "ruff check --no-fix")
			d.notes["ruff"] = file + " sets fix = true: --no-fix keeps the check from rewriting files"
		} else {
			d.add("ruff", "ruff check")
		}
	}
	if file, files, ok := d.mypyConfig(); ok {
		if files != "" {
			d.add("mypy", "mypy")
			d.notes["mypy"] = file + " names what to check (" + files + "); plain mypy checks that"
		} else {
			d.add("mypy", "mypy .")
		}
	}
	d.add("pytest", "python3 -m pytest", "-m pytest")
	if file := d.pytestTestpaths(); file != "" {
		d.notes["pytest"] = file + " sets testpaths; pytest without paths runs those"
	}
	d.tests = append(d.tests, testCommand{manifest, "python3 -m pytest"})
	d.protect = append(d.protect, "tests/**", "**/test_*.py", "**/*_test.py", "**/conftest.py")
	d.protect = append(d.protect, d.present("pytest.ini", "tox.ini", "mypy.ini", ".flake8", "ruff.toml", ".ruff.toml", ".pylintrc")...)
}

// ruffConfig returns the file that configures ruff in the directory, in
// ruff's order (.ruff.toml, ruff.toml, pyproject.toml's [tool.ruff]).
func (d *dirDetection) ruffConfig() (string, bool) {
	for _, f := range []string{".ruff.toml", "ruff.toml"} {
		if d.has(f) {
			return f, true
		}
	}
	for k := range parseTOML(d.read("pyproject.toml")) {
		if k == "tool.ruff" || strings.HasPrefix(k, "tool.ruff.") {
			return "pyproject.toml", true
		}
	}
	// A [tool.ruff] table with no keys of its own.
	if strings.Contains(d.read("pyproject.toml"), "[tool.ruff") {
		return "pyproject.toml", true
	}
	return "", false
}

// ruffFixes reports whether the directory's ruff configuration sets fix =
// true, which makes ruff check rewrite the files it checks.
func (d *dirDetection) ruffFixes() bool {
	file, ok := d.ruffConfig()
	if !ok {
		return false
	}
	key := "fix"
	if file == "pyproject.toml" {
		key = "tool.ruff.fix"
	}
	v := parseTOML(d.read(file))[key]
	return v.Kind == 'b' && v.Bool
}

// mypyConfig returns the file that configures mypy, in mypy's order
// (mypy.ini, .mypy.ini, pyproject.toml's [tool.mypy], setup.cfg's
// [mypy]), and what it names to check (files, packages, modules), if
// anything.
func (d *dirDetection) mypyConfig() (file, targets string, ok bool) {
	fromINI := func(f, section string) (string, bool) {
		ini := parseINI(d.read(f))
		found := false
		for k := range ini {
			if strings.HasPrefix(k, section+".") {
				found = true
			}
		}
		if !found && !strings.Contains(d.read(f), "["+section+"]") {
			return "", false
		}
		for _, k := range []string{"files", "packages", "modules"} {
			if v := strings.Join(strings.Fields(ini[section+"."+k]), " "); v != "" {
				return k + " = " + v, true
			}
		}
		return "", true
	}
	for _, f := range []string{"mypy.ini", ".mypy.ini"} {
		if d.has(f) {
			t, _ := fromINI(f, "mypy")
			return f, t, true
		}
	}
	if d.has("pyproject.toml") {
		py := parseTOML(d.read("pyproject.toml"))
		found := strings.Contains(d.read("pyproject.toml"), "[tool.mypy")
		for k := range py {
			if strings.HasPrefix(k, "tool.mypy.") {
				found = true
			}
		}
		for _, t := range []string{"files", "packages", "modules"} {
			if v := py["tool.mypy."+t]; v.Kind == 's' && v.Str != "" {
				targets = t + " = " + v.Str
			} else if len(v.Strs) > 0 {
				targets = t + " = " + strings.Join(v.Strs, ", ")
			}
			if targets != "" {
				break
			}
		}
		if found {
			return "pyproject.toml", targets, true
		}
	}
	if d.has("setup.cfg") {
		if t, ok := fromINI("setup.cfg", "mypy"); ok {
			return "setup.cfg", t, true
		}
	}
	return "", "", false
}

// pytestTestpaths returns the file that sets pytest's testpaths, in
// pytest's order (pytest.ini, pyproject.toml, tox.ini, setup.cfg), or "".
func (d *dirDetection) pytestTestpaths() string {
	if d.has("pytest.ini") {
		if parseINI(d.read("pytest.ini"))["pytest.testpaths"] != "" {
			return "pytest.ini"
		}
		return ""
	}
	if v := parseTOML(d.read("pyproject.toml"))["tool.pytest.ini_options.testpaths"]; v.Str != "" || len(v.Strs) > 0 {
		return "pyproject.toml"
	}
	if d.has("tox.ini") && parseINI(d.read("tox.ini"))["pytest.testpaths"] != "" {
		return "tox.ini"
	}
	if d.has("setup.cfg") && parseINI(d.read("setup.cfg"))["tool:pytest.testpaths"] != "" {
		return "setup.cfg"
	}
	return ""
}

// javaProject detects a Maven or Gradle build (not a module inside
// another): mvn -q -o verify, or gradle check, through the project's
// wrapper when it has one.
func (d *dirDetection) javaProject() {
	if d.has("pom.xml") && !d.inside("maven") {
		d.covered["maven"] = append(d.covered["maven"], d.dir)
		d.det.cache("~/.m2")
		d.det.Found = append(d.det.Found, d.rel("pom.xml"))
		mvn := "mvn"
		if d.has("mvnw") {
			mvn = "./mvnw"
		}
		d.add("mvn-verify", mvn+" -q -o verify", "java")
		d.notes["mvn-verify"] = "-o runs offline, from ~/.m2: fetch the dependencies once (" + mvn + " dependency:go-offline) or drop -o"
		d.tests = append(d.tests, testCommand{d.rel("pom.xml"), mvn + " -q -o verify"})
		d.protect = append(d.protect, "**/src/test/**")
		d.protect = append(d.protect, d.present("checkstyle.xml")...)
	}
	build := d.present("build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts")
	if len(build) > 0 && !d.inside("gradle") {
		d.covered["gradle"] = append(d.covered["gradle"], d.dir)
		d.det.cache("~/.gradle")
		d.det.Found = append(d.det.Found, d.rel(build[0]))
		gradle := "gradle"
		if d.has("gradlew") {
			gradle = "./gradlew"
		}
		d.add("gradle-check", gradle+" check", "java")
		d.tests = append(d.tests, testCommand{d.rel(build[0]), gradle + " check"})
		d.protect = append(d.protect, "**/src/test/**")
		d.protect = append(d.protect, d.present("checkstyle.xml")...)
	}
}

// runtime records a runtime version the directory's manifest asks for.
func (d *dirDetection) runtime(name, needs, file, key string) {
	d.det.Runtimes = append(d.det.Runtimes, Runtime{Name: name, Needs: strings.TrimSpace(needs), File: d.rel(file), Key: key, Dir: d.dir})
}

var goLine = lazyre.New(`(?m)^go[ \t]+(\S+)[ \t]*(?://.*)?$`)

// makeTargets detects a Makefile's lint, check and test targets. Where
// the directory has an ecosystem's own test command, the Makefile gives
// way to it (that is what its tools expect, and a Makefile test target
// often does more: cleans caches, builds, runs integration suites, and
// takes much longer), and its test target is listed as skipped. A check
// target that runs the test or lint target (as a prerequisite or through
// make) stands for it. A target whose recipe rewrites files (a formatter,
// a --fix) is skipped.
func (d *dirDetection) makeTargets(mk makefile) {
	if !mk.has("lint") && !mk.has("check") && !mk.has("test") {
		return
	}
	eco := len(d.steps) > 0
	checkRuns := mk.has("check") && rewriter(strings.Join(mk.recipe("check"), "\n"), d.ruffFixes()) == ""
	added := false
	for _, t := range []string{"lint", "check", "test"} {
		switch {
		case !mk.has(t):
			continue
		case t == "test" && len(d.tests) > 0:
			d.det.Skipped = append(d.det.Skipped, Skip{Path: d.rel("Makefile"), Reason: makeSkipReason(d.tests)})
			continue
		case eco && t != "test":
			continue // the ecosystem's own lint steps
		case t != "check" && !eco && checkRuns && mk.runs("check", t):
			continue // make check runs it
		}
		if w := rewriter(strings.Join(mk.recipe(t), "\n"), d.ruffFixes()); w != "" {
			d.det.Skipped = append(d.det.Skipped, Skip{Path: d.rel("Makefile"),
				Reason: t + " target runs " + w + ", which rewrites files; a verify step must only check them"})
			continue
		}
		d.add("make-"+t, "make "+t)
		added = true
	}
	if added {
		d.det.Found = append(d.det.Found, d.rel("Makefile"))
		d.protect = append(d.protect, "Makefile")
	}
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
		return nil, &Error{File: FileName, Msg: "no orket.yaml and no verify steps detected (looked for go.mod, package.json, Cargo.toml, pyproject.toml, pytest.ini, setup.cfg, pom.xml, build.gradle, a Makefile lint, check or test target)",
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
		if n := det.Notes[s.Name]; n != "" {
			b.WriteString("      # " + strings.Map(func(r rune) rune {
				if unicode.IsControl(r) {
					return ' '
				}
				return r
			}, n) + "\n")
		}
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
