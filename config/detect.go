package config

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// A Detection is what orket found in a repository's manifests: the verify
// steps it would run, and which files told it so.
type Detection struct {
	Found []string // manifest paths, repository-relative ("go.mod", "web/package.json")
	Steps []Step
}

// detectDepth is how deep below the root manifests are looked for: the root
// and two levels of subdirectories cover the usual monorepo layouts.
const detectDepth = 2

// skipDirs are never searched for manifests.
var skipDirs = map[string]bool{
	"node_modules": true, "vendor": true, "target": true, "dist": true,
	"build": true, "testdata": true, "__pycache__": true, "venv": true,
}

// Detect looks for go.mod, package.json, Cargo.toml, Python test
// configuration and a Makefile test target at the root of a repository and
// below it, and returns the verify steps they imply. Steps of a
// subdirectory run there (dir) and are named after it ("web:npm-test").
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
			if strings.HasPrefix(e.Name(), ".") || skipDirs[e.Name()] {
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
	return det, nil
}

var makeTestTarget = regexp.MustCompile(`(?m)^test[ \t]*:([^=]|$)`)

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
	var tests []int // indexes of test steps, which a Makefile test target replaces

	if has("go.mod") {
		det.Found = append(det.Found, rel("go.mod"))
		add("go-vet", "go vet ./...")
		steps[len(steps)-1].When = []string{prefixGlob(dir, "**/*.go"), rel("go.mod"), rel("go.sum")}
		tests = append(tests, len(steps))
		add("go-test", "go test ./...")
	}
	if has("package.json") && !inside("node") {
		covered["node"] = append(covered["node"], dir)
		det.Found = append(det.Found, rel("package.json"))
		var pkg struct {
			Scripts map[string]string `json:"scripts"`
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
			if s == "test" {
				tests = append(tests, len(steps))
			}
			add(pm+"-"+s, pm+" run "+s)
		}
	}
	if has("Cargo.toml") && !inside("rust") {
		covered["rust"] = append(covered["rust"], dir)
		det.Found = append(det.Found, rel("Cargo.toml"))
		tests = append(tests, len(steps))
		add("cargo-test", "cargo test")
	}
	pyproject := read("pyproject.toml")
	if has("pytest.ini") || has("pyproject.toml") || has("setup.cfg") {
		for _, f := range []string{"pyproject.toml", "pytest.ini", "setup.cfg"} {
			if has(f) {
				det.Found = append(det.Found, rel(f))
			}
		}
		if strings.Contains(pyproject, "[tool.ruff") {
			add("ruff", "ruff check .")
		}
		if strings.Contains(pyproject, "[tool.mypy") || has("mypy.ini") {
			add("mypy", "mypy .")
		}
		tests = append(tests, len(steps))
		add("pytest", "python3 -m pytest")
	}
	if has("Makefile") && makeTestTarget.MatchString(read("Makefile")) {
		det.Found = append(det.Found, rel("Makefile"))
		// The project's own test target is what its authors run: it
		// replaces the ecosystem test steps of this directory.
		for i := len(tests) - 1; i >= 0; i-- {
			steps = append(steps[:tests[i]], steps[tests[i]+1:]...)
		}
		add("make-test", "make test")
	}
	for _, s := range steps {
		if dir != "." {
			s.Name = dir + ":" + s.Name
			s.Dir = dir
		}
		det.Steps = append(det.Steps, s)
	}
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
	return c, nil
}

// Render writes the orket.yaml that orket init creates for a detection.
func Render(det *Detection) []byte {
	var b strings.Builder
	b.WriteString("# orket.yaml: how orket verifies a change to this repository.\n")
	b.WriteString("# Written by orket init. Every key: orket schema. Reference: docs/config.md.\n")
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
	return []byte(b.String())
}

var plainYAML = regexp.MustCompile(`^[A-Za-z0-9_./-][A-Za-z0-9_ ./:+=-]*$`)

// yamlString quotes s for a YAML flow or block scalar when it needs it.
func yamlString(s string) string {
	if plainYAML.MatchString(s) && !strings.Contains(s, ": ") && !strings.HasSuffix(s, ":") &&
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

// GitIgnore is written to .orket/.gitignore by orket init: orket's local
// state stays out of commits unless the team chooses to share it.
const GitIgnore = `# orket's local state: run records, snapshots, locks and lesson memory.
# It stays out of commits. To share lessons with your team, add:
#   !memory/
#   !memory/**
*
!.gitignore
`
