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

	"github.com/orket/orket/internal/flock"
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
// waits until the lock is free or ctx ends. The lock is an flock, so it
// dies with its process: a killed run never leaves it behind. Linked
// worktrees of one repository share it.
func (r *Repo) Lock(ctx context.Context, exclusive, wait bool, h Holder) (unlock func(), err error) {
	dir := filepath.Join(r.CommonDir, "orket")
	release, err := flock.Acquire(ctx, filepath.Join(dir, "lock"), flock.Mode{Exclusive: exclusive, Wait: wait})
	if errors.Is(err, flock.ErrBusy) {
		return nil, &LockedError{Holder: readHolder(dir)}
	}
	if err != nil {
		return nil, err
	}
	holderFile := filepath.Join(dir, "holder.json")
	if exclusive {
		b, _ := json.Marshal(h)
		// The holder's description is a courtesy to whoever finds the
		// lock taken; failing to write it changes nothing else.
		_ = os.WriteFile(holderFile, b, 0o644)
	}
	return func() {
		if exclusive {
			os.Remove(holderFile)
		}
		release()
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
	if err := syscall.Kill(h.PID, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return "verify-only orket runs"
	}
	return strings.TrimSpace(h.String())
}
