package feedback

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"time"

	"golang.org/x/sys/unix"

	"github.com/orket/orket/internal/fsroot"
)

// Every file of this package below .orket is reached through an fsroot
// (no symlink followed, no "..") and opened so that nothing odd a person
// put there (a FIFO, a device, a symlink to elsewhere) blocks orket or
// makes it write outside .orket.

// ErrNotRegular reports a file that is a FIFO, a device, a socket or a
// directory where a regular file was expected.
var ErrNotRegular = errors.New("not a regular file")

// lockAt takes an exclusive flock on the file rel below root (created if
// missing, never through a symlink) and returns its release. With wait
// it polls until ctx ends; otherwise a held lock is errBusy.
func lockAt(ctx context.Context, root *fsroot.Root, rel string, wait bool) (func(), error) {
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
			return nil, errBusy
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

var errBusy = errors.New("held by another process")

// readRegular reads at most max bytes of the regular file rel (without
// following a symlink, without blocking on a FIFO) and reports whether
// there was more, with the file's stat.
func readRegular(root *fsroot.Root, rel string, max int64) ([]byte, bool, unix.Stat_t, error) {
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
	return readRegularAt(int(d.Fd()), base, rel, max)
}

// readRegularAt is readRegular in the directory dirfd.
func readRegularAt(dirfd int, name, shown string, max int64) ([]byte, bool, unix.Stat_t, error) {
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

// sameFile reports whether two stats are of one unchanged file.
func sameFile(a, b unix.Stat_t) bool {
	return a.Ino == b.Ino && a.Dev == b.Dev && a.Size == b.Size && a.Mtim == b.Mtim && a.Ctim == b.Ctim
}
