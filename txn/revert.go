package txn

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"golang.org/x/sys/unix"

	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/internal/gitrepo"
	"github.com/orket/orket/internal/testhook"
)

// A Reverted reports a revert: what was put back and whether the proof
// (a fresh scan comparing equal to the snapshot) held.
type Reverted struct {
	Paths    []string // working-tree paths restored
	Git      []string // git files restored
	Verified bool
	// Kept lists git files left as they are: a branch another work tree
	// moved, a ref another process changed during the revert.
	Kept []*MovedError
	// Scan says how the tree was looked at.
	Scan ScanInfo
}

// ErrRevertUnverified reports that after a revert the tree still differs
// from the snapshot.
var ErrRevertUnverified = errors.New("the tree differs from the snapshot after the revert")

// ErrObjectsMissing reports that the object store no longer holds content
// the snapshot recorded: something outside orket deleted or pruned it
// (the repository removed while the run was in progress, a git gc
// --prune=now, a file system that lost it). A *MissingObjectsError wraps
// it.
var ErrObjectsMissing = errors.New("the object store no longer holds content the snapshot recorded")

// A MissingObjectsError is a revert that could not start: the files it
// would have put back have no content in the object store any more.
// Nothing of the tree was written.
type MissingObjectsError struct {
	Paths []string // the files whose recorded content is gone, sorted
}

func (e *MissingObjectsError) Error() string {
	names := e.Paths
	more := ""
	if len(names) > 5 {
		names, more = names[:5], fmt.Sprintf(" and %d more", len(e.Paths)-5)
	}
	return fmt.Sprintf("the object store (.git/objects) no longer holds the recorded content of %d file(s) (%s%s): "+
		"something deleted or pruned it during the run; the tree was left as it is", len(e.Paths), strings.Join(names, ", "), more)
}

func (e *MissingObjectsError) Unwrap() error { return ErrObjectsMissing }

// revert puts the repository back as the snapshot recorded it: files,
// modes, deletions, creations (and directories they made), empty
// directories, the index, HEAD, branches, tags, and git's configuration,
// hooks and info files. Then it proves the result by scanning again.
// Ignored files (other than .orket) are outside the transaction. Every
// write resolves beneath the root without following a symlink.
func (r *Repo) revert(s *Snapshot) (*Reverted, error) {
	res := &Reverted{}
	if err := r.restoreGuardAndRef(s); err != nil {
		return res, err
	}
	gs, err := r.readGitStateSince(s.git)
	if err != nil {
		return res, err
	}
	pre, cur, info, err := r.scanNow(s, gs)
	if err != nil {
		return res, err
	}
	res.Scan = info
	paths, err := r.diffTree(pre, cur)
	if err != nil {
		return res, err
	}
	// A revert that cannot finish does not start: every file it puts
	// back must still have its content in the object store, before
	// anything is removed or written.
	if missing := r.missingBlobs(s.Pre.Files, paths); len(missing) > 0 {
		return res, &MissingObjectsError{Paths: missing}
	}
	// The tree is judged by the ignore rules from before the edit (see
	// snapshotScanner): .gitignore files it wrote are put back like any
	// other file and hide nothing meanwhile.
	if err := r.restoreTree(s, cur, paths); err != nil {
		return res, err
	}
	res.Kept = append(res.Kept, r.restoreIgnored(pre, cur)...)
	res.Kept = append(res.Kept, r.remakeSubmodules(pre, cur)...)
	res.Paths = paths
	testhook.Point("revert-midway")
	if err := r.restoreGitFiles(s, gs, res); err != nil {
		return res, err
	}
	if err := r.prove(s, paths, res.Kept); err != nil {
		return res, err
	}
	// The change journal stays open: a baseline run or a later revert
	// of the same transaction measures against the snapshot again.
	res.Verified = true
	return res, nil
}

// restoreGuardAndRef begins a revert, before the tree is looked at: it
// puts back git's configuration, hooks and info files and the annotated
// tags a gc pruned, drops a scan cache orket did not write, and writes the
// snapshot's ref again if it is not as the snapshot left it.
func (r *Repo) restoreGuardAndRef(s *Snapshot) error {
	guard, err := r.readGuardState()
	if err != nil {
		return err
	}
	if _, err := r.restoreFiles(s.guard.diff(guard), s.guard.files, guard.files, s.guard.modes); err != nil {
		return err
	}
	if err := r.restoreTags(s); err != nil {
		return err
	}
	if r.cacheChanged(s.cacheStat) {
		// Not orket's: what it says cannot be trusted.
		r.dropCache()
		s.cacheStat = nil
	}
	if !r.snapshotRefIntact(s) {
		if err := gitrepo.WriteRef(r.CommonDir, s.Ref, s.Commit, gitrepo.RefLog{Msg: "orket: snapshot ref restored", GitDir: r.GitDir}); err != nil {
			return fmt.Errorf("restore %s: %w", s.Ref, err)
		}
	}
	return nil
}

// remakeSubmodules reports the submodules whose work tree the edit
// removed, and makes their directories again. A submodule's work tree is
// its own repository's, outside the transaction: git submodule update
// brings its files back.
func (r *Repo) remakeSubmodules(pre, cur *Tree) []*MovedError {
	var kept []*MovedError
	for d := range pre.Gitlinks {
		if cur.Gitlinks[d] {
			continue
		}
		if root, err := r.FS(); err == nil {
			root.MkdirAll(d, 0o755)
		}
		kept = append(kept, &MovedError{Key: d, Reason: "a submodule's work tree is not part of the transaction and could not be restored; git submodule update --init " + d + " brings back its commit"})
	}
	return kept
}

// restoreGitFiles puts back git's own files (HEAD, refs, the index, an
// operation in progress) that differ from the snapshot's, and names them
// in res.Git. A branch checked out in another work tree is that tree's:
// if it moved, it is reported in res.Kept, never rewound.
func (r *Repo) restoreGitFiles(s *Snapshot, gs *gitState, res *Reverted) error {
	others := r.otherWorktreeBranches()
	var gitKeys []string
	for _, k := range diffFiles(s.git.files, gs.files) {
		if who, ok := others[k]; ok {
			res.Kept = append(res.Kept, &MovedError{Key: displayKey(k), Reason: "checked out in " + who + "; left as it is"})
			continue
		}
		gitKeys = append(gitKeys, k)
	}
	moved, err := r.restoreFiles(gitKeys, s.git.files, gs.files, nil)
	res.Kept = append(res.Kept, moved...)
	if err != nil {
		return err
	}
	for _, k := range gitKeys {
		res.Git = append(res.Git, displayKey(k))
	}
	return nil
}

// restoreTags writes back the annotated tag objects the refs named that a
// gc has pruned since, so restored refs name objects that exist.
func (r *Repo) restoreTags(s *Snapshot) error {
	w := newObjectWriter(r)
	for id, b := range s.tags {
		if w.has(id) {
			continue
		}
		got, err := w.write(plumbing.TagObject, int64(len(b)), bytes.NewReader(b))
		if err != nil {
			return fmt.Errorf("write back tag %s: %w", id, err)
		}
		if got != id {
			return fmt.Errorf("write back tag %s: wrote %s", id, got)
		}
	}
	return w.sync()
}

// restoreTree makes the named paths as they were in s.Pre.
func (r *Repo) restoreTree(s *Snapshot, cur *Tree, paths []string) error {
	root, err := r.FS()
	if err != nil {
		return err
	}
	var errs []error
	// Files the edit created go first, so directories can take their place.
	for _, p := range paths {
		if s.Pre.Files[p] != nil || cur.Files[p] == nil {
			continue
		}
		if err := root.Remove(p); err != nil {
			errs = append(errs, err)
		}
	}
	// Directories the edit created, deepest first, if they are empty now.
	var created []string
	for d := range cur.Dirs {
		if !s.Pre.Dirs[d] {
			created = append(created, d)
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(created)))
	for _, d := range created {
		// Left, as it should be, when ignored files remain.
		if _, err := root.Rmdir(d); err != nil {
			errs = append(errs, err)
		}
	}
	for _, p := range paths {
		if f := s.Pre.Files[p]; f != nil {
			if err := r.writeBlob(root, p, f); err != nil {
				errs = append(errs, fmt.Errorf("restore %s: %w", p, err))
			}
			testhook.Point("file-restored")
		}
	}
	for d := range s.Pre.Empty {
		if err := root.MkdirAll(d, 0o755); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// missingBlobs returns the paths (of paths, in their order) whose
// recorded content in files the object store does not hold.
func (r *Repo) missingBlobs(files map[string]*File, paths []string) []string {
	w := newObjectWriter(r)
	var missing []string
	for _, p := range paths {
		f := files[p]
		if f == nil || w.has(f.OID) {
			continue
		}
		// Not loose, not in a pack orket reads: go-git's word, on a
		// fresh look at the store (see Repo.blob).
		if rd, err := r.openBlob(f.OID); err == nil {
			rd.Close()
			continue
		}
		missing = append(missing, p)
	}
	return missing
}

func parentDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// writeBlob writes a file's recorded content and mode, atomically and
// beneath root.
func (r *Repo) writeBlob(root *fsroot.Root, p string, f *File) error {
	rd, err := r.openBlob(f.OID)
	if err != nil {
		return fmt.Errorf("blob %s: %w", f.OID, err)
	}
	defer rd.Close()
	if f.Mode == filemode.Symlink {
		target, err := io.ReadAll(rd)
		if err != nil {
			return err
		}
		if st, err := root.Lstat(p); err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			if err := root.RemoveAll(p); err != nil {
				return err
			}
		}
		return root.Symlink(string(target), p)
	}
	// What stands in the way (a directory the edit made where the file
	// was, with whatever it put inside, ignored files included) goes:
	// none of it existed before the run.
	if st, err := root.Lstat(p); err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
		if err := root.RemoveAll(p); err != nil {
			return err
		}
	}
	return root.WriteFrom(p, fsroot.FileMode(f.Perm), fsroot.Options{}, func(w io.Writer) error {
		_, err := io.Copy(w, rd)
		return err
	})
}

// prove checks the result of a revert: every restored path is as the
// snapshot has it (content, mode, absence), every empty directory is back,
// and the git state and guarded files are equal. The revert's own scan,
// moments before, found every other path equal.
func (r *Repo) prove(s *Snapshot, paths []string, kept []*MovedError) error {
	gs, err := r.readGitStateSince(s.git)
	if err != nil {
		return err
	}
	guard, err := r.readGuardState()
	if err != nil {
		return err
	}
	skip := map[string]bool{}
	for _, m := range kept {
		skip[m.Key] = true
	}
	var diffs []string
	for _, k := range diffFiles(s.git.files, gs.files) {
		if !skip[displayKey(k)] {
			diffs = append(diffs, displayKey(k))
		}
	}
	for _, k := range s.guard.diff(guard) {
		diffs = append(diffs, displayKey(k))
	}
	root, err := r.FS()
	if err != nil {
		return err
	}
	for _, p := range paths {
		if strings.HasSuffix(p, "/") || s.Pre.Gitlinks[p] {
			continue // directories: checked below
		}
		want := s.Pre.Files[p]
		st, err := root.Lstat(p)
		if want == nil {
			if err == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
				diffs = append(diffs, p)
			}
			continue
		}
		if err != nil {
			diffs = append(diffs, p)
			continue
		}
		got, ok := fileOfStat(&st)
		if !ok || got.Mode != want.Mode || got.Perm != want.Perm {
			diffs = append(diffs, p)
			continue
		}
		if id, err := hashFile(root, p, got.Mode); err != nil || id != want.OID {
			diffs = append(diffs, p)
		}
	}
	for d := range s.Pre.Empty {
		if st, err := root.Lstat(d); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			diffs = append(diffs, d+"/")
		}
	}
	if len(diffs) > 0 {
		sort.Strings(diffs)
		return fmt.Errorf("%w: %s", ErrRevertUnverified, strings.Join(diffs, ", "))
	}
	return nil
}

func randHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b)
}
