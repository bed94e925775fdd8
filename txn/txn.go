package txn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/internal/testhook"
)

// A Txn is one transaction on a work tree: the snapshot that protects the
// tree and the journal that says, across a crash, where it is and how far
// the run got. Its methods advance the journal in the order
// docs/transactions.md gives (snapshot, edit, verify, then commit, or save,
// revert and take out); nothing outside this package writes the journal.
type Txn struct {
	r     *Repo
	j     Journal
	snap  *Snapshot
	ended bool
}

// A Start describes a transaction about to begin.
type Start struct {
	RunID   string
	Command string    // what the user ran, for whoever finds the journal
	Time    time.Time // when the run started
	// Group names where the run's processes are contained
	// (contain.Group.ID), so that recovery stops what is left of them.
	Group string
	// Outside lists files of the work tree (repository-relative, with
	// slashes) that are not part of the transaction at all: orket's own
	// standard output and error when they are files in the tree (run.log
	// in orket run ... > run.log 2>&1). They are neither in the snapshot
	// nor measured nor reverted, here or by a recovery (the snapshot's
	// manifest names them).
	Outside []string
}

// Begin starts a transaction: it writes the journal (phase snapshot), then
// takes the snapshot and makes it durable. If the snapshot fails, nothing
// was written to the tree and the attempt is forgotten.
func (r *Repo) Begin(st Start) (*Txn, error) {
	t := &Txn{r: r, j: Journal{RunID: st.RunID, Ref: SnapshotRefPrefix + st.RunID, Phase: PhaseSnapshot,
		PID: os.Getpid(), Started: st.Time, Command: st.Command, Group: st.Group}}
	// Not durable yet: until phase edit nothing is written to the tree,
	// and a snapshot without a journal is only an unused ref.
	if err := r.writeJournal(&t.j, false); err != nil {
		return nil, fmt.Errorf("write the transaction journal: %w", err)
	}
	testhook.Point("phase:" + PhaseSnapshot)
	snap, err := r.snapshot(st.RunID, st.Outside)
	if err != nil {
		r.dropIndex(st.RunID)
		return nil, errors.Join(err, r.dropSnapshot(t.j.Ref), r.clearJournal())
	}
	t.snap = snap
	return t, nil
}

// Unfinished returns the journal of a transaction that did not finish (a
// crash, a kill), or nil when there is none.
func (r *Repo) Unfinished() (*Journal, error) { return r.readJournal() }

// ErrSnapshotUnreadable reports an unfinished transaction whose snapshot
// cannot be read back.
var ErrSnapshotUnreadable = errors.New("the snapshot cannot be read")

// Resume takes over an unfinished transaction, for recovery: its snapshot
// is read back from the ref. When the transaction stopped while taking
// its snapshot, nothing was written to the tree; such a transaction
// without a readable snapshot returns ErrSnapshotUnreadable and nothing
// needs restoring.
func (r *Repo) Resume(j *Journal) (*Txn, error) {
	snap, err := r.loadSnapshot(j.Ref)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSnapshotUnreadable, j.Ref, err)
	}
	return &Txn{r: r, j: *j, snap: snap}, nil
}

// Discard forgets an unfinished transaction and keeps the tree as it is.
// Files it saved stay where they are.
func (r *Repo) Discard(j *Journal) error {
	var err error
	if j.Ref != "" {
		err = r.dropSnapshot(j.Ref)
	}
	r.dropIndex(j.RunID)
	return errors.Join(err, r.clearJournal())
}

// RunID returns the transaction's run id.
func (t *Txn) RunID() string { return t.j.RunID }

// Ref returns the snapshot's ref.
func (t *Txn) Ref() string { return t.j.Ref }

// Snapshot returns the snapshot the transaction protects.
func (t *Txn) Snapshot() *Snapshot { return t.snap }

// Journal returns a copy of the journal as last written.
func (t *Txn) Journal() Journal { return t.j }

func (t *Txn) advance(phase string) error {
	if t.ended {
		return errors.New("the transaction has ended")
	}
	t.j.Phase = phase
	if err := t.r.writeJournal(&t.j, phase == PhaseEdit); err != nil {
		return fmt.Errorf("write the transaction journal: %w", err)
	}
	testhook.Point("phase:" + phase)
	return nil
}

// Edit records that the edit is about to write.
func (t *Txn) Edit() error { return t.advance(PhaseEdit) }

// Verify records that verify steps are about to run.
func (t *Txn) Verify() error { return t.advance(PhaseVerify) }

// Measure compares the repository with the snapshot.
func (t *Txn) Measure() (*Change, error) { return t.r.measure(t.snap) }

// SavedDir is where a transaction keeps what it saves before destroying
// it: in the work tree's git directory, outside the tree.
func (r *Repo) SavedDir(runID string) string {
	return filepath.Join(r.GitDir, "orket", "saved", runID)
}

// Save writes a file the user could lose (the failed change as a patch)
// durably under SavedDir, and records it in the journal, before anything
// is taken out of the tree. It returns the file's path. If Save fails, the
// caller must not destroy what it meant to save.
//
// perm is the saved file's mode: a change holds the content of the files
// it changed, so it is written no wider than the most private of them
// (0600 for a credentials file), in a directory only its owner reads.
func (t *Txn) Save(name string, perm fs.FileMode, write func(io.Writer) error) (string, error) {
	dir := t.r.SavedDir(t.j.RunID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	root, err := fsroot.Open(dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	if err := root.WriteFrom(name, perm, fsroot.Options{Sync: true}, write); err != nil {
		return "", err
	}
	if err := syncDir(filepath.Dir(dir)); err != nil {
		return "", err
	}
	t.j.Saved = appendUnique(t.j.Saved, name)
	if err := t.r.writeJournal(&t.j, true); err != nil {
		return "", fmt.Errorf("write the transaction journal: %w", err)
	}
	return filepath.Join(dir, name), nil
}

func appendUnique(l []string, s string) []string {
	for _, x := range l {
		if x == s {
			return l
		}
	}
	return append(l, s)
}

// Revert puts the repository back as the snapshot recorded it and proves
// it (see Repo.revert). The transaction goes on (a --worktree candidate
// may still have to be taken out); End finishes it. After an error the
// journal and the snapshot stay, for recovery.
func (t *Txn) Revert() (*Reverted, error) {
	if err := t.advance(PhaseRevert); err != nil {
		return nil, err
	}
	return t.r.revert(t.snap)
}

// Baseline records that failed steps are about to run again on the
// reverted tree (to learn whether they fail without the change); Revert
// afterwards undoes whatever they wrote.
func (t *Txn) Baseline() error { return t.advance(PhaseBaseline) }

// TakeOut puts the named paths back as base has them in the working
// tree, and as index has them in the index (nil: as base): how a failed
// --worktree candidate leaves the tree, and a rejected run's change. With
// fromGit, base holds git's blobs (a commit's files, from TreeOf): where
// git converts content (LFS, end-of-line conversion, filters) each is
// written as git would check it out; without it, base holds the work
// tree's own bytes (a snapshot's). Save the change first.
func (t *Txn) TakeOut(paths []string, base, index map[string]*File, fromGit bool) error {
	if err := t.advance(PhaseTakeOut); err != nil {
		return err
	}
	var checkout func(string) bool
	if fromGit {
		checkout = t.ConvertedOnCheckout(paths)
	}
	err := t.r.resetPaths(paths, base, index, checkout)
	testhook.Point("taken-out")
	return err
}

// Commit commits exactly the named paths as they are in the working tree
// with the user's git (their identity, hooks and signing; see gitCommit),
// in env. The transaction goes on; End keeps the result. A refused commit
// is a *CommitError.
func (t *Txn) Commit(ctx context.Context, paths []string, msg string, env []string) (plumbing.Hash, error) {
	if err := t.advance(PhaseCommit); err != nil {
		return plumbing.ZeroHash, err
	}
	return t.r.gitCommit(ctx, paths, msg, env)
}

// End finishes the transaction and keeps the tree as it is now: the
// snapshot ref is dropped and the journal cleared.
func (t *Txn) End() error {
	if t.ended {
		return nil
	}
	if err := t.r.dropSnapshot(t.j.Ref); err != nil {
		return fmt.Errorf("drop snapshot %s: %w", t.j.Ref, err)
	}
	if err := t.r.clearJournal(); err != nil {
		return fmt.Errorf("clear the transaction journal: %w", err)
	}
	t.r.dropIndex(t.j.RunID)
	t.ended = true
	t.Close()
	return nil
}

// Ended reports whether End finished the transaction.
func (t *Txn) Ended() bool { return t.ended }

// Close releases the snapshot's change journal. It does not end the
// transaction.
func (t *Txn) Close() { t.snap.Close() }
