package txn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/internal/gitrepo"
)

// gitState is what an edit may change in the git directory and a revert
// puts back: HEAD, every local branch and tag, packed-refs, the stash and
// its list, the index, and the files of an operation in progress (a
// merge, a rebase).
type gitState struct {
	files map[string][]byte // key: "gitdir:HEAD", "common:refs/heads/main", ...; value: raw bytes
	// index is the stat of the index file whose bytes files holds, and
	// indexRead when they were read.
	index     *unix.Stat_t
	indexRead time.Time
}

// guardState is what an edit may never change: git's configuration, hooks
// and info files, and their permission bits (an executable hook).
type guardState struct {
	files map[string][]byte // key as in gitState
	modes map[string]uint32 // permission bits of each file
}

// perWorktree files live in the work tree's own git directory.
var perWorktree = []string{"HEAD", "index", "ORIG_HEAD", "MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "AUTO_MERGE",
	"CHERRY_PICK_HEAD", "REVERT_HEAD", "BISECT_LOG", "rebase-merge", "rebase-apply", "sequencer"}

// Where a key lives.
const (
	inGitDir = "gitdir:"
	inCommon = "common:"
)

func (r *Repo) keyPath(key string) string {
	if rest, ok := strings.CutPrefix(key, inGitDir); ok {
		return filepath.Join(r.GitDir, filepath.FromSlash(rest))
	}
	return filepath.Join(r.CommonDir, filepath.FromSlash(strings.TrimPrefix(key, inCommon)))
}

// displayKey names a key the way a user sees the path: .git/HEAD.
func displayKey(key string) string {
	_, rest, _ := strings.Cut(key, ":")
	return ".git/" + rest
}

func (r *Repo) readGitState() (*gitState, error) { return r.readGitStateSince(nil) }

// readGitStateSince is readGitState that takes the index's bytes from
// prev, read earlier, when the index file is still the one prev read.
func (r *Repo) readGitStateSince(prev *gitState) (*gitState, error) {
	s := &gitState{files: map[string][]byte{}}
	for _, name := range perWorktree {
		if name == "index" {
			if err := r.readIndexFile(s, prev); err != nil {
				return nil, err
			}
			continue
		}
		if err := r.collect(s.files, inGitDir, name); err != nil {
			return nil, err
		}
	}
	for _, name := range []string{"packed-refs", "refs/heads", "refs/tags", "refs/stash", "logs/refs/stash"} {
		if err := r.collect(s.files, inCommon, name); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (r *Repo) readGuardState() (*guardState, error) {
	s := &guardState{files: map[string][]byte{}, modes: map[string]uint32{}}
	for _, name := range []string{"config", "config.worktree", "hooks", "info"} {
		if err := r.collectModes(s.files, s.modes, inCommon, name); err != nil {
			return nil, err
		}
	}
	// git's own repack (gc --auto after a commit) rewrites info/refs for
	// dumb transports: derived, not configuration.
	delete(s.files, inCommon+"info/refs")
	if r.GitDir != r.CommonDir {
		if err := r.collectModes(s.files, s.modes, inGitDir, "config.worktree"); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// readIndexFile reads the index and the stat of the very file it read
// (git replaces the index by renaming a new one over it). The bytes prev
// read are taken again when the file is the same one, unchanged since
// (same inode, size and times) and already older than racyWindow then:
// any write since, in place or not, would show in its stat.
func (r *Repo) readIndexFile(s *gitState, prev *gitState) error {
	f, err := os.Open(filepath.Join(r.GitDir, "index"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return &UnsupportedError{Path: ".git/index", Reason: "not a regular file"}
	}
	s.indexRead = time.Now()
	if p := prev; p != nil && p.index != nil && p.files[inGitDir+"index"] != nil && sameIndexFile(p.index, &st) &&
		p.indexRead.Sub(time.Unix(st.Mtim.Sec, st.Mtim.Nsec)) > racyWindow {
		s.files[inGitDir+"index"], s.index, s.indexRead = p.files[inGitDir+"index"], &st, p.indexRead
		return nil
	}
	b := make([]byte, st.Size)
	if _, err := io.ReadFull(f, b); err != nil {
		return fmt.Errorf("read .git/index: %w", err)
	}
	s.files[inGitDir+"index"], s.index = b, &st
	return nil
}

// sameIndexFile reports whether two stats are of the same index file,
// unwritten between them. Its ctime is left out: a link (see keepIndex)
// changes it. A write does not go unseen for that: it would set the
// mtime to now, and the callers only trust an mtime older than the racy
// window.
func sameIndexFile(a, b *unix.Stat_t) bool {
	return a.Dev == b.Dev && a.Ino == b.Ino && a.Size == b.Size && a.Mtim == b.Mtim
}

// collect reads a file, or every file below a directory, into m.
func (r *Repo) collect(m map[string][]byte, where, name string) error {
	return r.collectModes(m, nil, where, name)
}

// collectModes is collect that also keeps each file's permission bits.
func (r *Repo) collectModes(m map[string][]byte, modes map[string]uint32, where, name string) error {
	root := r.keyPath(where + name)
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || strings.HasSuffix(p, ".lock") {
			return nil
		}
		b, err := readLinkOrFile(p, d)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(filepath.Dir(root), p)
		key := where + filepath.ToSlash(filepath.Join(filepath.Dir(name), rel))
		m[key] = b
		if modes != nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				modes[key] = uint32(fi.Mode().Perm())
			}
		}
		return nil
	})
}

// diff lists the guarded files whose content or permission bits differ.
func (g *guardState) diff(after *guardState) []string {
	keys := diffFiles(g.files, after.files)
	seen := map[string]bool{}
	for _, k := range keys {
		seen[k] = true
	}
	for k, m := range g.modes {
		if a, ok := after.modes[k]; ok && a != m && !seen[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func readLinkOrFile(p string, d fs.DirEntry) ([]byte, error) {
	if d.Type()&fs.ModeSymlink != 0 {
		t, err := os.Readlink(p)
		return []byte("symlink:" + t), err
	}
	return os.ReadFile(p)
}

// diffFiles lists the keys whose content differs between two maps.
func diffFiles(before, after map[string][]byte) []string {
	var out []string
	for k, b := range before {
		if a, ok := after[k]; !ok || !bytes.Equal(a, b) {
			out = append(out, k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// A MovedError reports a git file that changed while a revert was putting
// it back, or that belongs to another work tree: it is left as it is.
type MovedError struct {
	Key    string // .git/refs/heads/x
	Reason string
}

func (e *MovedError) Error() string { return e.Key + ": " + e.Reason }

// restoreFiles makes the files named by keys match want: rewritten with
// git's lock-file protocol (write key.lock, fsync, rename) or removed, each
// only if it still holds what cur says it held when the revert read it (a
// compare-and-swap under git's lock, so a concurrent git is never
// overwritten). Files that moved meanwhile are left, each reported as a
// *MovedError.
func (r *Repo) restoreFiles(keys []string, want, cur map[string][]byte, modes map[string]uint32) (moved []*MovedError, err error) {
	var errs []error
	for _, k := range keys {
		p := r.keyPath(k)
		expect, existed := cur[k]
		unchanged := func() error {
			now, err := os.ReadFile(p)
			if t, lerr := os.Readlink(p); lerr == nil {
				now, err = []byte("symlink:"+t), nil
			}
			switch {
			case errors.Is(err, fs.ErrNotExist) && !existed:
				return nil
			case err == nil && existed && bytes.Equal(now, expect):
				return nil
			}
			return &MovedError{Key: displayKey(k), Reason: "changed by another process during the revert; left as it is"}
		}
		b, ok := want[k]
		if !ok {
			if err := unchanged(); err != nil {
				moved = append(moved, err.(*MovedError))
				continue
			}
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			r.removeEmptyParents(p, k)
			continue
		}
		err := writeGitFile(p, b, unchanged, fs.FileMode(modes[k]))
		var me *MovedError
		switch {
		case errors.As(err, &me):
			moved = append(moved, me)
		case err != nil:
			errs = append(errs, fmt.Errorf("restore %s: %w", displayKey(k), err))
		}
	}
	return moved, errors.Join(errs...)
}

// removeEmptyParents removes directories a new ref or hook left empty, up
// to (not including) the top directory of its kind.
func (r *Repo) removeEmptyParents(p, key string) {
	_, rest, _ := strings.Cut(key, ":")
	top := strings.SplitN(rest, "/", 3)
	if len(top) < 3 {
		return
	}
	stop := r.keyPath(key[:len(key)-len(rest)] + top[0] + "/" + top[1])
	for d := filepath.Dir(p); len(d) > len(stop); d = filepath.Dir(d) {
		if os.Remove(d) != nil {
			return
		}
	}
}

// writeGitFile writes b to the git file at the absolute path p with
// git's lock-file protocol, atomically and durably, never following a
// symlink in p's last component, and only if check, called under the
// lock, returns nil; perm is its permission bits (0: as the file has
// them, or 0644). A symlink value ("symlink:T") is restored as a
// symlink.
func writeGitFile(p string, b []byte, check func() error, perm fs.FileMode) error {
	t, ok := bytes.CutPrefix(b, []byte("symlink:"))
	if !ok {
		return gitrepo.WriteLocked(context.Background(), p, b, gitrepo.LockOptions{Perm: perm, Check: check})
	}
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := fsroot.Open(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	if check != nil {
		if err := check(); err != nil {
			return err
		}
	}
	if err := root.Symlink(string(t), filepath.Base(p)); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// otherWorktreeBranches returns the keys of the branches checked out in
// the repository's other work trees: their own commits move them, and a
// revert here must not rewind them.
func (r *Repo) otherWorktreeBranches() map[string]string {
	out := map[string]string{}
	heads := map[string]string{}
	if r.GitDir != r.CommonDir {
		heads[filepath.Join(r.CommonDir, "HEAD")] = "the main work tree"
	}
	if entries, err := os.ReadDir(filepath.Join(r.CommonDir, "worktrees")); err == nil {
		for _, e := range entries {
			dir := filepath.Join(r.CommonDir, "worktrees", e.Name())
			if filepath.Clean(dir) == filepath.Clean(r.GitDir) {
				continue
			}
			heads[filepath.Join(dir, "HEAD")] = "work tree " + e.Name()
		}
	}
	for file, who := range heads {
		b, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		if ref, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "ref: "); ok {
			out[inCommon+ref] = who
		}
	}
	return out
}
