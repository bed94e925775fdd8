package txn

import (
	"os"
	"syscall"
)

// crashAt names a point where the process kills itself with SIGKILL, to
// test crash safety at places a test cannot reach from outside (in the
// middle of a revert). Empty in normal use.
var crashAt string

// SetCrashPoint makes the process SIGKILL itself when it reaches point:
// "snapshot-published" (snapshot durable, edit not started) or
// "revert-midway" (files restored, index and refs not yet). orket sets it
// from ORKET_CRASH_AT; it exists for crash tests.
func SetCrashPoint(point string) { crashAt = point }

func crashPoint(point string) {
	if crashAt == point {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // SIGKILL is not deliverable late, but never continue
	}
}
