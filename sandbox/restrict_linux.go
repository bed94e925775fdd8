package sandbox

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"sync"
	"syscall"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// exitSandbox is the exit status a command that could not be restricted
// is given (it never ran), as env(1) uses 125 for its own failures.
const exitSandbox = 125

// A RestrictError says the restriction could not be applied, so the
// command was not started.
type RestrictError struct{ Err error }

func (e *RestrictError) Error() string {
	return "sandbox: cannot restrict the edit command, so it was not run: " + e.Err.Error()
}

func (e *RestrictError) Unwrap() error { return e.Err }

// ExitCode is the status a shell would report for the command: 125.
func (e *RestrictError) ExitCode() int { return exitSandbox }

// Start starts cmd restricted to the sandbox (unrestricted when the
// sandbox is not enforced), with TMPDIR its private temporary directory.
// Its Dir, stdio, SysProcAttr (process group, cgroup, parent-death
// signal) and ExtraFiles are kept, so containment applied before Start
// still holds. Call release once cmd.Wait has returned: until then the
// thread that started cmd stays, since the kernel sends the parent-death
// signal when that thread ends. If the restriction cannot be applied,
// cmd does not start and the error is a *RestrictError.
func (s *Sandbox) Start(cmd *exec.Cmd) (release func(), err error) {
	if !s.Enforced() || cmd.Err != nil {
		return func() {}, cmd.Start()
	}
	cmd.Env = s.env(cmd.Env)
	started := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		// The thread is never unlocked: when this goroutine returns, the
		// runtime ends the thread, and the restriction with it; no other
		// goroutine ever runs on it.
		runtime.LockOSThread()
		if err := restrict(s.spec); err != nil {
			started <- &RestrictError{err}
			return
		}
		err := cmd.Start()
		started <- err
		if err == nil {
			<-done
		}
	}()
	if err := <-started; err != nil {
		return func() {}, err
	}
	return sync.OnceFunc(func() { close(done) }), nil
}

// restrict applies the spec's rules to the calling thread, which the
// caller keeps locked: a child it forks inherits the thread's
// credentials, so the command starts restricted and with no_new_privs (a
// set-user-ID program cannot escape), while every other thread of orket
// stays free. Restricting every thread, as go-landlock's Config does,
// would restrict orket itself.
func restrict(sp *spec) error {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	if sp.Handled&^handled(abi) != 0 {
		return fmt.Errorf("landlock ABI %d cannot restrict %#x", abi, sp.Handled&^handled(abi))
	}
	fd, err := ll.LandlockCreateRuleset(&ll.RulesetAttr{HandledAccessFS: sp.Handled}, 0)
	if err != nil {
		return fmt.Errorf("landlock_create_ruleset: %w", err)
	}
	defer syscall.Close(fd)
	for _, r := range sp.Rules {
		for _, p := range r.Paths {
			if err := addRule(fd, p, r.Access); err != nil {
				return err
			}
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := ll.LandlockRestrictSelf(fd, 0); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

// addRule lets the hierarchy at path be written as access says. A path
// gone since New is skipped: that only narrows what may be written.
func addRule(ruleset int, path string, access uint64) error {
	fd, err := syscall.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if errors.Is(err, syscall.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer syscall.Close(fd)
	if err := ll.LandlockAddPathBeneathRule(ruleset, &ll.PathBeneathAttr{ParentFd: fd, AllowedAccess: access}, 0); err != nil {
		return fmt.Errorf("landlock_add_rule %s: %w", path, err)
	}
	return nil
}
