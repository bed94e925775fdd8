package orket

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/orket/orket/config"
	"github.com/orket/orket/internal/lazyre"
	"github.com/orket/orket/sandbox"
	"github.com/orket/orket/store"
	"github.com/orket/orket/txn"
)

// SandboxView is the kernel sandbox of a run's edit command, as the run
// record reports it: what was enforced, and the lines of the edit's
// output where a write was refused (the sandbox caught it; the barrier's
// measurement catches what got through).
type SandboxView struct {
	sandbox.Report
	Denied []string `json:"denied,omitempty"`
	// Ignored are the git-ignored paths outside the scope among the
	// refusals: what sandbox.write would open (not the edit's fault).
	Ignored []string `json:"ignored,omitempty"`
}

// checkSandbox is the plan's word on sandbox: required: a kernel without
// Landlock refuses the run before anything is written.
func (r *run) checkSandbox() error {
	if _, ok := r.req.Edit.(CommandEdit); !ok {
		return nil
	}
	mode, err := sandbox.ParseMode(r.req.Config.Sandbox.Mode)
	if err != nil {
		return &Error{Code: EConfigInvalid, Msg: err.Error(), Hint: "write auto, required or off"}
	}
	if mode != sandbox.Required {
		return nil
	}
	if abi, reason := sandbox.Available(); abi == 0 {
		return &sandboxUnavailableError{Reason: reason}
	}
	return nil
}

// sandbox makes the kernel sandbox of the run's edit command
// (docs/sandbox.md): writes only in the scope's directories, a private
// TMPDIR, sandbox.write and what a git commit needs. Under auto, a kernel
// without it runs the edit as before, and the user is told.
func (r *run) sandbox() (*sandbox.Sandbox, error) {
	cfg := r.req.Config
	mode, err := sandbox.ParseMode(cfg.Sandbox.Mode)
	if err != nil {
		return nil, &Error{Code: EConfigInvalid, Msg: err.Error(), Hint: "write auto, required or off"}
	}
	var build []sandbox.BuildDir
	if mode != sandbox.Off && r.tx != nil {
		build = buildDirs(r.req.Repo.Root, r.tx.Snapshot())
	}
	box, err := sandbox.New(sandbox.Policy{Mode: mode, Root: r.req.Repo.Root, Scope: r.scope.Patterns(), Write: cfg.Sandbox.Write,
		Build: build, GitDir: r.req.Repo.GitDir, AllowGit: true, Name: r.rec.RunID})
	var unavailable *sandbox.UnavailableError
	switch {
	case errors.As(err, &unavailable):
		return nil, &sandboxUnavailableError{Reason: unavailable.Reason}
	case err != nil:
		return nil, internal("set up the kernel sandbox", "set sandbox: off in orket.yaml to run without it", err)
	}
	rep := box.Report()
	r.rec.Sandbox = &SandboxView{Report: rep}
	if !rep.Enforced && rep.Mode == sandbox.Auto {
		r.obs.Warn("the edit command runs without the kernel sandbox (" + rep.Reason + "); the barrier still measures what it writes")
	}
	return box, nil
}

// sandboxWriteYAML is orket.yaml's sandbox section with entries added to
// sandbox.write, in one line: what a refusal of ignored paths tells the
// user to write.
func sandboxWriteYAML(cfg config.Sandbox, add []string) string {
	write := append([]string{}, cfg.Write...)
	for _, w := range add {
		write = appendUnique(write, w)
	}
	q := make([]string, len(write))
	for i, w := range write {
		q[i] = yamlScalar(w)
	}
	s := "sandbox: {"
	if cfg.Mode != "" {
		s += "mode: " + yamlScalar(cfg.Mode) + ", "
	}
	return s + "write: [" + strings.Join(q, ", ") + "]}"
}

// yamlScalar quotes s for a YAML flow sequence unless it is plainly a
// path (letters, digits and ._/~-, not starting with a character YAML
// reads otherwise).
func yamlScalar(s string) string {
	plain := s != "" && !strings.ContainsAny(s[:1], "-?:,[]{}#&*!|>'\"%@`~") || strings.HasPrefix(s, "~/")
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._/~-", c)) {
			plain = false
		}
	}
	if plain {
		return s
	}
	return strconv.Quote(s)
}

// buildNames are the build and cache directories of the usual
// toolchains: opened to an edit when they are there and git ignores them
// (a build made them before).
var buildNames = []string{"target", "build", "dist", ".gradle", "node_modules/.cache", ".pytest_cache", ".mypy_cache", ".ruff_cache", "__pycache__"}

// maxPycache bounds the __pycache__ directories opened next to Python
// sources (each is a rule of the sandbox, carried in the environment).
const maxPycache = 256

// buildManifestDepth is how deep below the root a manifest names a
// project, as orket init looks for them.
const buildManifestDepth = 2

// buildDirs are the git-ignored directories in the repository that its
// toolchains write when they build and test (docs/sandbox.md): made when
// missing where the toolchain always writes them (a crate's target, a
// Python project's .pytest_cache and the __pycache__ beside its sources,
// .mypy_cache and .ruff_cache beside mypy's and ruff's own configuration
// files, node_modules/.cache of a package with node_modules), opened when
// already there for the other buildNames at the root and in each
// project's directory. Only directories git ignores and tracks nothing in
// are named, judged by the rules the snapshot read. The manifests and the
// Python sources are found in the snapshot's list of the tree, in one
// pass: every command edit pays for this, and walking the disk for them
// (config.Detect) cost 250 ms a run on a tree of 100,000 files.
func buildDirs(root string, snap *txn.Snapshot) []sandbox.BuildDir {
	var manifests []string
	pyDirs := map[string]bool{}
	// One pass over the tree's paths (the index's, then the files it does
	// not hold); whether a match is there is asked of it alone.
	found := map[string]bool{}
	snap.Paths(func(p string) {
		switch base := p[strings.LastIndexByte(p, '/')+1:]; {
		case strings.HasSuffix(base, ".py"):
			if d := path.Dir(p); !pyDirs[d] && !store.InDir(p) && snap.Pre.Files[p] != nil {
				pyDirs[d] = true
			}
		case isBuildManifest(base) && strings.Count(p, "/") <= buildManifestDepth && !hiddenDir(p) && !store.InDir(p):
			if !found[p] && snap.Pre.Files[p] != nil {
				found[p] = true
				manifests = append(manifests, p)
			}
		}
	})
	sort.Strings(manifests)
	var out []sandbox.BuildDir
	seen := map[string]bool{}
	add := func(dir, name string, make bool, why string) {
		p := path.Join(dir, name)
		if seen[p] || !snap.IgnoredPath(p, true) {
			return
		}
		seen[p] = true
		out = append(out, sandbox.BuildDir{Path: p, Make: make, Why: why})
	}
	has := func(dir string, names ...string) bool {
		for _, n := range names {
			if snap.Pre.Files[path.Join(dir, n)] != nil {
				return true
			}
		}
		return false
	}
	projects := []string{"."}
	for _, m := range manifests {
		dir, file := path.Dir(m), path.Base(m)
		projects = append(projects, dir)
		switch file {
		case "Cargo.toml":
			add(dir, "target", true, m)
		case "package.json":
			if fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(dir), "node_modules")); err == nil && fi.IsDir() {
				add(dir, "node_modules/.cache", true, m)
			}
		default: // a Python project's
			add(dir, ".pytest_cache", true, m)
			if has(dir, "mypy.ini", ".mypy.ini") {
				add(dir, ".mypy_cache", true, m)
			}
			if has(dir, "ruff.toml", ".ruff.toml") {
				add(dir, ".ruff_cache", true, m)
			}
			for _, d := range sourceDirs(pyDirs, dir, maxPycache) {
				add(d, "__pycache__", true, m)
			}
		}
	}
	for _, dir := range projects {
		for _, name := range buildNames {
			add(dir, name, false, "already there")
		}
	}
	return out
}

// isBuildManifest reports whether name is the manifest of a toolchain that
// writes build or cache directories beside it.
func isBuildManifest(name string) bool {
	switch name {
	case "Cargo.toml", "package.json", "pyproject.toml", "pytest.ini", "setup.cfg":
		return true
	}
	return false
}

// hiddenDir reports whether a path lies in a directory whose name starts
// with a dot: no project keeps its manifest there.
func hiddenDir(p string) bool {
	for _, d := range strings.Split(path.Dir(p), "/") {
		if strings.HasPrefix(d, ".") && d != "." {
			return true
		}
	}
	return false
}

// sourceDirs returns the directories of dirs at or below dir (the first
// n, sorted).
func sourceDirs(dirs map[string]bool, dir string, n int) []string {
	var out []string
	for d := range dirs {
		if dir == "." || d == dir || strings.HasPrefix(d, dir+"/") {
			out = append(out, d)
		}
	}
	sort.Strings(out)
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// deniedPath finds the path a refused write names in a line of output, as
// the usual tools print it: sh's "cannot create X: Permission denied",
// coreutils' "cannot touch 'X'", Python's "Permission denied: 'X'", Go's
// "open X: permission denied". It returns "" when it finds none.
func deniedPath(line string) string {
	for _, re := range deniedPatterns() {
		if m := re.FindStringSubmatch(line); m != nil {
			return m[1]
		}
	}
	return ""
}

var deniedPatterns = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`(?i)(?:permission denied|operation not permitted): ['"]([^'"]+)['"]`),
		regexp.MustCompile(`(?i)['"\x60\x{2018}]([^'"\x60\x{2019}]+)['"\x60\x{2019}]: (?:permission denied|operation not permitted|invalid cross-device link)`),
		regexp.MustCompile(`(?i)(?:cannot create|cannot touch|cannot open|cannot remove|cannot write|open|mkdir|create|remove|unlink|rename|write|symlink|link) (\S+?): (?:permission denied|operation not permitted|invalid cross-device link)`),
		// Rust's io::Error with the path after it (the tempfile crate), and
		// a cause line joined to its context (see deniedLines).
		regexp.MustCompile(`(?i)(?:permission denied|operation not permitted) \(os error \d+\) at path "([^"]+)"`),
		regexp.MustCompile(`(?i)failed to [a-z ]+?:? [\x60']?([^\x60'\s]+?)[\x60']?: (?:permission denied|operation not permitted)`),
	}
})

// rustContext is the line before a Rust error's causes that names the
// path ("failed to open: /x/target/debug/.cargo-lock", "failed to create
// directory `/x/target/debug`").
var rustContext = lazyre.New(`(?i)(?:error: )?(failed to [a-z ]+?:? [\x60']?[^\x60'\s]+[\x60']?)\s*$`)

// refusals sorts the sandbox's refusals (refusedOutside).
type refusals struct {
	// Outside are the paths outside the scope the edit tried to write,
	// as the repository names them (outside it: as given).
	Outside []string
	// Ignored are those of Outside's kind that git ignores (and that hold
	// nothing it tracks): a build directory the sandbox did not open is
	// the configuration's doing, not the edit's. Write are the
	// sandbox.write entries that would open them: each one's outermost
	// ignored directory.
	Ignored, Write []string
	// All: every refusal named a path.
	All bool
}

// refusedOutside sorts the sandbox's refusals: the paths outside the
// scope the edit tried to write, and whether every refusal named a path.
// A refusal inside the scope is the file's own permissions, not the
// sandbox.
func (r *run) refusedOutside(lines []string) refusals {
	rf := refusals{All: true}
	for _, l := range lines {
		p := deniedPath(l)
		if p == "" {
			rf.All = false
			continue
		}
		abs := p
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(r.req.Repo.Root, p)
		}
		// Where the write would have landed: through the symlinks of its
		// directory (pkg/out -> /elsewhere), as the kernel saw it.
		root := r.req.Repo.Root
		if real, err := filepath.EvalSymlinks(root); err == nil {
			root = real
		}
		if real, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
			abs = filepath.Join(real, filepath.Base(abs))
		}
		rel, err := filepath.Rel(root, filepath.Clean(abs))
		switch {
		case err != nil || rel == ".." || strings.HasPrefix(rel, "../"):
			rf.Outside = appendUnique(rf.Outside, p)
		case !r.scope.Contains(filepath.ToSlash(rel)):
			rel = filepath.ToSlash(rel)
			if w := r.ignoredEntry(rel, abs); w != "" {
				rf.Ignored, rf.Write = appendUnique(rf.Ignored, rel), appendUnique(rf.Write, w)
				continue
			}
			rf.Outside = appendUnique(rf.Outside, rel)
		}
	}
	return rf
}

// ignoredEntry returns, for a repository path inside a directory git
// ignores and tracks nothing in (a build or cache directory), the
// sandbox.write entry that opens it: that directory, the outermost one;
// "" for any other path. An ignored file that is no directory's (a .env,
// a *.log) is not a build directory's: writing it outside the scope is
// the edit's doing. The path itself counts as a directory when it is one,
// or when only a directory of its name would be ignored (gen/).
func (r *run) ignoredEntry(rel, abs string) string {
	if r.tx == nil {
		return ""
	}
	snap := r.tx.Snapshot()
	parts := strings.Split(rel, "/")
	for i := range parts[:len(parts)-1] {
		if p := strings.Join(parts[:i+1], "/"); snap.IgnoredPath(p, true) {
			return p
		}
	}
	if fi, err := os.Lstat(abs); err == nil {
		if fi.IsDir() && snap.IgnoredPath(rel, true) {
			return rel
		}
		return ""
	}
	if snap.IgnoredPath(rel, true) && !snap.IgnoredPath(rel, false) {
		return rel
	}
	return ""
}

// deniedLines are the lines of an edit's output where the kernel refused
// a write: the sandbox's catches, as the command reported them.
//
// A line that names no path takes the path from the line before it that
// does, as Rust tools print their errors (cargo's "failed to open: X",
// then "Caused by:", then "Permission denied (os error 13)"): the two are
// joined, "failed to open: X: Permission denied (os error 13)".
func deniedLines(out string) []string {
	var lines []string
	context := ""
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		if m := rustContext().FindStringSubmatch(l); m != nil {
			context = m[1]
		}
		if strings.Contains(l, "Permission denied") || strings.Contains(l, "Operation not permitted") ||
			strings.Contains(l, "Invalid cross-device link") || strings.Contains(l, "EACCES") || strings.Contains(l, "EPERM") {
			if deniedPath(l) == "" && context != "" {
				l = context + ": " + l
			}
			context = ""
			lines = append(lines, l)
			if len(lines) == 10 {
				break
			}
		}
	}
	return lines
}
