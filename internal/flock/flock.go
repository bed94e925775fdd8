// Package flock takes advisory file locks (flock(2)): they die with the
// process that holds them, so a killed orket never leaves a lock behind.
package flock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// ErrBusy reports that the lock is held elsewhere and the caller did not
// want to wait.
var ErrBusy = errors.New("lock is held by another process")

// How a lock is taken.
type Mode struct {
	Exclusive bool // one holder; otherwise shared with other shared holders
	Wait      bool // wait until free (polling, until ctx ends); otherwise ErrBusy
}

// Acquire locks the file at path (created if missing, with its directory)
// and returns the function that releases it.
func Acquire(ctx context.Context, path string, m Mode) (release func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	how := unix.LOCK_SH
	if m.Exclusive {
		how = unix.LOCK_EX
	}
	for {
		err = unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, &os.PathError{Op: "flock", Path: path, Err: err}
		}
		if !m.Wait {
			f.Close()
			return nil, ErrBusy
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return func() {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}
