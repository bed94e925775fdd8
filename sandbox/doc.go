// Package sandbox runs an edit command so that the kernel lets it write
// only where its transaction allows: the scope's directories, a private
// temporary directory, the configured sandbox.write paths, a few devices
// (/dev/null and the like) and, when the edit may commit, the git
// directory. It may read and execute everything. On Linux the barrier is
// Landlock (ABI 2 or later: kernel 5.19+); a write anywhere else fails
// inside the command with "permission denied", and every process the
// command starts inherits the restriction, background ones included.
//
// # Mechanism
//
// Landlock restricts the thread that asks for it and everything that
// thread starts afterwards; a restriction cannot be lifted. orket must
// stay unrestricted (it reverts the tree and writes its records), so
// Start locks a new goroutine to its OS thread, restricts that thread
// alone (go-landlock's system-call layer, with no_new_privs) and starts
// the command from it: the child inherits the thread's credentials, so
// the command starts restricted, while every other thread of orket stays
// free. The goroutine never unlocks its thread, so no other goroutine
// ever runs there, and the runtime ends the thread when the goroutine
// returns. It returns only once the command has been waited for (the
// release function Start returns): Linux sends the parent-death signal
// when the thread that started a process ends, and the run engine sets
// SIGKILL there. The command keeps the pid, process group, cgroup and
// parent-death signal the caller gave the *exec.Cmd, so process
// containment (internal/contain) and signalling work unchanged. If the
// restriction cannot be applied, the command is not started
// (*RestrictError).
//
// Two alternatives were measured and set aside. go-landlock's Config
// API restricts every thread of the process (psx signals each one),
// orket's own among them. Re-executing orket as a helper process that
// restricts itself and execs the command (what orket did first) adds a
// Go binary's start, 5-10 ms on a 2-core machine, to every edit command.
//
// # What it does not cover
//
// Reads, network, signals and connections to Unix sockets are not
// restricted. Inside the directories it opens, the sandbox is wider than
// the scope (a glob is widened to a directory; a scope at the root, or an
// edit allowed to commit, puts .git and .orket within reach): there,
// measurement of the touch set is the exact line. A hard link made
// before the run from inside an open directory to a file elsewhere is
// writable through that link (Landlock checks the path used); making such
// a link during the run is refused. See docs/sandbox.md.
package sandbox
