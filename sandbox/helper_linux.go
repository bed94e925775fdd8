package sandbox

// This file is the helper side of the re-execution: the process Apply
// starts restricts itself, then becomes the edit command. Invariant: the
// command never runs unless the restriction is in force.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Exit statuses of the helper when the command does not start, as env(1)
// and shells use them.
const (
	exitSandbox  = 125 // the restriction could not be applied
	exitCannot   = 126 // the program cannot be executed
	exitNotFound = 127 // the program was not found
)

// init runs the helper when orket is re-executed by Apply: before main,
// so no other code of orket runs in the restricted process. In every
// other start of orket it costs one environment lookup.
func init() {
	if v, ok := os.LookupEnv(envVar); ok {
		os.Exit(helper(v, os.Args))
	}
}

// helper restricts the process as the spec says and execs the command;
// it returns only an exit status for a command that did not start.
func helper(payload string, args []string) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "orket: sandbox: "+format+"\n", a...)
		return code
	}
	var sp spec
	if err := json.Unmarshal([]byte(payload), &sp); err != nil || sp.V != 1 {
		return fail(exitSandbox, "unreadable %s (%v); the command was not run", envVar, err)
	}
	if len(args) < 2 {
		return fail(exitSandbox, "no command given; nothing was run")
	}
	argv := args[1:]
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if len(kv) < len(envVar)+1 || kv[:len(envVar)+1] != envVar+"=" {
			env = append(env, kv)
		}
	}
	path := sp.Path
	if path == "" {
		// Looked up before the restriction, with the command's PATH.
		os.Unsetenv(envVar)
		p, err := exec.LookPath(argv[0])
		if err != nil && !errors.Is(err, exec.ErrDot) {
			return fail(exitNotFound, "cannot start %s: %v", argv[0], err)
		}
		path = p
	}
	// The restriction is this thread's; execve keeps this thread alone.
	runtime.LockOSThread()
	if err := restrict(sp); err != nil {
		return fail(exitSandbox, "cannot restrict the edit command, so it was not run: %v", err)
	}
	err := syscall.Exec(path, argv, env)
	code := exitCannot
	if errors.Is(err, syscall.ENOENT) {
		code = exitNotFound
	}
	return fail(code, "cannot start %s: %v", argv[0], err)
}

// restrict applies the spec's rules to the calling thread, which the
// caller keeps locked and execs from: execve keeps only that thread, with
// its credentials, so the command starts restricted and with
// no_new_privs (a set-user-ID program cannot escape). Restricting every
// thread, as go-landlock's Config does, costs a signal to each of the
// Go runtime's threads for nothing.
func restrict(sp spec) error {
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
