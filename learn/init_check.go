package learn

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/orket/orket/config"
	"github.com/orket/orket/preflight"
)

// A MissingTool is a program a detected step runs that is not where the
// step would find it.
type MissingTool struct {
	Tool  string   `json:"tool"`  // as the step runs it: "mvn", "./gradlew"; a Python module's name
	Why   string   `json:"why"`   // "not on PATH", "not executable", "python3 cannot import it"
	Steps []string `json:"steps"` // the steps that run it
}

// A RuntimeCheck is a runtime version the project asks for and the one
// installed.
type RuntimeCheck struct {
	config.Runtime
	// Installed is the version the runtime reports, as it writes it
	// ("v20.11.1", "3.11.7", "go1.26.8"); "" when it is not installed.
	Installed string `json:"installed"`
	OK        bool   `json:"ok"`
	// Problem says why the versions could not be compared.
	Problem string `json:"problem,omitempty"`
}

// probeTimeout bounds asking a tool its version.
const probeTimeout = 10 * time.Second

// missingTools returns the tools of a detection that a step would not
// find: a name not on PATH (nor in node_modules/.bin), a wrapper such as
// ./gradlew that is absent or not executable, java neither on PATH nor in
// $JAVA_HOME, a Python module python3 cannot import.
func missingTools(root string, det *config.Detection) []MissingTool {
	out := []MissingTool{}
	for _, t := range det.Tools {
		dir := filepath.Join(root, filepath.FromSlash(t.Dir))
		env := preflight.Env{Root: dir, Dirs: []string{filepath.Join(root, "node_modules", ".bin")}}
		why := ""
		switch {
		case t.Module:
			python := preflight.LookPath("python3", env)
			if python == "" {
				continue // python3 itself is reported
			}
			ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
			cmd := exec.CommandContext(ctx, python, "-c", "import importlib.util, sys; sys.exit(importlib.util.find_spec(sys.argv[1]) is None)", t.Command)
			cmd.Dir = root
			err := cmd.Run()
			cancel()
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.ExitCode() == 1 {
				why = "python3 cannot import it"
			}
		case preflight.LookPath(t.Command, env) != "":
		case t.Command == "java" && javaHome():
		case strings.Contains(t.Command, "/"):
			why = "not in the repository"
			if _, err := os.Stat(filepath.Join(dir, t.Command)); err == nil {
				why = "not executable (chmod +x " + strings.TrimPrefix(t.Command, "./") + ")"
			}
		default:
			why = "not on PATH"
		}
		if why != "" {
			out = append(out, MissingTool{Tool: t.Command, Why: why, Steps: t.Steps})
		}
	}
	return out
}

// javaHome reports whether $JAVA_HOME holds a java, which Maven, Gradle
// and their wrappers use before PATH.
func javaHome() bool {
	h := os.Getenv("JAVA_HOME")
	if h == "" {
		return false
	}
	fi, err := os.Stat(filepath.Join(h, "bin", "java"))
	return err == nil && !fi.IsDir() && fi.Mode().Perm()&0o111 != 0
}

// Line says what runtime version a manifest needs and what is
// installed: "package.json needs node >=22 (engines.node), but v20.11.1 is
// installed".
func (r RuntimeCheck) Line() string {
	needs := r.File + " needs " + r.Name + " " + r.Needs
	if r.Key != r.Name {
		needs += " (" + r.Key + ")"
	}
	switch {
	case r.Installed == "" && r.Problem == "":
		return needs + ", but " + r.Probe()[0] + " is not installed"
	case r.Installed == "":
		return needs + "; " + r.Problem
	case r.Problem != "":
		return needs + "; " + r.Installed + " is installed: " + r.Problem
	case !r.OK:
		return needs + ", but " + r.Installed + " is installed"
	}
	return needs + ": " + r.Installed + " is installed"
}

// checkRuntimes asks each runtime a manifest names for its version, in
// the manifest's directory (where version managers such as pyenv and
// rustup pick the one the project's steps get), and compares.
func checkRuntimes(root string, det *config.Detection) []RuntimeCheck {
	out := []RuntimeCheck{}
	for _, r := range det.Runtimes {
		c := RuntimeCheck{Runtime: r}
		argv := r.Probe()
		dir := filepath.Join(root, filepath.FromSlash(r.Dir))
		if path := preflight.LookPath(argv[0], preflight.Env{Root: dir}); path != "" {
			ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
			cmd := exec.CommandContext(ctx, path, argv[1:]...)
			cmd.Dir = dir
			// Never download a toolchain to answer: go would fetch the one
			// go.mod names, rustup the one rust-toolchain.toml names.
			cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "RUSTUP_AUTO_INSTALL=0")
			b, err := cmd.Output()
			cancel()
			c.Installed = config.InstalledVersion(string(b))
			switch {
			case err != nil && c.Installed == "":
				c.Problem = strings.Join(argv, " ") + " failed: " + err.Error()
			case c.Installed == "":
				c.Problem = strings.Join(argv, " ") + " printed no version"
			default:
				ok, err := r.Satisfied(c.Installed)
				c.OK = ok
				if err != nil {
					c.Problem = err.Error()
				}
			}
		}
		out = append(out, c)
	}
	return out
}
