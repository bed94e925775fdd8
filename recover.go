package orket

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/orket/orket/internal/contain"
	"github.com/orket/orket/txn"
)

// A Recovery says what Recover did.
type Recovery struct {
	Code      Code     `json:"code"`
	Action    string   `json:"action"` // nothing, restored, discarded
	RunID     string   `json:"run_id,omitempty"`
	Snapshot  string   `json:"snapshot_ref,omitempty"`
	Phase     string   `json:"phase,omitempty"`
	Paths     []string `json:"paths,omitempty"`
	Verified  bool     `json:"revert_verified"`
	PatchFile string   `json:"patch_file,omitempty"` // where the change the crash left is kept
}

// RecoverOptions say how to recover.
type RecoverOptions struct {
	Discard bool // forget the snapshot and keep the tree as it is
	Wait    bool // wait for a running orket to finish first
	Now     func() time.Time
	Warn    func(msg string) // told what goes wrong without stopping recovery
}

// Recover finishes an interrupted transaction (docs/design.md, Crash
// points and recovery): it restores the tree as it was before that run,
// bit for bit, or with Discard keeps the tree as it is and forgets the
// snapshot. Durable before destructive: the change the crashed run left
// in the tree (or had already saved) is kept as
// .orket/runs/<run-id>/change.patch before anything is restored.
func Recover(ctx context.Context, repo *txn.Repo, o RecoverOptions) (*Recovery, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Warn == nil {
		o.Warn = func(string) {}
	}
	unlock, err := repo.Lock(ctx, true, o.Wait, txn.Holder{RunID: "recover", PID: os.Getpid(), Started: o.Now(), Command: "orket recover"})
	if err != nil {
		var le *txn.LockedError
		if errors.As(err, &le) {
			return nil, &Error{Code: ELocked, Err: err, Msg: le.Error(), Hint: "a run is still going; wait for it, or pass --wait"}
		}
		return nil, internal("take the repository lock", "check that .git is writable", err)
	}
	defer unlock()
	res := &Recovery{Code: OK, Action: "nothing"}
	j, err := repo.Unfinished()
	if err != nil {
		if !o.Discard {
			return nil, &Error{Code: EInternal, Err: err, Msg: err.Error(), Hint: "orket recover --discard forgets it"}
		}
		j = &txn.Journal{}
	}
	if j == nil {
		return res, nil
	}
	res.RunID, res.Snapshot, res.Phase = j.RunID, j.Ref, j.Phase
	// Processes the interrupted run left behind (a detached child of the
	// edit, a step's grandchild) stop before anything is restored.
	if j.Group != "" {
		if err := contain.KillLeftovers(j.Group); err != nil {
			return nil, internal("stop the interrupted run's processes", "stop them by hand, then run orket recover again", err)
		}
	}
	if o.Discard {
		if err := repo.Discard(j); err != nil {
			return nil, repoErr("discard the snapshot", err)
		}
		res.Action = "discarded"
		return res, nil
	}
	return restore(repo, j, res, o)
}

// restore takes over an unfinished transaction and puts the tree back,
// keeping what the crashed run left first.
func restore(repo *txn.Repo, j *txn.Journal, res *Recovery, o RecoverOptions) (*Recovery, error) {
	tx, err := repo.Resume(j)
	if errors.Is(err, txn.ErrSnapshotUnreadable) && j.Phase == txn.PhaseSnapshot {
		// Killed while taking the snapshot: nothing was written yet.
		if err := repo.Discard(j); err != nil {
			return nil, repoErr("forget the unfinished snapshot", err)
		}
		res.Action = "discarded"
		return res, nil
	}
	if err != nil {
		return nil, &Error{Code: EInternal, Err: err, Msg: "read snapshot " + j.Ref + ": " + err.Error(),
			Hint: "the snapshot is unreadable; orket recover --discard forgets it and keeps the tree as it is"}
	}
	defer tx.Close()
	saved, err := saveLeftover(repo, tx, j)
	if err != nil {
		return nil, &Error{Code: ERecoveryNeeded, Err: err, Msg: "the change the interrupted run left could not be saved (" + err.Error() + "); nothing was restored",
			Hint: "fix what stopped the save and run orket recover again, or orket recover --discard to keep the tree as it is"}
	}
	rv, err := tx.Revert()
	if err != nil {
		return nil, &revertError{Err: err, Ref: j.Ref, Saved: repo.DisplayPath(saved)}
	}
	file := ""
	published := false
	if saved != "" {
		dst := runsDir + "/" + j.RunID + "/change.patch"
		if err := copyInto(repo, saved, dst); err != nil {
			file = repo.DisplayPath(saved)
			o.Warn("could not keep the change in " + dst + " (" + err.Error() + "); it is kept in " + file)
		} else {
			file, published = dst, true
		}
	}
	if err := tx.End(); err != nil {
		return nil, internal("end the transaction", "orket recover --discard forgets it", err)
	}
	if published {
		if err := os.RemoveAll(repo.SavedDir(j.RunID)); err != nil {
			o.Warn("could not remove " + repo.SavedDir(j.RunID) + ": " + err.Error())
		}
	}
	// The interrupted run's own files in the git directory.
	for _, f := range []string{"advisories-" + j.RunID + ".md", "touch-" + j.RunID} {
		os.Remove(filepath.Join(repo.GitDir, "orket", f))
	}
	res.Action, res.Paths, res.Verified, res.PatchFile = "restored", rv.Paths, rv.Verified, file
	return res, nil
}

// saveLeftover returns the change the interrupted run had saved, or saves
// what it left in the tree (measured against the snapshot) before the
// restore takes it out.
func saveLeftover(repo *txn.Repo, tx *txn.Txn, j *txn.Journal) (string, error) {
	for _, name := range j.Saved {
		if name == "change.patch" {
			p := filepath.Join(repo.SavedDir(j.RunID), name)
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
		}
	}
	ch, err := tx.Measure()
	if err != nil {
		return "", err
	}
	if len(ch.Paths) == 0 {
		return "", nil
	}
	root, err := repo.FS()
	if err != nil {
		return "", err
	}
	return tx.Save("change.patch", changePerm(root, ch.Paths, tx.Snapshot().Pre.Files), func(w io.Writer) error {
		return formatChange(w, repo, root, j.RunID, ch.Paths, tx.Snapshot().Pre.Files)
	})
}
