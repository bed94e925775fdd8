package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"golang.org/x/sys/unix"

	"github.com/orket/orket/internal/fsroot"
)

// ErrStale reports a compare-and-swap of a ref that no longer held the
// id it was expected to.
var ErrStale = errors.New("the ref moved")

// A LockedError reports a lock file another process held for longer than
// a write waits for it.
type LockedError struct{ Lock string }

func (e *LockedError) Error() string { return e.Lock + " is locked" }

// LockOptions say how WriteLocked writes.
type LockOptions struct {
	// Perm is the file's permission bits (0: its own, or 0644 for a new
	// file).
	Perm fs.FileMode
	// Check, if set, is called with the lock held and the new content
	// written, just before the rename: an error leaves the file as it
	// was. It makes the write a compare-and-swap.
	Check func() error
	// Wait waits for a lock another process holds, doubling from a
	// millisecond to about a second in all (ctx ends it sooner), then
	// fails with a *LockedError: for a repository whose other writers
	// orket does not exclude. Without it a lock left behind is replaced:
	// the caller holds orket's own lock on the repository.
	Wait bool
}

// WriteLocked writes data to the file at path with git's lock-file
// protocol: into path.lock, created exclusively beside it (never through
// a symlink), fsynced, renamed over path, and the directory fsynced.
// Missing directories are made.
func WriteLocked(ctx context.Context, path string, data []byte, o LockOptions) error {
	root, err := fsroot.MkdirOpen(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer root.Close()
	name := filepath.Base(path)
	perm := o.Perm
	if perm == 0 {
		perm = 0o644
		if st, err := root.Lstat(name); err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
			perm = os.FileMode(st.Mode & 0o777)
		}
	}
	wo := fsroot.Options{Sync: true, GitLock: true, Check: o.Check}
	if o.Wait {
		wo.LockHeld = waitForLock(ctx, path+".lock")
	}
	return root.WriteFile(name, data, perm, wo)
}

// waitForLock waits for another process's lock: 1 ms, then twice as long
// each time, and fails once a wait would pass half a second.
func waitForLock(ctx context.Context, lock string) func(tries int) error {
	return func(tries int) error {
		wait := time.Millisecond << (tries - 1)
		if tries > 11 || wait > 512*time.Millisecond {
			return &LockedError{Lock: lock}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
			return nil
		}
	}
}

// ReadRef reads the ref name (refs/...) of the repository whose common
// directory is gitDir as git stores it: its loose file, else its line in
// packed-refs. It returns the zero id when there is no such ref.
func ReadRef(gitDir, name string) (plumbing.Hash, error) {
	b, err := os.ReadFile(filepath.Join(gitDir, filepath.FromSlash(name)))
	if err == nil {
		s := strings.TrimSpace(string(b))
		if !plumbing.IsHash(s) {
			return plumbing.ZeroHash, fmt.Errorf("%s in %s is not a commit id", name, gitDir)
		}
		return plumbing.NewHash(s), nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return plumbing.ZeroHash, err
	}
	packed, err := os.ReadFile(filepath.Join(gitDir, "packed-refs"))
	if errors.Is(err, os.ErrNotExist) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	for _, line := range strings.Split(string(packed), "\n") {
		h, ref, ok := strings.Cut(line, " ")
		if ok && ref == name && plumbing.IsHash(h) {
			return plumbing.NewHash(h), nil
		}
	}
	return plumbing.ZeroHash, nil
}

// UpdateRef sets the ref name of the repository whose common directory
// is gitDir from old (zero: no such ref) to next, with git's lock-file
// protocol, waiting for another writer's lock (see LockOptions.Wait), and
// writes the move to the reflog as git would (see RefLog). It fails with
// ErrStale when the ref no longer is old.
func UpdateRef(ctx context.Context, gitDir, name string, old, next plumbing.Hash, log RefLog) error {
	err := WriteLocked(ctx, filepath.Join(gitDir, filepath.FromSlash(name)), []byte(next.String()+"\n"), LockOptions{
		Wait: true,
		Check: func() error {
			cur, err := ReadRef(gitDir, name)
			if err == nil && cur != old {
				err = ErrStale
			}
			if err != nil {
				return err
			}
			// As git does: the log is written with the ref's lock held,
			// before the ref moves.
			return logRefUpdate(gitDir, name, old, next, log)
		},
	})
	var le *LockedError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &le):
		return le
	case errors.Is(err, ErrStale):
		return ErrStale
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return ctx.Err()
	}
	return err
}

// WriteRef points the ref name of the repository whose common directory
// is gitDir at id, whatever it held, with git's lock-file protocol (a
// lock left behind is replaced: the caller holds orket's own lock), and
// writes the move to the reflog as git would (see RefLog).
func WriteRef(gitDir, name string, id plumbing.Hash, log RefLog) error {
	return WriteLocked(context.Background(), filepath.Join(gitDir, filepath.FromSlash(name)), []byte(id.String()+"\n"), LockOptions{
		Check: func() error {
			old, err := ReadRef(gitDir, name)
			if err != nil {
				old = plumbing.ZeroHash
			}
			return logRefUpdate(gitDir, name, old, id, log)
		},
	})
}

// DeleteRef deletes the ref name of the repository whose common
// directory is gitDir: its loose file, and its lines in packed-refs
// (rewritten with git's lock-file protocol). Directories the loose file
// leaves empty stay. Its reflog goes too, as git's does.
func DeleteRef(gitDir, name string) error {
	if err := os.Remove(filepath.Join(gitDir, filepath.FromSlash(name))); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := deleteLog(gitDir, name); err != nil {
		return err
	}
	packed := filepath.Join(gitDir, "packed-refs")
	b, err := os.ReadFile(packed)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !strings.Contains(string(b), " "+name+"\n") {
		return nil
	}
	var out []string
	lines := strings.SplitAfter(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		if strings.HasSuffix(lines[i], " "+name+"\n") {
			if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "^") {
				i++ // the peeled line of an annotated tag
			}
			continue
		}
		out = append(out, lines[i])
	}
	return WriteLocked(context.Background(), packed, []byte(strings.Join(out, "")), LockOptions{})
}
