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
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
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

// restrict applies the spec's rules to every thread of this process,
// and sets no_new_privs (a set-user-ID program cannot escape).
func restrict(sp spec) error {
	cfg, err := landlock.NewConfig(landlock.AccessFSSet(sp.Handled))
	if err != nil {
		return err
	}
	rules := make([]landlock.Rule, 0, len(sp.Rules))
	for _, r := range sp.Rules {
		// A path gone since New only narrows what may be written.
		rules = append(rules, landlock.PathAccess(landlock.AccessFSSet(r.Access), r.Paths...).IgnoreIfMissing())
	}
	return cfg.RestrictPaths(rules...)
}
