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
// stay unrestricted (it reverts the tree and writes its records), so the
// restriction happens in a process of its own: Apply rewrites an
// *exec.Cmd to start /proc/self/exe (orket itself) with the real command
// line and, in the environment, the rules. This package's init function
// sees them before main runs, locks its goroutine to its OS thread,
// restricts that thread (go-landlock's system-call layer, with
// no_new_privs) and execs the real command from it: execve keeps that
// thread alone, with its credentials, so the command starts restricted.
// The command keeps the pid, process group, cgroup and parent-death
// signal that the caller gave the *exec.Cmd, so process containment
// (internal/contain) and signalling work unchanged. If the restriction
// cannot be applied, the command is not run: the helper prints the
// reason and exits 125.
//
// Two alternatives were measured and set aside. go-landlock's Config
// API restricts every thread of the process (psx signals each one): in
// the helper that adds about 3 ms for nothing. Forking the command from a
// locked thread of orket itself that restricted only itself is faster
// (no second start of the binary) and was tried, but it is not safe:
// the command shares its Landlock domain with that thread, and the
// kernel lets a process reach into the memory of a thread of its own
// domain (ptrace, process_vm_writev), which is orket's whole memory: the
// command could rewrite what orket writes later, outside the scope.
// TestCommandCannotWriteOrketsMemory holds every thread of orket out of
// the command's reach.
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
