package memsync

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/orket/orket/internal/fsroot"
)

// localLog is a log's working file as a sync reads it, under the log's
// lock.
type localLog struct {
	fast bool
	// fast: the file is the content of the last sync (base bytes) and
	// appended lines after it.
	base     int64
	appended []byte
	// slow: the whole file.
	whole []byte
}

// readLocalLog reads a working log; ls (nil: none) is what the last sync
// wrote, trusted only when the file shows it still is.
func readLocalLog(path string, ls *logState) (*localLog, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return &localLog{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, &os.PathError{Op: "read", Path: path, Err: errors.New("not a regular file")}
	}
	if ls != nil && uint64(st.Dev) == ls.Dev && st.Ino == ls.Ino && st.Size >= ls.Size {
		from := ls.Size - tailWindow
		if from < 0 {
			from = 0
		}
		win := make([]byte, ls.Size-from)
		if _, err := f.ReadAt(win, from); err == nil && tailHash(win) == ls.Tail {
			rest := make([]byte, st.Size-ls.Size)
			if _, err := f.ReadAt(rest, ls.Size); err == nil || errors.Is(err, io.EOF) {
				return &localLog{fast: true, base: ls.Size, appended: rest}, nil
			}
		}
	}
	whole, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	return &localLog{whole: whole}, nil
}

// writeLocalLog makes the working log hold prefix bytes of what it holds
// followed by tail. With a trusted prefix (the fast path), the tail is
// written in place; otherwise full() gives the whole content, written to
// a temporary file that is renamed over the log. It returns the file's
// identity and size.
func writeLocalLog(path string, loc *localLog, prefix int64, tail []byte, full func() ([]byte, error)) (dev, ino uint64, size int64, err error) {
	if loc.fast && prefix > 0 {
		f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW, 0)
		if err != nil {
			return 0, 0, 0, err
		}
		defer f.Close()
		if _, err := f.WriteAt(tail, prefix); err != nil {
			return 0, 0, 0, err
		}
		if err := f.Truncate(prefix + int64(len(tail))); err != nil {
			return 0, 0, 0, err
		}
		if err := f.Sync(); err != nil {
			return 0, 0, 0, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(int(f.Fd()), &st); err != nil {
			return 0, 0, 0, err
		}
		return uint64(st.Dev), st.Ino, st.Size, nil
	}
	data, err := full()
	if err != nil {
		return 0, 0, 0, err
	}
	root, err := fsroot.MkdirOpen(filepath.Dir(path))
	if err != nil {
		return 0, 0, 0, err
	}
	defer root.Close()
	if err := root.WriteFile(filepath.Base(path), data, 0o644, fsroot.Options{Sync: true}); err != nil {
		return 0, 0, 0, err
	}
	st, err := root.Lstat(filepath.Base(path))
	if err != nil {
		return 0, 0, 0, err
	}
	return uint64(st.Dev), st.Ino, st.Size, nil
}
