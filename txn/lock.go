package txn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A LockedError reports that another run holds the repository lock.
type LockedError struct {
	Holder string // who holds it, as they described themselves; may be empty
}

func (e *LockedError) Error() string {
	if e.Holder == "" {
		return "the repository is locked by another orket run"
	}
	return "the repository is locked by " + e.Holder
}

// Holder describes a lock holder to those who find the lock taken.
type Holder struct {
	RunID   string    `json:"run_id"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	Command string    `json:"command"`
}

func (h Holder) String() string {
	return fmt.Sprintf("orket run %s (pid %d, started %s): %s", h.RunID, h.PID, h.Started.Format(time.RFC3339), h.Command)
}

// Lock takes the repository lock: exclusive for a mutating run, shared for
// verify-only runs (which may run together but never beside a mutating
// one). Without wait it fails at once with a *LockedError; with wait it
// polls until the lock is free or ctx ends. The lock is an flock, so it
// dies with its process: a killed run never leaves it behind.
func (r *Repo) Lock(ctx context.Context, exclusive, wait bool, h Holder) (unlock func(), err error) {
	dir := filepath.Join(r.CommonDir, "orket")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	for {
		err = unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, err
		}
		if !wait {
			holder := readHolder(dir)
			f.Close()
			return nil, &LockedError{Holder: holder}
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	holderFile := filepath.Join(dir, "holder.json")
	if exclusive {
		b, _ := json.Marshal(h)
		os.WriteFile(holderFile, b, 0o644)
	}
	return func() {
		if exclusive {
			os.Remove(holderFile)
		}
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}

func readHolder(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "holder.json"))
	if err != nil {
		return "verify-only orket runs"
	}
	var h Holder
	if json.Unmarshal(b, &h) != nil || h.PID == 0 {
		return ""
	}
	if syscall.Kill(h.PID, 0) != nil && !errors.Is(syscall.Kill(h.PID, 0), syscall.EPERM) {
		return "verify-only orket runs"
	}
	return strings.TrimSpace(h.String())
}
