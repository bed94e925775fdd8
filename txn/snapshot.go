package txn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/object"
	"golang.org/x/sys/unix"

	"github.com/orket/orket/internal/testhook"
	"github.com/orket/orket/scope"
)

// SnapshotRefPrefix is where snapshots are published, one ref per run.
const SnapshotRefPrefix = "refs/orket/snapshots/"

// racyWindow is how close to a scan a modification may be and still leave
// a file's stat unchanged (file timestamps come from a coarse clock): files
// modified that recently are always read, never trusted by stat.
const racyWindow = 100 * time.Millisecond

// A Snapshot is the durable record of a working tree before an edit.
type Snapshot struct {
	RunID  string
	Ref    string        // refs/orket/snapshots/<run-id>
	Commit plumbing.Hash // what Ref points to
	Pre    *Tree         // every file with its OID, as it was
	git    *gitState
	guard  *guardState
	idx    *indexInfo        // the index as it was, parsed
	perms  map[string]uint32 // permission bits of files whose bits are not 0644/0755
	w      *watcher          // the change journal since the snapshot; nil: scan whole
	dirty  bool              // the tree had uncommitted changes (other than .orket)

	layoutOnce       sync.Once
	byDir, childDirs map[string][]string
}

// Dirty reports whether the tree had uncommitted changes (besides
// .orket) when the snapshot was taken.
func (s *Snapshot) Dirty() bool { return s.dirty }

// Close stops the snapshot's change journal. A snapshot needs no closing
// for correctness; it releases the inotify descriptor.
func (s *Snapshot) Close() {
	if s != nil && s.w != nil {
		s.w.close()
		s.w = nil
	}
}

// manifest is the machine-readable part of a snapshot commit: what the
// index does not already say about the tree.
type manifest struct {
	Version   int                      `json:"version"`
	RunID     string                   `json:"run_id"`
	Start     time.Time                `json:"start"`
	Files     []manifestFile           `json:"files"`   // untracked, modified and .orket files
	Deleted   []string                 `json:"deleted"` // tracked in the index, absent from the tree
	EmptyDirs []string                 `json:"empty_dirs"`
	Perms     map[string]uint32        `json:"perms,omitempty"`
	Git       map[string]plumbing.Hash `json:"git"`   // HEAD, refs, index...: blob ids of their bytes
	Guard     map[string]plumbing.Hash `json:"guard"` // config, hooks, info
}

type manifestFile struct {
	Path  string            `json:"path"`
	Mode  filemode.FileMode `json:"mode"`
	OID   plumbing.Hash     `json:"oid"`
	Size  int64             `json:"size"`
	Mtime int64             `json:"mtime"`
	Ctime int64             `json:"ctime"`
	Ino   uint64            `json:"ino"`
}

// indexInfo is the parsed index of a snapshot.
type indexInfo struct {
	entries  map[string]*indexEntry // stage-0 files (no gitlinks)
	all      map[string]bool        // every path the index names, any stage
	dirs     map[string]bool        // directories holding indexed paths
	gitlinks map[string]bool
	mtime    time.Time
}

func parseIndex(b []byte, mtime time.Time) (*indexInfo, error) {
	ii := &indexInfo{all: map[string]bool{}, dirs: map[string]bool{}, gitlinks: map[string]bool{}, mtime: mtime}
	if b == nil {
		ii.entries = map[string]*indexEntry{}
		return ii, nil
	}
	list, err := decodeIndex(b)
	if err != nil {
		return nil, &UnsupportedError{Path: ".git/index", Reason: "cannot read the index: " + err.Error()}
	}
	ii.entries = make(map[string]*indexEntry, len(list))
	lastDir := ""
	for i := range list {
		e := &list[i]
		if e.SkipWorktree {
			return nil, &UnsupportedError{Path: ".git/index", Reason: "sparse checkout (skip-worktree entries) is not supported"}
		}
		ii.all[e.Name] = true
		// Entries are sorted: consecutive ones mostly share a directory.
		if d := parentDir(e.Name); d != lastDir {
			lastDir = d
			for d != "" && !ii.dirs[d] {
				ii.dirs[d] = true
				d = parentDir(d)
			}
		}
		if e.Mode == filemode.Submodule {
			ii.gitlinks[e.Name] = true
			continue
		}
		if e.Stage == 0 && !e.IntentToAdd {
			ii.entries[e.Name] = e
		}
	}
	return ii, nil
}

// statMatches reports whether a file looks as the index recorded it.
func statMatches(f *File, e *indexEntry) bool {
	return f.Mode == e.Mode && uint32(f.Size) == e.Size && f.Mtime == e.Mtime &&
		f.Ctime == e.Ctime && uint32(f.Ino) == e.Ino
}

// indexClean reports whether the index vouches for a file's content: the
// stat matches and the file was not modified in the same instant the index
// was written (git's racy-clean rule).
func (ii *indexInfo) clean(p string, f *File) (*indexEntry, bool) {
	e := ii.entries[p]
	return e, e != nil && statMatches(f, e) && e.Mtime < ii.mtime.UnixNano()
}

func (r *Repo) newScanner(idx ...*indexInfo) (*scanner, error) {
	ex, err := r.excludes()
	if err != nil {
		return nil, err
	}
	return &scanner{root: r.Root, idx: idx, excludes: ex, workers: r.Options.ScanWorkers}, nil
}

// excludes returns the repository-wide ignore patterns: core.excludesFile
// (or its XDG default) and .git/info/exclude.
func (r *Repo) excludes() ([]gitignore.Pattern, error) {
	var ps []gitignore.Pattern
	global := ""
	if cfg, err := r.Git.ConfigScoped(gitconfig.SystemScope); err == nil && cfg.Raw != nil {
		global = cfg.Raw.Section("core").Option("excludesfile")
	}
	if global == "" {
		if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
			global = filepath.Join(x, "git", "ignore")
		} else if h, err := os.UserHomeDir(); err == nil {
			global = filepath.Join(h, ".config", "git", "ignore")
		}
	} else if strings.HasPrefix(global, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			global = filepath.Join(h, global[2:])
		}
	}
	for _, f := range []string{global, filepath.Join(r.CommonDir, "info", "exclude")} {
		if f == "" {
			continue
		}
		p, err := readPatterns(f, nil)
		if err != nil {
			return nil, err
		}
		ps = append(ps, p...)
	}
	return ps, nil
}

// snapshot records the working tree durably: blobs for every file the index
// does not hold, a commit under refs/orket/snapshots/<runID>, all fsynced
// before it returns.
func (r *Repo) snapshot(runID string) (*Snapshot, error) {
	if err := r.CheckSupported(); err != nil {
		return nil, err
	}
	gs, err := r.readGitState()
	if err != nil {
		return nil, fmt.Errorf("read git state: %w", err)
	}
	guard, err := r.readGuardState()
	if err != nil {
		return nil, fmt.Errorf("read git configuration: %w", err)
	}
	ii, err := r.indexOf(gs)
	if err != nil {
		return nil, err
	}
	sc, err := r.newScanner(ii)
	if err != nil {
		return nil, err
	}
	// Watch while scanning: whatever changes after a directory is read is
	// in the journal, whatever changed before is in the scan.
	var w *watcher
	if !r.Options.NoWatch {
		syncDir := filepath.Join(r.GitDir, "orket")
		if os.MkdirAll(syncDir, 0o755) == nil {
			w, _ = newWatcher(syncDir) // without inotify, measuring scans the whole tree
		}
	}
	sc.w = w
	pre, err := sc.scan()
	if err != nil {
		w.close()
		return nil, fmt.Errorf("scan the working tree: %w", err)
	}
	for p := range pre.Files {
		if path.Base(p) == ".gitattributes" {
			if err := checkAttributes(filepath.Join(r.Root, filepath.FromSlash(p)), p); err != nil {
				return nil, err
			}
		}
	}
	if err := r.fillOIDs(ii, pre); err != nil {
		return nil, fmt.Errorf("read the working tree: %w", err)
	}
	s := &Snapshot{RunID: runID, Ref: SnapshotRefPrefix + runID, Pre: pre, git: gs, guard: guard, idx: ii, w: w, perms: map[string]uint32{}}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	m := &manifest{Version: 1, RunID: runID, Start: pre.Start, Deleted: []string{}, EmptyDirs: sortedKeys(pre.Empty),
		Git: map[string]plumbing.Hash{}, Guard: map[string]plumbing.Hash{}}
	var stored []string
	// Only the few files the index does not hold are sorted, not the tree.
	for p, f := range pre.Files {
		if perm := f.Perm; perm != defaultPerm(f.Mode) && f.Mode != filemode.Symlink {
			s.perms[p] = perm
		}
		if e := ii.entries[p]; e != nil && e.Hash == f.OID && e.Mode == f.Mode {
			continue
		}
		stored = append(stored, p)
	}
	sort.Strings(stored)
	for _, p := range stored {
		f := pre.Files[p]
		m.Files = append(m.Files, manifestFile{Path: p, Mode: f.Mode, OID: f.OID, Size: f.Size, Mtime: f.Mtime, Ctime: f.Ctime, Ino: f.Ino})
	}
	m.Perms = s.perms
	for _, p := range stored {
		if !scope.Reserved(p) {
			s.dirty = true
			break
		}
	}
	for p := range ii.entries {
		if pre.Files[p] == nil {
			m.Deleted = append(m.Deleted, p)
		}
	}
	sort.Strings(m.Deleted)
	s.dirty = s.dirty || len(m.Deleted) > 0
	ow := newObjectWriter(r)
	for _, p := range stored {
		if err := ow.storeFile(p, pre.Files[p]); err != nil {
			return nil, fmt.Errorf("store %s: %w", p, err)
		}
	}
	for k, b := range gs.files {
		if m.Git[k], err = ow.blob(b); err != nil {
			return nil, err
		}
	}
	for k, b := range guard.files {
		if m.Guard[k], err = ow.blob(b); err != nil {
			return nil, err
		}
	}
	commit, err := ow.snapshotCommit(m, stored, pre, gs)
	if err != nil {
		return nil, fmt.Errorf("write snapshot commit: %w", err)
	}
	// Every object is on disk before the ref that makes it findable.
	if err := syncFS(r.CommonDir); err != nil {
		return nil, err
	}
	refPath := filepath.Join(r.CommonDir, filepath.FromSlash(s.Ref))
	if err := os.MkdirAll(filepath.Dir(refPath), 0o755); err != nil {
		return nil, err
	}
	if err := writeFile(refPath, []byte(commit.String()+"\n"), true); err != nil {
		return nil, fmt.Errorf("publish %s: %w", s.Ref, err)
	}
	s.Commit = commit
	testhook.Point("snapshot-published")
	ok = true
	return s, nil
}

func defaultPerm(m filemode.FileMode) uint32 {
	if m == filemode.Executable {
		return 0o755
	}
	return 0o644
}

func (r *Repo) indexOf(gs *gitState) (*indexInfo, error) {
	var mtime time.Time
	if fi, err := os.Stat(filepath.Join(r.GitDir, "index")); err == nil {
		mtime = fi.ModTime()
	}
	return parseIndex(gs.files[inGitDir+"index"], mtime)
}

func syncFS(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// objectWriter stores objects through go-git, skipping ones that exist.
type objectWriter struct{ r *Repo }

func newObjectWriter(r *Repo) *objectWriter { return &objectWriter{r: r} }

func (w *objectWriter) has(id plumbing.Hash) bool {
	return w.r.Git.Storer.HasEncodedObject(id) == nil
}

func (w *objectWriter) blob(b []byte) (plumbing.Hash, error) {
	id := blobHash(b)
	if w.has(id) {
		return id, nil
	}
	return w.write(plumbing.BlobObject, bytes.NewReader(b), int64(len(b)))
}

func (w *objectWriter) write(t plumbing.ObjectType, r io.Reader, size int64) (plumbing.Hash, error) {
	obj := w.r.Git.Storer.NewEncodedObject()
	obj.SetType(t)
	obj.SetSize(size)
	wr, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := io.Copy(wr, r); err != nil {
		wr.Close()
		return plumbing.ZeroHash, err
	}
	if err := wr.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return w.r.Git.Storer.SetEncodedObject(obj)
}

// storeFile stores a working-tree file as a blob and checks it still has
// the content it was hashed with.
func (w *objectWriter) storeFile(p string, f *File) error {
	if w.has(f.OID) {
		return nil
	}
	abs := filepath.Join(w.r.Root, filepath.FromSlash(p))
	var data []byte
	var err error
	if f.Mode == filemode.Symlink {
		var t string
		t, err = os.Readlink(abs)
		data = []byte(t)
	} else {
		data, err = os.ReadFile(abs)
	}
	if err != nil {
		return err
	}
	id, err := w.blob(data)
	if err != nil {
		return err
	}
	if id != f.OID {
		return errChanged(p)
	}
	return nil
}

// snapshotCommit writes the commit a user can restore from with plain git:
//
//	index       the index file as it was
//	worktree/   every file the index does not hold (untracked, modified)
//	deleted     tracked paths absent from the tree, one per line
//	refs        HEAD and every local branch and tag
//	manifest.json
func (w *objectWriter) snapshotCommit(m *manifest, stored []string, pre *Tree, gs *gitState) (plumbing.Hash, error) {
	mj, err := json.Marshal(m)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	top := map[string]treeItem{}
	add := func(name string, b []byte) error {
		id, err := w.blob(b)
		top[name] = treeItem{mode: filemode.Regular, id: id}
		return err
	}
	if err := add("manifest.json", mj); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := add("deleted", []byte(joinLines(m.Deleted))); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := add("empty-dirs", []byte(joinLines(m.EmptyDirs))); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := add("refs", []byte(refsText(gs))); err != nil {
		return plumbing.ZeroHash, err
	}
	// The index (megabytes on a large tree) is stored once, with the git
	// state; the commit names the same blob.
	if id, ok := m.Git[inGitDir+"index"]; ok {
		top["index"] = treeItem{mode: filemode.Regular, id: id}
	}
	files := map[string]treeItem{}
	for _, p := range stored {
		f := pre.Files[p]
		files[p] = treeItem{mode: f.Mode, id: f.OID}
	}
	wt, err := w.tree(files, "")
	if err != nil {
		return plumbing.ZeroHash, err
	}
	top["worktree"] = treeItem{mode: filemode.Dir, id: wt}
	root, err := w.tree(top, "")
	if err != nil {
		return plumbing.ZeroHash, err
	}
	sig := object.Signature{Name: "orket", Email: "orket@localhost", When: time.Now()}
	c := &object.Commit{Author: sig, Committer: sig, TreeHash: root, Message: restoreMessage(m.RunID)}
	obj := w.r.Git.Storer.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return w.r.Git.Storer.SetEncodedObject(obj)
}

func restoreMessage(runID string) string {
	return "orket snapshot " + runID + `

The working tree before orket run ` + runID + `. orket recover restores it
exactly. To restore it with plain git instead, from the repository root:

  ref=` + SnapshotRefPrefix + runID + `
  git cat-file blob $ref:index > .git/index            # the index as it was
  git checkout-index --all --force                     # tracked files
  git clean -fdq                                       # files the edit created
  git -c tar.umask=022 archive $ref:worktree | tar -x  # modified and untracked files
  git cat-file blob $ref:deleted | xargs -r -d '\n' rm -f --
  git cat-file blob $ref:empty-dirs | xargs -r -d '\n' mkdir -p --
  git cat-file blob $ref:refs     # HEAD and every branch and tag as they were:
                                  # put back any that moved with git update-ref
                                  # and git symbolic-ref HEAD refs/heads/<branch>

Files: index, worktree/ (files the index did not hold), deleted, empty-dirs,
refs, manifest.json (everything, for orket).
`
}

func refsText(gs *gitState) string {
	var lines []string
	for _, k := range sortedKeys(gs.files) {
		name := strings.SplitN(k, ":", 2)[1]
		if name == "HEAD" || strings.HasPrefix(name, "refs/") {
			lines = append(lines, strings.TrimSpace(string(gs.files[k]))+" "+name)
		}
	}
	return joinLines(lines)
}

func joinLines(l []string) string {
	if len(l) == 0 {
		return ""
	}
	return strings.Join(l, "\n") + "\n"
}

type treeItem struct {
	mode filemode.FileMode
	id   plumbing.Hash
}

// tree writes nested tree objects for a set of slash paths below prefix.
func (w *objectWriter) tree(items map[string]treeItem, prefix string) (plumbing.Hash, error) {
	direct := map[string]treeItem{}
	sub := map[string]map[string]treeItem{}
	for p, it := range items {
		first, rest, nested := strings.Cut(p, "/")
		if !nested {
			direct[first] = it
			continue
		}
		if sub[first] == nil {
			sub[first] = map[string]treeItem{}
		}
		sub[first][rest] = it
	}
	for name, m := range sub {
		id, err := w.tree(m, path.Join(prefix, name))
		if err != nil {
			return plumbing.ZeroHash, err
		}
		direct[name] = treeItem{mode: filemode.Dir, id: id}
	}
	t := &object.Tree{}
	for name, it := range direct {
		t.Entries = append(t.Entries, object.TreeEntry{Name: name, Mode: it.mode, Hash: it.id})
	}
	// git orders tree entries as if directory names ended in "/".
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(t.Entries, func(i, j int) bool { return key(t.Entries[i]) < key(t.Entries[j]) })
	obj := w.r.Git.Storer.NewEncodedObject()
	if err := t.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	if w.has(obj.Hash()) {
		return obj.Hash(), nil
	}
	return w.r.Git.Storer.SetEncodedObject(obj)
}

var errNoSnapshot = errors.New("no such snapshot")
