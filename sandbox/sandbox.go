package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"golang.org/x/sys/unix"

	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/internal/gitdir"
	"github.com/orket/orket/store"
)

// A Mode says whether edit commands run in the sandbox (orket.yaml
// `sandbox:`).
type Mode string

const (
	// Auto sandboxes where the kernel can, and runs unsandboxed (saying
	// so in the report) where it cannot.
	Auto Mode = "auto"
	// Required refuses to run an edit command the kernel cannot sandbox.
	Required Mode = "required"
	// Off never sandboxes.
	Off Mode = "off"
)

// ParseMode reads a mode as orket.yaml spells it; "" is Auto.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "":
		return Auto, nil
	case Auto, Required, Off:
		return m, nil
	}
	return "", fmt.Errorf("sandbox mode %q is not auto, required or off", s)
}

// ErrUnavailable is what an UnavailableError is.
var ErrUnavailable = errors.New("kernel sandbox unavailable")

// An UnavailableError is the kernel's inability to sandbox, under
// Required.
type UnavailableError struct {
	Reason string // a sentence: "Landlock is not enabled in this kernel"
}

func (e *UnavailableError) Error() string {
	return "kernel sandbox required but unavailable: " + e.Reason
}

// Is makes errors.Is(err, ErrUnavailable) hold.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// A Policy says where an edit command may write.
type Policy struct {
	Mode  Mode
	Root  string   // the repository's work tree, absolute
	Scope []string // scope patterns: repository-relative, slash-separated
	// Write are the sandbox.write paths (build caches): absolute, "~/..."
	// (Home), or relative to Root. A missing one is created as a
	// directory: the user declared it writable.
	Write []string
	Home  string // for "~" in Write; "" is the user's home directory
	// Build are the git-ignored build and cache directories inside Root
	// that the edit's toolchains write (target, .pytest_cache): the
	// caller vouches that git ignores them and tracks nothing in them.
	// Each is opened, never through a symbolic link; one with Make is
	// made first when it is missing (Landlock opens only what exists).
	// One inside a scope directory needs nothing.
	Build []BuildDir
	// GitDir is the repository's git directory; "" reads Root/.git (a
	// directory, or the file of a linked worktree).
	GitDir string
	// AllowGit lets the edit commit, branch and stage: the git
	// directories become writable. Landlock cannot open a directory's
	// files without its subdirectories, so .git/config, .git/hooks and
	// .git/info are then left to measurement (the report lists them).
	AllowGit bool
	// TempParent is where the run's private temporary directory is made;
	// "" is os.TempDir().
	TempParent string
	// Name goes into the temporary directory's name (a run id).
	Name string
}

// A BuildDir is a git-ignored directory a toolchain writes (Policy.Build).
type BuildDir struct {
	Path string // repository-relative, slash-separated
	Make bool   // make it when it is missing
	Why  string // what writes it, for the report: "Cargo.toml"
}

// A Report is what the sandbox enforced, for the run record.
type Report struct {
	Mode     Mode   `json:"mode"`
	Enforced bool   `json:"enforced"`
	Reason   string `json:"reason,omitempty"` // why it is not enforced
	ABI      int    `json:"abi,omitempty"`    // the kernel's Landlock ABI version
	TempDir  string `json:"temp_dir,omitempty"`
	// Scope is how each scope pattern became directories; Widened ones
	// allow more than the pattern, and measurement is the exact line.
	Scope    []ScopeDir `json:"scope,omitempty"`
	Writable []Grant    `json:"writable,omitempty"`
	// Unguarded are paths no edit may write that the sandbox still lets
	// the command write; measurement guards them.
	Unguarded []string `json:"unguarded,omitempty"`
}

// A Grant is a directory (and everything below it) or a file the
// command may write.
type Grant struct {
	Path string `json:"path"`           // absolute
	For  string `json:"for"`            // scope, temp, sandbox.write, build, git, device
	Note string `json:"note,omitempty"` // created, file, ...
	dir  bool
	mask uint64
}

// String is the report in one line for people.
func (r Report) String() string {
	switch {
	case r.Mode == Off:
		return "sandbox off"
	case !r.Enforced:
		return "sandbox not enforced: " + r.Reason
	}
	var dirs []string
	for _, sd := range r.Scope {
		for _, d := range sd.Dirs {
			dirs = appendOnce(dirs, d)
		}
	}
	devices := 0
	for _, g := range r.Writable {
		switch g.For {
		case "scope":
		case "device":
			devices++
		case "temp":
			dirs = append(dirs, "$TMPDIR")
		default:
			dirs = append(dirs, g.Path)
		}
	}
	s := fmt.Sprintf("sandbox: Landlock ABI %d; writes only to %s", r.ABI, strings.Join(dirs, ", "))
	if devices > 0 {
		s += fmt.Sprintf(" and %d devices", devices)
	}
	return s
}

// A Sandbox runs edit commands under one policy. Its zero value and nil
// run commands unsandboxed.
type Sandbox struct {
	report Report
	spec   *spec // nil when not enforced
}

// envVar carries a spec from orket to the helper it re-executes.
const envVar = "ORKET_SANDBOX_EXEC"

// self is the helper's program: the running orket binary, re-executed.
// A benchmark points it at another build of orket.
var self = "/proc/self/exe"

// helperName is argv[0] of the helper process (ps shows it briefly).
const helperName = "orket-sandbox"

// A spec is what the helper process enforces before it execs.
type spec struct {
	V       int    `json:"v"`
	Path    string `json:"path,omitempty"` // the program; "" looks argv[0] up in PATH
	Handled uint64 `json:"handled"`
	Rules   []rule `json:"rules"`
}

type rule struct {
	Access uint64   `json:"a"`
	Paths  []string `json:"p"`
}

// Access rights. Only writes are handled, so reads and execution stay
// allowed everywhere. Devices can never be made.
const (
	writeDir = ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile |
		ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo |
		ll.AccessFSMakeSym | ll.AccessFSRefer
	writeFile = ll.AccessFSWriteFile | ll.AccessFSTruncate
	// The git directory's own files (index, HEAD, their locks) and state
	// directories (rebase-merge, sequencer); no symlinks, sockets or fifos.
	gitTopLevel = writeFile | ll.AccessFSMakeReg | ll.AccessFSRemoveFile | ll.AccessFSMakeDir |
		ll.AccessFSRemoveDir | ll.AccessFSRefer
	handledV1 = ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeChar |
		ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo |
		ll.AccessFSMakeBlock | ll.AccessFSMakeSym
)

// handled returns the write rights an ABI version can restrict.
func handled(abi int) uint64 {
	h := uint64(handledV1)
	if abi >= 2 {
		h |= ll.AccessFSRefer
	}
	if abi >= 3 {
		h |= ll.AccessFSTruncate
	}
	return h
}

// devices are written by ordinary commands (> /dev/null) and lead
// nowhere.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/pts"}

// abiVersion reports the kernel's Landlock ABI version; tests replace it.
var abiVersion = func() (int, error) { return ll.LandlockGetABIVersion() }

// New prepares a sandbox: it checks the kernel, maps the scope to
// directories, creates missing sandbox.write directories and the run's
// private temporary directory. Under Required an unable kernel is an
// *UnavailableError; under Auto it is a report that says why. Close
// removes the temporary directory.
func New(p Policy) (*Sandbox, error) {
	if p.Mode == "" {
		p.Mode = Auto
	}
	s := &Sandbox{report: Report{Mode: p.Mode}}
	if p.Mode == Off {
		return s, nil
	}
	abi, reason := probe()
	if reason != "" {
		if p.Mode == Required {
			return nil, &UnavailableError{Reason: reason}
		}
		s.report.Reason = reason
		return s, nil
	}
	root, err := filepath.EvalSymlinks(p.Root)
	if err != nil {
		return nil, fmt.Errorf("sandbox: repository root: %w", err)
	}
	var g grantSet
	s.report.Scope = ScopeDirs(root, p.Scope)
	g.addScope(root, s.report.Scope)
	if len(p.Build) > 0 {
		fsys, err := fsroot.Open(root)
		if err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		defer fsys.Close()
		g.addBuild(fsys, root, p.Build)
	}
	if err := g.addWrite(root, p.Write, p.Home); err != nil {
		return nil, err
	}
	gitDirs := gitDirs(root, p.GitDir)
	if p.AllowGit {
		g.addGit(gitDirs)
	}
	g.addDevices()
	tmp, err := os.MkdirTemp(p.TempParent, "orket-edit-"+sanitize(p.Name)+"*")
	if err != nil {
		return nil, fmt.Errorf("sandbox: make the temporary directory: %w", err)
	}
	if real, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = real
	}
	g.add(Grant{Path: tmp, For: "temp", dir: true, mask: writeDir})

	s.report.Enforced, s.report.ABI, s.report.TempDir = true, abi, tmp
	s.report.Writable = dedupe(g.grants)
	s.report.Unguarded = unguarded(root, gitDirs, s.report.Writable)
	s.spec = buildSpec(abi, s.report.Writable)
	s.report.Writable = append(s.report.Writable, g.missing...)
	return s, nil
}

// A grantSet gathers New's grants, in order: those opened, and those of
// missing directories, reported but not opened.
type grantSet struct {
	grants  []Grant
	missing []Grant
}

// add grants g.
func (s *grantSet) add(g Grant) { s.grants = append(s.grants, g) }

// addOrReport grants g, or reports it when its directory is missing (no
// rights); a grant without a path is neither.
func (s *grantSet) addOrReport(g Grant) {
	switch {
	case g.Path != "" && g.mask == 0:
		s.missing = append(s.missing, g) // reported, not opened
	case g.Path != "":
		s.add(g)
	}
}

// addScope grants the directories of the scope.
func (s *grantSet) addScope(root string, scope []ScopeDir) {
	for _, sd := range scope {
		for _, d := range sd.Dirs {
			s.add(Grant{Path: filepath.Join(root, filepath.FromSlash(d)), For: "scope", dir: true, mask: writeDir})
		}
	}
}

// addBuild grants the build directories.
func (s *grantSet) addBuild(fsys *fsroot.Root, root string, build []BuildDir) {
	for _, b := range build {
		s.addOrReport(buildGrant(fsys, root, b, s.grants))
	}
}

// addWrite grants the sandbox.write directories.
func (s *grantSet) addWrite(root string, write []string, home string) error {
	for _, w := range write {
		g, err := writeGrant(w, root, home)
		if err != nil {
			return err
		}
		s.addOrReport(g)
	}
	return nil
}

// addGit grants the git directories' files and their objects, refs and
// logs directories.
func (s *grantSet) addGit(gitDirs []string) {
	for _, d := range gitDirs {
		s.add(Grant{Path: d, For: "git", dir: true, mask: gitTopLevel, Note: "its files"})
		for _, sub := range []string{"objects", "refs", "logs"} {
			if fi, err := os.Lstat(filepath.Join(d, sub)); err == nil && fi.IsDir() {
				s.add(Grant{Path: filepath.Join(d, sub), For: "git", dir: true, mask: writeDir})
			}
		}
	}
}

// addDevices grants the devices that exist here.
func (s *grantSet) addDevices() {
	for _, d := range devices {
		if fi, err := os.Stat(d); err == nil {
			s.add(Grant{Path: d, For: "device", dir: fi.IsDir(), mask: writeFile})
		}
	}
}

// Available reports the kernel's Landlock ABI version and, when edit
// commands cannot be sandboxed here, why. It creates nothing: for a plan
// or a dry run (ScopeDirs gives the directories).
func Available() (abi int, reason string) { return probe() }

// probe returns the ABI version, or why the kernel cannot sandbox.
func probe() (int, string) {
	abi, err := abiVersion()
	switch {
	case err != nil || abi < 1:
		if err == nil {
			err = errors.New("no ABI version")
		}
		return 0, "Landlock is not available in this kernel (" + err.Error() + "); it needs Linux 5.19 or later with landlock in the lsm= boot list"
	case abi < 2:
		return abi, "the kernel's Landlock ABI 1 refuses every rename and link across directories, which git and build tools need; Linux 5.19 or later has ABI 2"
	}
	if _, err := os.Stat(self); err != nil {
		return abi, "orket cannot re-execute itself through " + self + " (is /proc mounted?)"
	}
	return abi, ""
}

// buildGrant makes a build directory a grant: nothing when it is missing
// (and not to be made) or already inside a granted directory; a grant
// without rights, reported, when it is not a directory (a symbolic link
// above all: the edit may have left it there to be opened elsewhere).
func buildGrant(fsys *fsroot.Root, root string, b BuildDir, grants []Grant) Grant {
	abs := filepath.Join(root, filepath.FromSlash(b.Path))
	for _, g := range grants {
		if g.dir && g.mask&writeDir == writeDir && within(abs, g.Path) {
			return Grant{}
		}
	}
	g := Grant{Path: abs, For: "build", Note: b.Why}
	st, err := fsys.Lstat(b.Path)
	switch {
	case errors.Is(err, unix.ENOENT) && b.Make:
		if err := fsys.MkdirAll(b.Path, 0o755); err != nil {
			g.Note += "; not opened: " + err.Error()
			return g
		}
		g.Note += "; created"
		st, err = fsys.Lstat(b.Path)
	case errors.Is(err, unix.ENOENT):
		return Grant{}
	}
	switch {
	case err != nil:
		g.Note += "; not opened: " + err.Error()
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		g.Note += "; not opened: not a directory (a symbolic link is never followed)"
	default:
		g.dir, g.mask = true, writeDir
	}
	return g
}

// looksLikeFile reports whether a sandbox.write entry names a file: its
// last element has an extension (.claude.json, cache.db) and it does not
// end with a slash. A cache directory (go-build, .npm) does not.
func looksLikeFile(w string) bool {
	if strings.HasSuffix(w, "/") {
		return false
	}
	base := filepath.Base(w)
	return strings.Contains(strings.TrimPrefix(base, "."), ".")
}

// writeGrant makes a sandbox.write entry a grant, creating a missing
// directory.
func writeGrant(w, root, home string) (Grant, error) {
	if w == "" {
		return Grant{}, nil
	}
	p := w
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home == "" {
			h, err := os.UserHomeDir()
			if err != nil {
				return Grant{}, fmt.Errorf("sandbox.write %s: %w", w, err)
			}
			home = h
		}
		p = filepath.Join(home, p[1:])
	} else if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	g := Grant{For: "sandbox.write"}
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) && looksLikeFile(w) {
		// Landlock opens what exists; making a directory of a missing
		// file's name would break the tool that writes it.
		return Grant{Path: p, For: "sandbox.write", Note: "missing file: not opened (it must exist, or name a directory with a trailing /)"}, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(p, 0o755); err != nil {
			return Grant{}, fmt.Errorf("sandbox.write %s: %w", w, err)
		}
		g.Note = "created"
		fi, err = os.Stat(p)
	}
	if err != nil {
		return Grant{}, fmt.Errorf("sandbox.write %s: %w", w, err)
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	g.Path, g.dir, g.mask = p, fi.IsDir(), writeDir
	if !fi.IsDir() {
		g.mask, g.Note = writeFile, "a file: written in place only"
	}
	return g, nil
}

// gitDirs returns the repository's git directory and, for a linked
// worktree, the common one, resolved.
func gitDirs(root, gitDir string) []string {
	if gitDir == "" {
		dotgit := filepath.Join(root, ".git")
		fi, err := os.Stat(dotgit)
		if err != nil {
			return nil
		}
		if gitDir, _, err = gitdir.Dirs(root, dotgit, fi.IsDir()); err != nil {
			return nil
		}
	}
	real, err := filepath.EvalSymlinks(gitDir)
	if err != nil {
		return nil
	}
	dirs := []string{real}
	if c, err := filepath.EvalSymlinks(gitdir.Common(real)); err == nil && c != real {
		dirs = append(dirs, c)
	}
	return dirs
}

// dedupe merges grants of one path, keeping the first reason and the
// union of the rights.
func dedupe(grants []Grant) []Grant {
	var out []Grant
	at := map[string]int{}
	for _, g := range grants {
		if i, ok := at[g.Path]; ok {
			out[i].mask |= g.mask
			continue
		}
		at[g.Path] = len(out)
		out = append(out, g)
	}
	return out
}

// unguarded lists the guarded paths (.orket, git's configuration, hooks
// and info) that a grant with write rights reaches.
func unguarded(root string, gitDirs []string, grants []Grant) []string {
	guarded := []string{filepath.Join(root, store.Dir)}
	for _, d := range gitDirs {
		guarded = append(guarded, filepath.Join(d, "config"), filepath.Join(d, "hooks"), filepath.Join(d, "info"))
	}
	var out []string
	for _, gp := range guarded {
		for _, g := range grants {
			if (g.Path == gp || g.dir && within(gp, g.Path)) && g.mask&ll.AccessFSWriteFile != 0 {
				out = appendOnce(out, display(root, gp))
				break
			}
		}
	}
	return out
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

func display(root, p string) string {
	if rel, err := filepath.Rel(root, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(rel)
	}
	return p
}

func buildSpec(abi int, grants []Grant) *spec {
	h := handled(abi)
	sp := &spec{V: 1, Handled: h}
	at := map[uint64]int{}
	for _, g := range grants {
		m := g.mask & h
		if m == 0 {
			continue
		}
		i, ok := at[m]
		if !ok {
			i = len(sp.Rules)
			at[m] = i
			sp.Rules = append(sp.Rules, rule{Access: m})
		}
		sp.Rules[i].Paths = append(sp.Rules[i].Paths, g.Path)
	}
	return sp
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == 0 || r == '*' {
			return '_'
		}
		return r
	}, s)
}

// Report returns what the sandbox enforces.
func (s *Sandbox) Report() Report {
	if s == nil {
		return Report{Mode: Off}
	}
	return s.report
}

// Enforced reports whether commands run under the kernel's barrier.
func (s *Sandbox) Enforced() bool { return s != nil && s.spec != nil }

// Apply makes cmd run in the sandbox: cmd starts orket's helper, which
// restricts itself and execs cmd's program with cmd's arguments. Dir,
// stdio, SysProcAttr (process group, cgroup, parent-death signal) and
// ExtraFiles are untouched, so containment applied before or after
// Apply still holds; TMPDIR becomes the private temporary directory.
// A cmd whose program was not found (cmd.Err) is left for Start to fail.
// Without enforcement Apply does nothing.
func (s *Sandbox) Apply(cmd *exec.Cmd) error {
	if !s.Enforced() || cmd.Err != nil {
		return nil
	}
	env, err := s.env(cmd.Env, cmd.Path)
	if err != nil {
		return err
	}
	cmd.Env = env
	cmd.Args = append([]string{helperName}, cmd.Args...)
	cmd.Path = self
	return nil
}

// Wrap is Apply for callers that build their own command from an argv
// and an environment (env nil is this process's): the returned argv
// starts the helper, which looks argv[0] up in the returned
// environment's PATH.
func (s *Sandbox) Wrap(argv, env []string) ([]string, []string, error) {
	if !s.Enforced() {
		return argv, env, nil
	}
	if len(argv) == 0 {
		return nil, nil, errors.New("sandbox: empty command")
	}
	env, err := s.env(env, "")
	if err != nil {
		return nil, nil, err
	}
	return append([]string{self}, argv...), env, nil
}

// env returns env for the helper: TMPDIR the private directory, the
// spec in envVar.
func (s *Sandbox) env(env []string, path string) ([]string, error) {
	if env == nil {
		env = os.Environ()
	}
	sp := *s.spec
	sp.Path = path
	b, err := json.Marshal(sp)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if k != "TMPDIR" && k != envVar {
			out = append(out, kv)
		}
	}
	return append(out, "TMPDIR="+s.report.TempDir, envVar+"="+string(b)), nil
}

// Close removes the private temporary directory. Call it once every
// process of the command has stopped.
func (s *Sandbox) Close() error {
	if s == nil || s.report.TempDir == "" {
		return nil
	}
	dir := s.report.TempDir
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	// Tools leave read-only directories (Go's module cache does).
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("sandbox: remove the temporary directory: %w", err)
	}
	return nil
}
