package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/orket/orket/internal/fsroot"
)

// The state directory's files that people edit or drop there (the agent
// memory, the rejected folder) are reached through an fsroot (no symlink
// followed, no "..") and opened so that nothing odd a person put there (a
// FIFO, a device, a symlink to elsewhere) blocks orket or makes it write
// outside .orket.

// ErrNotRegular reports a file that is a FIFO, a device, a socket or a
// directory where a regular file was expected.
var ErrNotRegular = errors.New("not a regular file")

// LockAt takes an exclusive flock on the file rel below root (created if
// missing, never through a symlink) and returns its release. With wait
// it polls until ctx ends; otherwise a held lock is ErrBusy.
func LockAt(ctx context.Context, root *fsroot.Root, rel string, wait bool) (func(), error) {
	dir, base := path.Split(rel)
	dir = path.Clean(dir)
	if dir == "." {
		dir = ""
	}
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	d, err := root.OpenDir(dir)
	if err != nil {
		return nil, err
	}
	fd, err := unix.Openat(int(d.Fd()), base, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0o644)
	d.Close()
	if err != nil {
		return nil, &os.PathError{Op: "lock", Path: rel, Err: err}
	}
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			unix.Close(fd)
			return nil, &os.PathError{Op: "flock", Path: rel, Err: err}
		}
		if !wait {
			unix.Close(fd)
			return nil, ErrBusy
		}
		select {
		case <-ctx.Done():
			unix.Close(fd)
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return func() {
		unix.Flock(fd, unix.LOCK_UN)
		unix.Close(fd)
	}, nil
}

// ErrBusy reports a lock held by another process (LockAt without wait).
var ErrBusy = errors.New("held by another process")

// ReadRegular reads at most max bytes of the regular file rel (without
// following a symlink, without blocking on a FIFO) and reports whether
// there was more, with the file's stat.
func ReadRegular(root *fsroot.Root, rel string, max int64) ([]byte, bool, unix.Stat_t, error) {
	var st unix.Stat_t
	dir, base := path.Split(rel)
	dir = path.Clean(dir)
	if dir == "." {
		dir = ""
	}
	d, err := root.OpenDir(dir)
	if err != nil {
		return nil, false, st, err
	}
	defer d.Close()
	return ReadRegularAt(int(d.Fd()), base, rel, max)
}

// ReadRegularAt is ReadRegular in the directory dirfd.
func ReadRegularAt(dirfd int, name, shown string, max int64) ([]byte, bool, unix.Stat_t, error) {
	var st unix.Stat_t
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, false, st, &os.PathError{Op: "open", Path: shown, Err: fsroot.ErrEscapes}
	}
	if err != nil {
		return nil, false, st, &os.PathError{Op: "open", Path: shown, Err: err}
	}
	f := os.NewFile(uintptr(fd), shown)
	defer f.Close()
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, false, st, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, false, st, &os.PathError{Op: "read", Path: shown, Err: ErrNotRegular}
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, false, st, fmt.Errorf("read %s: %w", shown, err)
	}
	if int64(len(b)) > max {
		return b[:max], true, st, nil
	}
	return b, false, st, nil
}

// SameFile reports whether two stats are of one unchanged file.
func SameFile(a, b unix.Stat_t) bool {
	return a.Ino == b.Ino && a.Dev == b.Dev && a.Size == b.Size && a.Mtim == b.Mtim && a.Ctim == b.Ctim
}

// ErrChanged reports a file that changed since it was read: a person
// saved it meanwhile (WriteIfSame).
var ErrChanged = errors.New("changed since it was read")

// WriteIfSame writes data to the regular file rel below root, atomically
// and synced, with the mode it had (0644 for a new one), unless the file
// changed since it was read (existed, with the stat before): then it
// writes nothing and returns ErrChanged, and the caller reads it again.
func WriteIfSame(root *fsroot.Root, rel string, data []byte, existed bool, before unix.Stat_t) error {
	mode := os.FileMode(0o644)
	if existed {
		mode = os.FileMode(before.Mode & 0o7777)
	}
	return root.WriteFile(rel, data, mode, fsroot.Options{Sync: true, Check: func() error {
		now, err := root.Lstat(rel)
		if existed != (err == nil) || existed && !SameFile(before, now) {
			return ErrChanged
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, unix.ENOENT) {
			return err
		}
		return nil
	}})
}

// SweepTemps removes from the directory rel of root the temporary files
// of atomic writes (fsroot.TempPrefix) that a killed process left before
// their rename, once older than age: a younger one may be a write still
// under way. It is best effort: what it cannot remove stays.
func SweepTemps(root *fsroot.Root, rel string, age time.Duration, now time.Time) {
	names, err := root.ReadDirNames(rel)
	if err != nil {
		return
	}
	for _, n := range names {
		if !strings.HasPrefix(n, fsroot.TempPrefix) {
			continue
		}
		p := path.Join(rel, n)
		if st, err := root.Lstat(p); err == nil && now.Sub(time.Unix(st.Mtim.Unix())) > age {
			root.Remove(p) //nolint:errcheck // best effort: a leftover, read by nothing
		}
	}
}
