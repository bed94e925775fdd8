package txn

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

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
	r, err := git.PlainOpenWithOptions(root, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return nil, &UnsupportedError{Path: root, Reason: "cannot open the repository: " + err.Error()}
	}
	return &Repo{Root: root, GitDir: gitDir, CommonDir: common, Git: r}, nil
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
	g, err := git.PlainOpenWithOptions(r.Root, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return err
	}
	r.Git = g
	return nil
}
