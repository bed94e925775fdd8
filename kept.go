package orket

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"golang.org/x/sys/unix"

	"github.com/orket/orket/feedback"
	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/internal/gitrepo"
	"github.com/orket/orket/patch"
	"github.com/orket/orket/store"
	"github.com/orket/orket/txn"
)

// A KeptPath is a path a kept run changed: its content before the run and
// as the run left it. A reject puts Before back while the path still holds
// After.
type KeptPath struct {
	Path   string     `json:"path"`
	Before *FileState `json:"before,omitempty"` // nil: the run created it
	After  *FileState `json:"after,omitempty"`  // nil: the run deleted it
	// Index is the path's index entry before the run: a change staged
	// or not staged then is so again after a reject. An empty OID: the
	// index had no entry; nil: not recorded (an older orket), the index
	// is set as Before.
	Index *FileState `json:"index_before,omitempty"`
}

// A FileState is a file's content (its blob id) and mode.
type FileState struct {
	OID  string `json:"oid"`
	Mode string `json:"mode"` // git's: 0100644, 0100755, 0120000
}

// maxKeptResult bounds the files whose content as a kept run left them
// is stored for orket correct; a bigger one is only hashed.
const maxKeptResult = 16 << 20

// rejectedDir is where orket keeps rejected changes, and where people and
// tools drop what they reject (docs/feedback.md), repository-relative.
const rejectedDir = store.Dir + "/" + store.RejectedDir

// recordKept notes, before a passed change is kept, what every touched
// path held before the run and holds now, and keeps the before blobs
// reachable (refs/orket/kept/<run-id>) for as long as the run record, so
// that orket reject can undo it.
func (r *run) recordKept() error {
	rec := r.rec
	root, err := r.req.Repo.FS()
	if err != nil {
		return err
	}
	snap := r.tx.Snapshot()
	before := map[string]plumbing.Hash{}
	results := map[string]string{} // files to store, by their name in the kept tree
	for _, p := range rec.Plan.TouchSet {
		k := KeptPath{Path: p}
		var f *txn.File
		if _, ok := r.req.Edit.(WorktreeEdit); ok {
			f = r.worktreeBase[p]
		} else {
			f = snap.Pre.Files[p]
		}
		if f != nil {
			if f.OID.IsZero() {
				return fmt.Errorf("%s: its content before the run is not known", p)
			}
			k.Before = &FileState{OID: f.OID.String(), Mode: f.Mode.String()}
			before[p] = f.OID
		} else {
			for d := path.Dir(p); d != "." && !snap.Pre.Dirs[d]; d = path.Dir(d) {
				rec.KeptDirs = appendUnique(rec.KeptDirs, d)
			}
		}
		k.Index = &FileState{}
		if _, ok := r.req.Edit.(WorktreeEdit); ok {
			k.Index = nil // a --worktree candidate's index is HEAD's: as Before
		} else if e, ok := snap.IndexEntry(p); ok {
			k.Index = &FileState{OID: e.OID.String(), Mode: e.Mode.String()}
			if f == nil || e.OID != f.OID {
				// A staged content the work tree did not hold: kept
				// reachable too, so a gc cannot take it before a reject.
				before["orket-index/"+p] = e.OID
			}
		}
		if k.After, err = stateOf(root, p); err != nil {
			return err
		}
		// The result is kept too (a regular file's content), so that a
		// person's later correction can be shown as a patch from it.
		if st, err := root.Lstat(p); err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Size <= maxKeptResult {
			results["orket-run-result/"+p] = p
		}
		rec.Kept = append(rec.Kept, k)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(rec.KeptDirs))) // deepest first
	return r.req.Repo.KeepBlobs(rec.RunID, before, results)
}

func appendUnique(l []string, s string) []string {
	for _, x := range l {
		if x == s {
			return l
		}
	}
	return append(l, s)
}

// stateOf is what a path holds now: its blob id and mode; nil when it
// does not exist.
func stateOf(root *fsroot.Root, p string) (*FileState, error) {
	st, err := root.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var content []byte
	mode := filemode.Regular
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		target, err := root.Readlink(p)
		if err != nil {
			return nil, err
		}
		content, mode = []byte(target), filemode.Symlink
	case unix.S_IFREG:
		if st.Mode&0o111 != 0 {
			mode = filemode.Executable
		}
		f, err := root.Open(p)
		if err != nil {
			return nil, err
		}
		h := plumbing.NewHasher(plumbing.BlobObject, st.Size)
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return nil, err
		}
		return &FileState{OID: h.Sum().String(), Mode: mode.String()}, nil
	default:
		return &FileState{OID: "", Mode: "dir"}, nil
	}
	return &FileState{OID: plumbing.ComputeHash(plumbing.BlobObject, content).String(), Mode: mode.String()}, nil
}

func (a *FileState) equal(b *FileState) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.OID == b.OID && a.Mode == b.Mode
}

// lockToWrite takes the repository lock for a person's command that
// writes the tree (reject, override --apply): exclusive, not waiting, and
// refused while an interrupted transaction waits for orket recover.
func lockToWrite(ctx context.Context, repo *txn.Repo, h txn.Holder) (func(), error) {
	return LockRepo(ctx, repo, true, false, h)
}

// LockRepo takes the repository lock and refuses to go on over an
// interrupted transaction (one that crashed while this waited, say).
func LockRepo(ctx context.Context, repo *txn.Repo, exclusive, wait bool, h txn.Holder) (func(), error) {
	h.PID = os.Getpid()
	unlock, err := repo.Lock(ctx, exclusive, wait, h)
	switch {
	case errors.Is(err, context.Canceled):
		return nil, interrupted(ctx, "while waiting for the lock")
	case err != nil:
		var le *txn.LockedError
		if errors.As(err, &le) {
			return nil, err
		}
		return nil, internal("take the repository lock", "check that .git is writable", err)
	}
	if j, err := repo.Unfinished(); err != nil || j != nil {
		unlock()
		return nil, &recoveryNeededError{Journal: j, Err: err}
	}
	return unlock, nil
}

// KeptRun loads a kept run: the one named (a unique prefix of its
// id), or the latest whose change was kept and is not rejected yet.
func KeptRun(repo *txn.Repo, id string, rejected map[string]string) (*Record, error) {
	root, err := repo.FS()
	if err != nil {
		return nil, err
	}
	type run struct {
		id    string
		mtime int64
	}
	var runs []run
	if f, err := root.Open(runsDir); err == nil {
		names, _ := f.Readdirnames(-1)
		f.Close()
		for _, n := range names {
			if strings.HasSuffix(n, ".json") && strings.HasPrefix(n, id) {
				st, _ := root.Lstat(runsDir + "/" + n)
				runs = append(runs, run{strings.TrimSuffix(n, ".json"), st.Mtim.Nano()})
			}
		}
	}
	// Newest first: run ids sort by the second they started; the record's
	// time orders runs of one second.
	sort.Slice(runs, func(i, j int) bool {
		if a, b := runs[i].id[:min(16, len(runs[i].id))], runs[j].id[:min(16, len(runs[j].id))]; a != b {
			return a > b
		}
		return runs[i].mtime > runs[j].mtime
	})
	if id != "" {
		switch len(runs) {
		case 0:
			return nil, Errorf(EUsage, "the run_id of a run's --json, or ls .orket/runs", "no run %q", id)
		case 1:
			if fb := rejected[runs[0].id]; fb != "" {
				return nil, Errorf(EUsage, "orket feedback list shows it", "run %s was already rejected (%s)", runs[0].id, fb)
			}
		default:
			return nil, Errorf(EUsage, "give more of the id", "%q names %d runs", id, len(runs))
		}
	}
	for _, rn := range runs {
		if id == "" && rejected[rn.id] != "" {
			continue
		}
		rec, err := LoadRecord(repo, rn.id)
		if err != nil {
			if id != "" {
				return nil, internal("read the run record", "check .orket/runs", err)
			}
			continue
		}
		if kept(rec) {
			return rec, nil
		}
		if id != "" {
			return nil, Errorf(EUsage, "orket reject takes back a change a run kept", "run %s kept no change (%s)", rec.RunID, rec.Code)
		}
	}
	return nil, Errorf(EUsage, "orket reject takes back a change a run kept; name one with its id", "no run kept a change that is not rejected yet")
}

// kept reports whether a run left its change in the tree.
func kept(rec *Record) bool {
	switch rec.Code {
	case OK, ECommitRefused, EVerifyFailedKept:
		return rec.Request.EditSource != "none" && !rec.Request.DryRun && rec.Plan.TouchCount > 0
	}
	return false
}

// TakeBack takes a kept run's change out while the tree still holds it:
// the change is written to .orket/rejected/<run-id>.patch and synced
// first; then, in a transaction, every touched path gets its content from
// before the run back (and a --commit run's branch its parent), and that
// is proved. When the tree has moved on, nothing is taken out and the
// diverged paths are named.
func (rec *Record) TakeBack(ctx context.Context, repo *txn.Repo, noUndo bool, now time.Time) (*feedback.Undo, error) {
	if noUndo {
		return &feedback.Undo{Status: "not_undone", Note: "--no-undo: recorded only"}, nil
	}
	if len(rec.Kept) == 0 {
		return &feedback.Undo{Status: "not_undone", Note: "the run's record does not say what it kept (an older orket): recorded only"}, nil
	}
	root, err := repo.FS()
	if err != nil {
		return nil, err
	}
	u := &feedback.Undo{}
	paths, before, index, err := rec.keptBefore(root, u)
	if err != nil {
		return nil, err
	}
	parent := rec.commitParent(repo, u)
	if len(u.Diverged) > 0 {
		u.Status = "diverged"
		u.Note = "the tree has moved on since the run: recorded only"
		return u, nil
	}
	// Durable before destructive: the change first, then the undo.
	u.Patch = rejectedDir + "/" + rec.RunID + ".patch"
	if err := ensureOrketDir(root); err != nil {
		return nil, err
	}
	err = root.WriteFrom(u.Patch, changePerm(root, paths, before), fsroot.Options{Sync: true}, func(w io.Writer) error {
		return formatChange(w, repo, root, "rejected-"+rec.RunID, paths, before)
	})
	if err != nil {
		return nil, internal("keep the rejected change", "nothing was taken out; check that .orket is writable", err)
	}
	tx, err := repo.Begin(txn.Start{RunID: newRunID(now), Command: "orket reject " + rec.RunID, Time: now})
	if err != nil {
		return nil, repoErr("take the snapshot", err)
	}
	defer tx.Close()
	if undoErr := rec.undo(ctx, tx, repo, root, paths, before, index, parent); undoErr != nil {
		if _, err := tx.Revert(); err != nil {
			return nil, &revertError{Err: errors.Join(undoErr, err), Ref: tx.Ref()}
		}
		tx.End()
		return nil, internal("take the change out", "the tree was put back as it was; the change is in "+u.Patch, undoErr)
	}
	if err := tx.End(); err != nil {
		return nil, internal("end the transaction", "orket recover --discard keeps the tree as it is", err)
	}
	u.Status = "undone"
	return u, nil
}

// keptBefore returns the paths the run kept, the files they held before
// it (none for a path the run created) and their index entries then (nil
// when the record does not say: as the files), and adds to u.Diverged the
// paths that no longer hold what the run left.
func (rec *Record) keptBefore(root *fsroot.Root, u *feedback.Undo) ([]string, map[string]*txn.File, map[string]*txn.File, error) {
	paths := make([]string, 0, len(rec.Kept))
	before, index := map[string]*txn.File{}, map[string]*txn.File{}
	for _, k := range rec.Kept {
		switch {
		case k.Index == nil:
			index = nil
		case index != nil && k.Index.OID != "":
			m, err := filemode.New(k.Index.Mode)
			if err != nil {
				return nil, nil, nil, internal("read the run record", "the record's kept state is damaged", err)
			}
			index[k.Path] = &txn.File{OID: plumbing.NewHash(k.Index.OID), Mode: m}
		}
		now, err := stateOf(root, k.Path)
		if err != nil {
			return nil, nil, nil, internal("read "+k.Path, "check the file's permissions", err)
		}
		if !now.equal(k.After) {
			u.Diverged = append(u.Diverged, k.Path)
		}
		paths = append(paths, k.Path)
		if k.Before != nil {
			m, err := filemode.New(k.Before.Mode)
			if err != nil {
				return nil, nil, nil, internal("read the run record", "the record's kept state is damaged", err)
			}
			before[k.Path] = &txn.File{OID: plumbing.NewHash(k.Before.OID), Mode: m}
		}
	}
	return paths, before, index, nil
}

// commitParent returns the parent of a --commit run's commit, which its
// branch goes back to (zero for a run that did not commit). A branch that
// moved on, or a commit without exactly one parent, is added to
// u.Diverged.
func (rec *Record) commitParent(repo *txn.Repo, u *feedback.Undo) plumbing.Hash {
	if rec.Commit == "" {
		return plumbing.ZeroHash
	}
	u.Branch, u.Commit = rec.CommitBranch, rec.Commit
	ref, err := repo.Git.Storer.Reference(plumbing.ReferenceName(rec.CommitBranch))
	if rec.CommitBranch == "" || err != nil || ref.Hash().String() != rec.Commit {
		u.Diverged = append(u.Diverged, "branch "+strings.TrimPrefix(rec.CommitBranch, "refs/heads/")+" (no longer at the run's commit)")
		return plumbing.ZeroHash
	}
	c, err := object.GetCommit(repo.Git.Storer, plumbing.NewHash(rec.Commit))
	if err != nil || c.NumParents() != 1 {
		u.Diverged = append(u.Diverged, "commit "+rec.Commit[:12]+" (not a commit with one parent)")
		return plumbing.ZeroHash
	}
	u.Parent = c.ParentHashes[0].String()
	return c.ParentHashes[0]
}

// undo takes the change out inside tx: every path gets its file from
// before the run back, the directories the run made and left empty go,
// the branch goes back to parent (unless zero), and then every path is
// proved to hold what it held before the run.
func (rec *Record) undo(ctx context.Context, tx *txn.Txn, repo *txn.Repo, root *fsroot.Root, paths []string, before, index map[string]*txn.File, parent plumbing.Hash) error {
	if err := tx.Edit(); err != nil {
		return err
	}
	// A --worktree run's files before it are HEAD's blobs (see
	// recordKept), which git converts on checkout in some repositories.
	fromGit := rec.Request.EditSource == "worktree"
	if err := tx.TakeOut(paths, before, index, fromGit); err != nil {
		return err
	}
	for _, d := range rec.KeptDirs {
		root.Rmdir(d) //nolint:errcheck // only when empty: what the run made and left empty
	}
	if !parent.IsZero() {
		// As git moves a branch: compare-and-swap, with a reflog entry.
		if err := gitrepo.UpdateRef(ctx, repo.CommonDir, rec.CommitBranch, plumbing.NewHash(rec.Commit), parent,
			gitrepo.RefLog{Msg: "orket reject: " + rec.RunID, GitDir: repo.GitDir}); err != nil {
			return err
		}
	}
	// The proof: every path holds what it held before the run (a file
	// git converts: its bytes, else what git makes of them).
	converted := tx.ConvertedOnCheckout(paths)
	for _, k := range rec.Kept {
		now, err := stateOf(root, k.Path)
		if err != nil {
			return err
		}
		if fromGit && now != nil && k.Before != nil && now.Mode == k.Before.Mode && now.Mode != filemode.Symlink.String() &&
			!now.equal(k.Before) && converted(k.Path) {
			oid, err := repo.CleanedOID(k.Path)
			if err != nil {
				return err
			}
			now.OID = oid.String()
		}
		if !now.equal(k.Before) {
			return fmt.Errorf("%s does not hold its content from before the run", k.Path)
		}
	}
	return nil
}

// ChangedSince is what changed since a kept run in the paths it touched:
// those paths, and the change as a patch.
func (rec *Record) ChangedSince(repo *txn.Repo) ([]string, string, error) {
	root, err := repo.FS()
	if err != nil {
		return nil, "", err
	}
	var changed []string
	after := map[string]*txn.File{}
	for _, k := range rec.Kept {
		now, err := stateOf(root, k.Path)
		if err != nil {
			return nil, "", internal("read "+k.Path, "check the file's permissions", err)
		}
		if now.equal(k.After) {
			continue
		}
		changed = append(changed, k.Path)
		if k.After != nil {
			m, err := filemode.New(k.After.Mode)
			if err != nil {
				return nil, "", internal("read the run record", "the record's kept state is damaged", err)
			}
			after[k.Path] = &txn.File{OID: plumbing.NewHash(k.After.OID), Mode: m}
		}
	}
	if len(changed) == 0 {
		return nil, "", nil
	}
	// The run's results are blobs only when the kept change is in the
	// object store (a commit); otherwise the patch cannot be made and
	// the note stands alone.
	for p, f := range after {
		if _, err := repo.BlobSize(f.OID); err != nil {
			delete(after, p)
			return changed, "", nil
		}
	}
	var b bytes.Buffer
	if err := formatChange(&b, repo, root, "corrected-"+rec.RunID, changed, after); err != nil {
		return changed, "", nil
	}
	return changed, b.String(), nil
}

// ApplyKept puts a run's kept change (patchFile, as its record names it)
// back in the tree: planned in memory against the tree as it is now
// (nothing is written when it does not apply), then written, under the
// exclusive lock. It returns the paths it wrote.
func ApplyKept(ctx context.Context, repo *txn.Repo, runID, patchFile string) ([]string, error) {
	if patchFile == "" {
		return nil, Errorf(EUsage, "only a run that changed files has a change to apply", "run %s kept no change", runID)
	}
	unlock, err := lockToWrite(ctx, repo, txn.Holder{RunID: "override", Command: "orket override --apply"})
	if err != nil {
		return nil, err
	}
	defer unlock()
	root, err := repo.FS()
	if err != nil {
		return nil, err
	}
	f, err := root.Open(patchFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Errorf(EUsage, "run records and their changes are pruned by lessons.retention; the escalation report keeps a copy",
			"the change of run %s is gone (%s)", runID, patchFile)
	}
	if err != nil {
		return nil, err
	}
	p, err := patch.Parse(f)
	f.Close()
	if err != nil {
		return nil, err
	}
	plan, err := p.Plan(root)
	if err != nil {
		return nil, err
	}
	if err := plan.Apply(root); err != nil {
		return nil, internal("apply the change", "git status shows what was written; git apply "+patchFile+" applies it by hand", err)
	}
	return p.Paths(), nil
}
