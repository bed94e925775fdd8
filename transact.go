package orket

import (
	"context"

	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"golang.org/x/sys/unix"

	"github.com/orket/orket/config"
	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/internal/testhook"
	"github.com/orket/orket/patch"
	"github.com/orket/orket/txn"
	"github.com/orket/orket/verify"
)

// transact is steps 7 to 12 of a mutating run: snapshot, edit, barrier,
// verify, keep or revert. Whatever happens once the snapshot is taken (an
// early return, an interrupt, a panic), the tree is put back unless the
// change was kept on purpose; and nothing is taken out of the tree before
// the change is saved.
func (r *run) transact(ctx context.Context) (err error) {
	r.obs.Phase(PhaseSnapshot, r.rec)
	t := r.req.Env.Now()
	r.rec.OwnOutput = ownOutput(r.req.Repo.Root, r.req.Output)
	tx, err := r.req.Repo.Begin(txn.Start{RunID: r.rec.RunID, Command: "orket run " + r.rec.Request.Instruction,
		Time: r.start, Group: r.group.ID(), Outside: r.rec.OwnOutput})
	if err != nil {
		return repoErr("take the snapshot", err)
	}
	r.tx = tx
	defer tx.Close()
	r.rec.Snapshot = tx.Ref()
	r.dirtyBefore = tx.Snapshot().Dirty()
	r.phaseTime("snapshot", t)
	defer func() {
		if p := recover(); p != nil {
			err = &Error{Code: EInternal, Msg: fmt.Sprint("panic: ", p), Hint: "this is a bug in orket; please report it"}
		}
		if !tx.Ended() {
			err = r.undo(ctx, err)
		}
	}()

	// 8. Apply the edit.
	r.obs.Phase(PhaseEdit, r.rec)
	if err := tx.Edit(); err != nil {
		return internal("write the transaction journal", "check that .git is writable", err)
	}
	r.edited = true
	t = r.req.Env.Now()
	err = r.req.Edit.apply(ctx, r)
	r.phaseTime("edit", t)
	if err != nil {
		return err
	}

	// 9. Barrier on the measured touch set.
	if err := r.barrier(); err != nil {
		return err
	}

	// 10. Verify.
	r.obs.Phase(PhaseVerify, r.rec)
	if err := tx.Verify(); err != nil {
		return internal("write the transaction journal", "check that .git is writable", err)
	}
	t = r.req.Env.Now()
	r.rec.Steps = r.runSteps(ctx)
	r.phaseTime("verify", t)
	if ctx.Err() != nil {
		return interrupted(ctx, "during verification; the tree was reverted")
	}

	// 11. Keep or revert.
	failed := failedSteps(r.rec.Steps)
	switch {
	case len(failed) == 0:
		if err := r.barrierAfterVerify(); err != nil {
			return err
		}
		return r.keep(ctx)
	case r.req.KeepOnFail:
		return r.keepFailed(failed)
	}
	disposition := Reverted
	if _, ok := r.req.Edit.(WorktreeEdit); ok {
		disposition = TakenOut
	}
	return &verifyFailedError{Failed: failed, Disposition: disposition}
}

func (PatchEdit) apply(_ context.Context, r *run) error {
	root, err := r.req.Repo.FS()
	if err != nil {
		return err
	}
	return r.patchPlan.Apply(root)
}

func (e CommandEdit) apply(ctx context.Context, r *run) error {
	repo := r.req.Repo
	env := append(append([]string{}, r.env...), r.told...)
	box, err := r.sandbox()
	if err != nil {
		return err
	}
	defer box.Close() // every process of the edit has stopped when RunStep returns
	r.obs.EditStarted(r.rec)
	// The edit runs as a step does: own process group, bounded tail; in
	// the kernel sandbox when there is one.
	r.rec.Edit = verify.RunStep(ctx, config.Step{Name: "edit", Argv: e.Argv, Required: true},
		verify.Options{Root: repo.Root, Env: env, Tail: r.req.Config.Lessons.Tail, Group: r.group, Redactor: r.red, Prepare: box.Apply},
		r.obs.StepOutput("edit"))
	if box.Enforced() {
		r.rec.Sandbox.Denied = deniedLines(r.rec.Edit.OutputTail)
	}
	r.obs.EditDone(r.rec.Edit)
	if ctx.Err() != nil {
		return interrupted(ctx, "during the edit; the tree was reverted")
	}
	return nil
}

func (WorktreeEdit) apply(context.Context, *run) error { return nil }

func (VerifyOnly) apply(context.Context, *run) error {
	return errors.New("a verify-only run applies no edit")
}

// barrier is step 9: measure what the edit wrote and check it against the
// scope and the guarded files.
func (r *run) barrier() error {
	rec := r.rec
	r.obs.Phase(PhaseBarrier, rec)
	t := r.req.Env.Now()
	ch, err := r.tx.Measure()
	if err != nil {
		return repoErr("measure the change", err)
	}
	r.phaseTime("measure", t)
	if _, worktree := r.req.Edit.(WorktreeEdit); !worktree {
		rec.Plan.TouchSet, rec.Plan.TouchCount, rec.Plan.Measured = nonNil(ch.Paths), len(ch.Paths), true
	}
	rec.GitChanges = ch.Git
	rec.IgnoredWrites = append(append([]string{}, ch.IgnoredChanged...), ch.IgnoredCreated...)
	// Ignored files are outside the transaction, but an edit may not
	// destroy them outside its scope (a .env): new ones it makes are only
	// named.
	outside := append(r.scope.Outside(rec.Plan.TouchSet), r.scope.Outside(ch.IgnoredChanged)...)
	if len(outside) > 0 || len(ch.Guarded) > 0 {
		rec.Barrier = &Barrier{Outside: outside, Guarded: ch.Guarded, CaughtBy: "measurement"}
		return &outOfScopeError{Outside: outside, Guarded: ch.Guarded, Reverted: true}
	}
	if err := r.checkProtected(rec.Plan.TouchSet, r.existedBefore, true); err != nil {
		return err
	}
	// The kernel refused writes outside the scope: the edit tried to
	// write there, and the sandbox caught it. (A refusal that names no
	// path counts when the edit then failed.)
	// A refused write to a path git ignores (a build directory the
	// sandbox did not open) is the configuration's doing: the run stops
	// if the edit failed, uncounted (learn's judge), and says what to add
	// to sandbox.write; if the edit went on, it goes on with a warning.
	if sb := rec.Sandbox; sb != nil && len(sb.Denied) > 0 {
		rf := r.refusedOutside(sb.Denied)
		failed := rec.Edit != nil && rec.Edit.Status == verify.Failed
		sb.Ignored = rf.Ignored
		yaml := ""
		if len(rf.Ignored) > 0 {
			yaml = sandboxWriteYAML(r.req.Config.Sandbox, rf.Write)
		}
		switch {
		case len(rf.Outside) > 0 || failed && !rf.All && len(rf.Ignored) == 0:
			rec.Barrier = &Barrier{Outside: rf.Outside, Ignored: rf.Ignored, Denied: sb.Denied, CaughtBy: "sandbox"}
			return &outOfScopeError{Outside: rf.Outside, Ignored: rf.Ignored, WriteYAML: yaml, Denied: sb.Denied, Reverted: true}
		case len(rf.Ignored) > 0 && failed:
			rec.Barrier = &Barrier{Ignored: rf.Ignored, Denied: sb.Denied, CaughtBy: "sandbox"}
			return &outOfScopeError{Ignored: rf.Ignored, WriteYAML: yaml, Denied: sb.Denied, Reverted: true}
		case len(rf.Ignored) > 0:
			r.obs.Warn("the kernel sandbox refused writes to git-ignored paths outside the scope (" + strings.Join(rf.Ignored, ", ") +
				"); the edit went on. To let its tools write there, orket.yaml needs " + yaml)
		}
	}
	if rec.Edit != nil && rec.Edit.Status == verify.Failed {
		return &draftFailedError{Edit: rec.Edit}
	}
	if len(rec.Plan.TouchSet) == 0 {
		return &touchsetEmptyError{}
	}
	r.content = r.contentKey(r.snapshotContent(r.tx.Snapshot().Commit), rec.Plan.TouchSet)
	r.obs.Touched(rec)
	return nil
}

// existedBefore reports whether a path was in the tree before the edit
// (for a --worktree candidate: in HEAD).
func (r *run) existedBefore(p string) bool {
	if _, ok := r.req.Edit.(WorktreeEdit); ok {
		return r.worktreeBase[p] != nil
	}
	return r.tx.Snapshot().Pre.Files[p] != nil
}

// checkProtected refuses an edit that modified or deleted protected paths
// (protect: in orket.yaml) and notes, for the verdict, the test files it
// changed in a repository without protect: and the protected paths a run
// allowed.
func (r *run) checkProtected(changed []string, existed func(string) bool, written bool) error {
	refused, allowed, tests := r.guard.check(changed, existed)
	if len(refused) > 0 {
		r.rec.Barrier = &Barrier{Protected: refused, CaughtBy: "measurement"}
		if !written {
			r.rec.Barrier.CaughtBy = "plan"
		}
		return &protectedWriteError{Paths: refused, Reverted: written}
	}
	r.verdictNotes = append(r.verdictNotes, guardNotes(allowed, tests)...)
	return nil
}

// barrierAfterVerify checks the tree once more before a passed change is
// kept: verify steps may write outside the scope only where verify.writes
// allows, and nothing may have written git's configuration, hooks or info
// files, or orket's own state, since the snapshot. (Every process the
// edit and the steps started is stopped by now.)
func (r *run) barrierAfterVerify() error {
	rec := r.rec
	ch, err := r.tx.Measure()
	if err != nil {
		return repoErr("measure the change after verification", err)
	}
	edit := map[string]bool{}
	for _, p := range rec.Plan.TouchSet {
		edit[p] = true
	}
	var outside []string
	for _, p := range ch.Paths {
		if edit[p] {
			continue
		}
		rec.StepWrites = append(rec.StepWrites, p)
		if !r.scope.Contains(p) && !allowedWrite(r.req.Config.Verify.Writes, p) {
			outside = append(outside, p)
		}
	}
	if len(outside) > 0 || len(ch.Guarded) > 0 {
		rec.Barrier = &Barrier{Outside: outside, Guarded: ch.Guarded, DuringVerify: true, CaughtBy: "measurement"}
		return &outOfScopeError{Outside: outside, Guarded: ch.Guarded, Reverted: true, DuringVerify: true}
	}
	return nil
}

// allowedWrite reports whether verify.writes lets steps write p.
func allowedWrite(globs []string, p string) bool {
	for _, g := range globs {
		if ok, _ := doublestar.Match(g, p); ok || strings.HasPrefix(p, strings.TrimSuffix(g, "/")+"/") {
			return true
		}
	}
	return false
}

// keep ends a passed run: the change stays (committed with --commit, by
// the user's git). A commit that is refused never takes a passed change
// out of the tree.
func (r *run) keep(ctx context.Context) error {
	r.obs.Phase(PhaseKeep, r.rec)
	var commitErr error
	if r.req.Commit != "" {
		id, err := r.tx.Commit(ctx, r.rec.Plan.TouchSet, r.req.Commit, r.env)
		var ce *txn.CommitError
		switch {
		case errors.As(err, &ce):
			r.rec.CommitRefused = ce.Output
			commitErr = &commitRefusedError{Output: ce.Output}
		case err != nil:
			commitErr = &commitRefusedError{Output: err.Error()}
		default:
			r.rec.Commit = id.String()
			if ref, err := r.req.Repo.Git.Storer.Reference(plumbing.HEAD); err == nil && ref.Type() == plumbing.SymbolicReference {
				r.rec.CommitBranch = ref.Target().String()
			}
		}
	}
	if err := r.recordKept(); err != nil {
		r.obs.Warn("orket reject will not be able to undo this change: " + err.Error())
		r.rec.Kept, r.rec.KeptDirs = nil, nil
	}
	if err := r.tx.End(); err != nil {
		return errors.Join(commitErr, internal("end the transaction", "orket recover --discard keeps the tree as it is", err))
	}
	return commitErr
}

// keepFailed ends a failed run with --keep-on-fail: the change stays, and
// a copy is kept as a patch.
func (r *run) keepFailed(failed []*verify.StepResult) error {
	saved, err := r.saveChange()
	if err != nil {
		r.obs.Warn("could not keep a copy of the failed change: " + err.Error())
	}
	file, published := r.publish(saved)
	r.rec.PatchFile = file
	if err := r.recordKept(); err != nil {
		r.obs.Warn("orket reject will not be able to undo this change: " + err.Error())
		r.rec.Kept, r.rec.KeptDirs = nil, nil
	}
	if err := r.tx.End(); err != nil {
		return internal("end the transaction", "orket recover --discard keeps the tree as it is", err)
	}
	if published {
		r.dropSaved()
	}
	return &verifyFailedError{Failed: failed, Disposition: Kept, Saved: file}
}

// undo takes a change out of the tree after a failure: it saves the change
// durably, reverts and proves the revert, takes a --worktree candidate out,
// and keeps the saved change under .orket/runs. If the change cannot be
// saved, nothing is taken out: the tree and the snapshot stay, and the
// outcome says so. It returns the run's outcome.
func (r *run) undo(ctx context.Context, cause error) error {
	rec := r.rec
	r.obs.Phase(PhaseRevert, rec)
	saved, err := r.saveChange()
	if err != nil {
		return &unsavedChangeError{Cause: cause, Err: err, Ref: r.tx.Ref()}
	}
	testhook.Point("change-saved")
	t := r.req.Env.Now()
	rv, err := r.tx.Revert()
	r.phaseTime("revert", t)
	rec.Revert = &Revert{Reverted: true, Paths: []string{}}
	if rv != nil {
		rec.Revert.Verified = rv.Verified
		rec.Revert.Paths = nonNil(rv.Paths)
		for _, k := range rv.Kept {
			rec.Revert.NotRestored = append(rec.Revert.NotRestored, k.Error())
			r.obs.Warn("not restored: " + k.Error())
		}
	}
	if err != nil {
		return &revertError{Err: err, Ref: r.tx.Ref(), Saved: r.req.Repo.DisplayPath(saved)}
	}
	if err := r.baseline(ctx, cause, r.req.Repo.DisplayPath(saved)); err != nil {
		return err
	}
	if _, ok := r.req.Edit.(WorktreeEdit); ok && r.edited {
		if err := r.tx.TakeOut(rec.Plan.TouchSet, r.worktreeBase, nil, true); err != nil {
			return &Error{Code: EInternal, Err: err, Msg: "take the candidate out: " + err.Error(),
				Hint: "your changes are in " + r.req.Repo.DisplayPath(saved) + "; restore them with git apply"}
		}
	}
	file, published := r.publish(saved)
	rec.PatchFile = file
	testhook.Point("change-published")
	if err := r.tx.End(); err != nil {
		return internal("end the transaction", "orket recover --discard keeps the tree as it is", err)
	}
	r.keepBaseline()
	if published {
		r.dropSaved()
	}
	return withSaved(cause, file)
}

// withSaved tells the outcome where the reverted change is kept.
func withSaved(cause error, file string) error {
	var (
		vf  *verifyFailedError
		df  *draftFailedError
		oos *outOfScopeError
		pw  *protectedWriteError
	)
	switch {
	case errors.As(cause, &vf):
		vf.Saved = file
	case errors.As(cause, &df):
		df.Saved = file
	case errors.As(cause, &oos):
		oos.Saved = file
	case errors.As(cause, &pw):
		pw.Saved = file
	}
	return cause
}

// saveChange writes the change as a patch with Txn.Save: the measured
// touch set (measured now if the run stopped before the barrier), or a
// --worktree candidate against HEAD. It returns "" when nothing changed.
func (r *run) saveChange() (string, error) {
	if !r.edited {
		return "", nil
	}
	paths := r.rec.Plan.TouchSet
	before := r.tx.Snapshot().Pre.Files
	if _, ok := r.req.Edit.(WorktreeEdit); ok {
		before = r.worktreeBase
	} else if !r.rec.Plan.Measured {
		ch, err := r.tx.Measure()
		if err != nil {
			return "", err
		}
		paths = ch.Paths
	}
	if len(paths) == 0 {
		return "", nil
	}
	root, err := r.req.Repo.FS()
	if err != nil {
		return "", err
	}
	return r.tx.Save("change.patch", changePerm(root, paths, before), func(w io.Writer) error {
		return formatChange(w, r.req.Repo, root, r.rec.RunID, paths, before)
	})
}

// changePerm is the mode of a saved change of paths (from files to the
// tree): a patch holds their content, before and after, so it is no wider
// than the most private of them. 0644 at most; a change to a 0600 file
// is saved 0600, one to a 0640 file 0640. Symlinks say nothing.
func changePerm(root *fsroot.Root, paths []string, files map[string]*txn.File) fs.FileMode {
	perm := fs.FileMode(0o644)
	narrow := func(p fs.FileMode) { perm &= p | 0o600 }
	for _, p := range paths {
		if f := files[p]; f != nil && f.Mode != filemode.Symlink && f.Perm != 0 { // 0: not known
			narrow(fs.FileMode(f.Perm))
		}
		if st, err := root.Lstat(p); err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
			narrow(fs.FileMode(st.Mode & 0o777))
		}
	}
	return perm
}

// dirPerm is the mode of a directory that holds files of mode perm: no
// one reads or lists it who cannot read them.
func dirPerm(perm fs.FileMode) fs.FileMode {
	r := perm & 0o044
	return 0o700 | r | r>>2
}

// formatChange writes the change of paths from files to the tree as a
// patch. Files too big to write out are stored as blobs, kept reachable
// under refs/orket/kept/<run-id>, and the patch refers to them.
func formatChange(w io.Writer, repo *txn.Repo, root *fsroot.Root, runID string, paths []string, files map[string]*txn.File) (err error) {
	// A bug in formatting must not end a run as if nothing happened: it
	// is an error like any other, and nothing is taken out.
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("format the change: panic: %v", p)
		}
	}()
	kept := map[string]plumbing.Hash{}
	large := func(p string) (plumbing.Hash, error) {
		id, err := repo.StoreFile(p)
		kept[p] = id
		return id, err
	}
	if err := patch.Format(w, root, paths, sidesOf(repo, files), large); err != nil {
		return err
	}
	return repo.KeepBlobs(runID, kept, nil)
}

// sidesOf reads files' earlier states from the object store (the content
// only of those small enough to write out).
func sidesOf(repo *txn.Repo, files map[string]*txn.File) patch.Before {
	return func(p string) (*patch.Side, error) {
		f := files[p]
		if f == nil {
			return nil, nil
		}
		size, err := repo.BlobSize(f.OID)
		if err != nil {
			return nil, err
		}
		s := &patch.Side{Mode: f.Mode, OID: f.OID, Size: size}
		if size <= patch.MaxInline {
			if s.Content, err = repo.ReadBlob(f.OID); err != nil {
				return nil, err
			}
		}
		return s, nil
	}
}

// publish keeps a saved change as .orket/runs/<run-id>/change.patch and
// returns where it is (repository-relative when in the tree). When that
// fails, the saved copy in the git directory is where it is, and the user
// is told.
func (r *run) publish(saved string) (file string, published bool) {
	if saved == "" {
		return "", false
	}
	dst := runsDir + "/" + r.rec.RunID + "/change.patch"
	err := copyInto(r.req.Repo, saved, dst)
	if err != nil {
		file = r.req.Repo.DisplayPath(saved)
		r.obs.Warn("could not keep the change in " + dst + " (" + err.Error() + "); it is kept in " + file)
		return file, false
	}
	return dst, true
}

// dropSaved removes the transaction's saved copies once they are kept
// under .orket/runs and the transaction is over.
func (r *run) dropSaved() {
	if err := os.RemoveAll(r.req.Repo.SavedDir(r.rec.RunID)); err != nil {
		r.obs.Warn("could not remove " + r.req.Repo.SavedDir(r.rec.RunID) + ": " + err.Error())
	}
}

// copyInto copies the file src into the tree at dst, durably, beneath the
// root and never through a symlink.
func copyInto(repo *txn.Repo, src, dst string) error {
	root, err := repo.FS()
	if err != nil {
		return err
	}
	if err := ensureOrketDir(root); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	// As private as the saved copy, in a directory as private.
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	perm := fi.Mode().Perm()
	if err := privateDir(root, path.Dir(dst), perm); err != nil {
		return err
	}
	return root.WriteFrom(dst, perm, fsroot.Options{Sync: true}, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}

// privateDir makes the directory dir (and its parents) for files of mode
// perm, narrowing dir itself when it is wider than dirPerm(perm).
func privateDir(root *fsroot.Root, dir string, perm fs.FileMode) error {
	want := dirPerm(perm)
	if err := root.MkdirAll(dir, want); err != nil {
		return err
	}
	st, err := root.Lstat(dir)
	if err != nil {
		return err
	}
	if have := fs.FileMode(st.Mode & 0o777); have&^want != 0 {
		return root.Chmod(dir, have&want)
	}
	return nil
}

// repoErr keeps what Describe recognises (a repository orket cannot
// handle) and makes anything else an internal error of what was being done.
func repoErr(what string, err error) error {
	var ue *txn.UnsupportedError
	if errors.As(err, &ue) {
		return err
	}
	return internal(what, "check the repository with git status; report this if it persists", err)
}
