package orket

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestDescribeIO: a file system's refusal is E_IO with what to free,
// never E_INTERNAL "a bug", however deep it is wrapped; other errors stay
// what they were.
func TestDescribeIO(t *testing.T) {
	for _, c := range []struct {
		name  string
		errno error
		code  Code
		hint  string
	}{
		{"no space", syscall.ENOSPC, EIO, "free space on the file system holding .orket/runs (df shows how much is left), then run the command again; check that .orket is writable"},
		{"quota", syscall.EDQUOT, EIO, "your disk quota on the file system holding .orket/runs is used up"},
		{"read-only", syscall.EROFS, EIO, "the file system holding .orket/runs is read-only"},
		{"i/o error", syscall.EIO, EIO, "reported an I/O error"},
		{"other", syscall.EPERM, EInternal, "check that .orket is writable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := internal("keep the change", "check that .orket is writable",
				fmt.Errorf("write: %w", &os.PathError{Op: "write", Path: ".orket/runs/x.patch", Err: c.errno}))
			p := Describe(err)
			if p.Code != c.code || p.Exit != c.code.Exit() || !strings.Contains(p.Hint, c.hint) {
				t.Errorf("Describe = %s (exit %d), hint %q; want %s, hint containing %q", p.Code, p.Exit, p.Hint, c.code, c.hint)
			}
			if c.code == EIO && strings.Contains(p.Line(), "bug") {
				t.Errorf("line %q", p.Line())
			}
		})
	}
	if p := Describe(errors.New("plain")); p.Code != EInternal {
		t.Errorf("plain error: %s", p.Code)
	}
}
