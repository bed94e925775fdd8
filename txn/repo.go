package txn

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	format "github.com/go-git/go-git/v5/plumbing/format/config"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"

	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/internal/gitdir"
)

// ErrNotRepo reports that a directory is not inside a git work tree.
var ErrNotRepo = errors.New("not inside a git work tree")

// An UnsupportedError reports a repository orket cannot handle exactly.
type UnsupportedError struct {
	Path   string
	Reason string
}

func (e *UnsupportedError) Error() string { return e.Path + ": " + e.Reason }

// A Repo is a git work tree as orket sees it.
type Repo struct {
	Root      string // the work tree's top directory, absolute and clean
	GitDir    string // this work tree's git directory (.git, or .git/worktrees/x)
	CommonDir string // where objects, refs and config live (same as GitDir unless a linked worktree)
	Git       *git.Repository
	Options   Options

	fsOnce sync.Once
	fs     *fsroot.Root
	fsErr  error

	// noCache (tests) makes snapshots neither read nor write the scan
	// cache: every file is learnt from the tree and the index.
	noCache bool
	// hookAlways (tests) asks the fsmonitor hook whatever the size of the
	// tree (see hookMinIndex); fsmonitor.SetEager does it for every
	// repository of a test process, and measures through the hook too.
	hookAlways bool
}

// FS returns the work tree as a root that orket's own writes resolve
// beneath, never through a symlink.
func (r *Repo) FS() (*fsroot.Root, error) {
	r.fsOnce.Do(func() { r.fs, r.fsErr = fsroot.Open(r.Root) })
	return r.fs, r.fsErr
}

// Options say how a repository's working tree is scanned.
type Options struct {
	// NoWatch turns every change journal off (inotify and an fsmonitor
	// hook): every snapshot and measurement scans the whole tree
	// (ORKET_NO_INOTIFY=1 at the command line).
	NoWatch bool
	// ScanWorkers is how many directories are read at once; 0 sizes it
	// to the machine.
	ScanWorkers int
	// FSMonitor chooses the fsmonitor hook transactions ask what changed
	// (see fsmonitor.go): "" or FSMonitorGit, git's core.fsmonitor when
	// it names a hook; FSMonitorOff, none; anything else is a hook
	// command, as core.fsmonitor would name it (orket.yaml's
	// snapshot.fsmonitor).
	FSMonitor string
}

// UseFSMonitor takes orket.yaml's snapshot.fsmonitor (v, "" for none) as
// Options.FSMonitor, unless the caller chose already.
func (r *Repo) UseFSMonitor(v string) {
	if v != "" && r.Options.FSMonitor == "" {
		r.Options.FSMonitor = v
	}
}

// Discover finds the git work tree enclosing dir, as git does: the nearest
// ancestor holding a .git directory or a .git file (linked worktrees and
// submodule checkouts). A bare repository has no work tree and is refused.
func Discover(dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", dir)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	for d := abs; ; d = filepath.Dir(d) {
		dotgit := filepath.Join(d, ".git")
		fi, err := os.Lstat(dotgit)
		if err == nil {
			return openAt(d, dotgit, fi)
		}
		if isBare(d) {
			return nil, &UnsupportedError{Path: d, Reason: "bare repository has no work tree"}
		}
		if filepath.Dir(d) == d {
			return nil, fmt.Errorf("%s: %w", abs, ErrNotRepo)
		}
	}
}

func openAt(root, dotgit string, fi os.FileInfo) (*Repo, error) {
	gitDir, common, err := gitdir.Dirs(root, dotgit, fi.IsDir())
	if errors.Is(err, gitdir.ErrNoGitdirLine) {
		return nil, &UnsupportedError{Path: dotgit, Reason: err.Error()}
	}
	if err != nil {
		return nil, err
	}
	r, err := plainOpen(root, gitDir, common)
	if err != nil {
		return nil, &UnsupportedError{Path: root, Reason: "cannot open the repository: " + err.Error()}
	}
	return &Repo{Root: root, GitDir: gitDir, CommonDir: common, Git: r}, nil
}

// plainOpen opens the repository of the work tree root with go-git.
// go-git refuses a repository with extensions.worktreeConfig (git's
// per-worktree configuration, which git sparse-checkout turns on), though
// nothing it does for orket reads differently: such a repository is
// opened with the extension hidden from go-git, and orket reads
// config.worktree itself (see Repo.config).
func plainOpen(root, gitDir, common string) (*git.Repository, error) {
	g, err := git.PlainOpenWithOptions(root, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err == nil || !errors.Is(err, git.ErrUnsupportedExtensionRepositoryFormatVersion) && !errors.Is(err, git.ErrUnknownExtension) {
		return g, err
	}
	var fs billy.Filesystem = osfs.New(gitDir)
	if filepath.Clean(gitDir) != filepath.Clean(common) {
		fs = dotgit.NewRepositoryFilesystem(fs, osfs.New(common))
	}
	g, err2 := git.Open(worktreeConfigStorage{filesystem.NewStorage(fs, cache.NewObjectLRUDefault())}, osfs.New(root))
	if err2 != nil {
		return nil, err // go-git's own refusal: another extension
	}
	return g, nil
}

// worktreeConfigStorage is a repository's storage whose configuration
// does not show extensions.worktreeConfig to go-git.
type worktreeConfigStorage struct{ *filesystem.Storage }

func (s worktreeConfigStorage) Config() (*gitconfig.Config, error) {
	cfg, err := s.Storage.Config()
	if err == nil && cfg.Raw != nil && cfg.Raw.HasSection("extensions") {
		cfg.Raw.Section("extensions").RemoveOption("worktreeConfig")
	}
	return cfg, err
}

// config is the repository's configuration as git reads it: system,
// global, local, and with extensions.worktreeConfig the work tree's own
// config.worktree over them.
func (r *Repo) config() (*format.Config, error) {
	cfg, err := r.Git.ConfigScoped(gitconfig.SystemScope)
	if err != nil {
		return nil, err
	}
	raw := cfg.Raw
	if !worktreeConfigOn(r.CommonDir) {
		return raw, nil
	}
	f, err := os.Open(filepath.Join(r.GitDir, "config.worktree"))
	if os.IsNotExist(err) {
		return raw, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	wt := format.New()
	if err := format.NewDecoder(f).Decode(wt); err != nil {
		return nil, fmt.Errorf("config.worktree: %w", err)
	}
	for _, sec := range wt.Sections {
		for _, o := range sec.Options {
			raw.Section(sec.Name).SetOption(o.Key, o.Value)
		}
	}
	return raw, nil
}

// worktreeConfigOn reports whether the repository's own configuration
// turns extensions.worktreeConfig on.
func worktreeConfigOn(common string) bool {
	f, err := os.Open(filepath.Join(common, "config"))
	if err != nil {
		return false
	}
	defer f.Close()
	c := format.New()
	if format.NewDecoder(f).Decode(c) != nil {
		return false
	}
	return strings.EqualFold(c.Section("extensions").Option("worktreeConfig"), "true")
}

// isBare reports whether d looks like a bare repository's directory.
func isBare(d string) bool {
	for _, name := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Stat(filepath.Join(d, name)); err != nil {
			return false
		}
	}
	b, err := os.ReadFile(filepath.Join(d, "config"))
	return err == nil && strings.Contains(string(b), "bare = true")
}

// blob returns a blob object. git may repack while orket runs (an edit
// that commits can start git gc --auto, which moves loose objects into a
// new pack); a miss therefore reopens the object store once and retries.
func (r *Repo) blob(id plumbing.Hash) (plumbing.EncodedObject, error) {
	obj, err := r.Git.Storer.EncodedObject(plumbing.BlobObject, id)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		if rerr := r.reopen(); rerr != nil {
			return nil, err
		}
		obj, err = r.Git.Storer.EncodedObject(plumbing.BlobObject, id)
	}
	return obj, err
}

func (r *Repo) reopen() error {
	g, err := plainOpen(r.Root, r.GitDir, r.CommonDir)
	if err != nil {
		return err
	}
	r.Git = g
	return nil
}

// DisplayPath names a file for a person: repository-relative inside the
// work tree (or its .git), absolute elsewhere.
func (r *Repo) DisplayPath(p string) string {
	if p == "" {
		return ""
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	if rel, err := filepath.Rel(r.Root, abs); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return p
}

// HeadCommit is the id of the commit HEAD names, "" when it names none
// (an unborn branch) or cannot be read.
func (r *Repo) HeadCommit() string {
	ref, err := r.Git.Head()
	if err != nil {
		return ""
	}
	return ref.Hash().String()
}
