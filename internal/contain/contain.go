// Package contain keeps every process an edit command or a verify step
// starts, and all of their descendants (double forks and setsid
// included), where orket can find and stop them.
//
// Where the system lets orket make a cgroup (v2) below its own, a Group is
// such a cgroup: processes are started straight into it (clone3 with
// CLONE_INTO_CGROUP), nothing they do can take them out, and Kill stops
// them all at once (cgroup.kill, or freeze and SIGKILL each). Elsewhere a
// Group is an environment marker every process inherits, with orket as
// the child subreaper so that orphans stay below it; Kill stops every
// process carrying the marker and their descendants. A process that both
// clears its environment and escapes orket's process tree is beyond the
// marker; the cgroup has no such gap.
//
// A Group's ID is recorded in the transaction journal, so that recovery
// after a kill -9 stops whatever is left before it restores the tree.
package contain

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// MarkerVar is the environment variable that marks a group's processes.
const MarkerVar = "ORKET_CONTAIN"

// A Group is a set of processes and all their descendants.
type Group struct {
	cgroup string // the cgroup's directory; "" in marker mode
	fd     int    // the cgroup directory, for CLONE_INTO_CGROUP
	marker string // MarkerVar's value, in every process's environment
}

// New makes a group named name (a run id, say): a cgroup when possible.
func New(name string) *Group { return newGroup(name, true) }

func newGroup(name string, tryCgroup bool) *Group {
	g := &Group{fd: -1, marker: name}
	if dir, ok := cgroupBase(); ok && tryCgroup {
		collect(dir)
		path := filepath.Join(dir, "orket-"+strconv.Itoa(os.Getpid())+"-"+sanitize(name))
		if err := os.Mkdir(path, 0o755); err == nil || errors.Is(err, os.ErrExist) {
			if fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
				g.cgroup, g.fd = path, fd
				return g
			}
			os.Remove(path)
		}
	}
	// Orphans of the group's processes are reparented to orket, not to
	// init, so that they stay findable as descendants.
	unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	return g
}

// Sub makes a group inside g (for steps that run side by side: each is
// stopped alone, all are stopped with g).
func (g *Group) Sub(name string) *Group {
	s := &Group{fd: -1, marker: g.marker + "/" + name}
	if g.cgroup == "" {
		return s
	}
	path := filepath.Join(g.cgroup, sanitize(name))
	if err := os.Mkdir(path, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return s
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return s
	}
	s.cgroup, s.fd = path, fd
	return s
}

// ID names the group for the journal: "cgroup:PATH" or "env:MARKER".
func (g *Group) ID() string {
	if g.cgroup != "" {
		return "cgroup:" + g.cgroup
	}
	return "env:" + g.marker
}

// Cgroup reports whether the group is a cgroup.
func (g *Group) Cgroup() bool { return g.cgroup != "" }

// Apply makes cmd start inside the group.
func (g *Group) Apply(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if g.fd >= 0 {
		cmd.SysProcAttr.UseCgroupFD = true
		cmd.SysProcAttr.CgroupFD = g.fd
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, MarkerVar+"="+g.marker)
}

// Kill stops every process of the group and waits until none is left (or
// five seconds pass, then says which remain).
func (g *Group) Kill() error {
	if g.cgroup != "" {
		return killCgroup(g.cgroup)
	}
	return killMarked(g.marker)
}

// Close stops every process of the group and removes its cgroup.
func (g *Group) Close() error {
	err := g.Kill()
	if g.fd >= 0 {
		unix.Close(g.fd)
		g.fd = -1
	}
	if g.cgroup != "" {
		err = errors.Join(err, removeCgroup(g.cgroup))
	}
	return err
}

// collect stops and removes the groups of orket processes that died
// without closing them (a kill -9, a restore by hand): whatever still runs
// there is what a crashed run left behind.
func collect(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "orket-")
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() || syscall.Kill(pid, 0) == nil || errors.Is(syscall.Kill(pid, 0), syscall.EPERM) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if killCgroup(p) == nil {
			removeCgroup(p)
		}
	}
}

// KillLeftovers stops what is left of a group known only by its ID (after
// a crash) and removes its cgroup.
func KillLeftovers(id string) error {
	kind, what, ok := strings.Cut(id, ":")
	switch {
	case !ok:
		return fmt.Errorf("contain: bad group id %q", id)
	case kind == "cgroup":
		if _, err := os.Stat(what); errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return errors.Join(killCgroup(what), removeCgroup(what))
	case kind == "env":
		return killMarked(what)
	}
	return fmt.Errorf("contain: bad group id %q", id)
}

// cgroupBase returns the cgroup v2 directory of this process, if orket may
// make groups below it.
func cgroupBase() (string, bool) {
	mount := cgroup2Mount()
	if mount == "" {
		return "", false
	}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			dir := filepath.Join(mount, filepath.Clean("/"+rest))
			if unix.Access(dir, unix.W_OK) != nil {
				return "", false
			}
			if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err != nil {
				return "", false
			}
			return dir, true
		}
	}
	return "", false
}

// cgroup2Mount finds where the cgroup v2 hierarchy is mounted.
func cgroup2Mount() string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		for i, fl := range fields {
			if fl == "-" && i+1 < len(fields) && fields[i+1] == "cgroup2" && len(fields) > 4 {
				return fields[4]
			}
		}
	}
	return ""
}

// killCgroup kills every process in a cgroup and its children, and waits
// until it is empty.
func killCgroup(dir string) error {
	if err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0); err != nil {
		// Kernels before 5.14: freeze, kill each, thaw.
		os.WriteFile(filepath.Join(dir, "cgroup.freeze"), []byte("1"), 0)
		for _, pid := range cgroupPids(dir) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		os.WriteFile(filepath.Join(dir, "cgroup.freeze"), []byte("0"), 0)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := cgroupPids(dir)
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("contain: %d process(es) of %s did not stop: %v", len(left), dir, left)
		}
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cgroupPids lists the processes of a cgroup and of every cgroup below it.
func cgroupPids(dir string) []int {
	var pids []int
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(p, "cgroup.procs"))
		if err != nil {
			return nil
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
		return nil
	})
	return pids
}

// removeCgroup removes a cgroup and the ones below it, deepest first.
func removeCgroup(dir string) error {
	var dirs []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	var errs []error
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Remove(dirs[i]); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// killMarked kills every process whose environment carries the marker (or
// a sub-group's marker below it), and their descendants, until none is
// left.
func killMarked(marker string) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		victims := marked(marker)
		if len(victims) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("contain: %d process(es) marked %s did not stop: %v", len(victims), marker, victims)
		}
		for _, pid := range victims {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// marked lists the processes carrying the marker and their descendants.
func marked(marker string) []int {
	self := os.Getpid()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte(MarkerVar + "=" + marker)
	children := map[int][]int{}
	var roots []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		if ppid, zombie := parent(pid); ppid > 0 {
			if zombie {
				continue
			}
			children[ppid] = append(children[ppid], pid)
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, want) || bytes.HasPrefix(kv, append(append([]byte{}, want...), '/')) {
				roots = append(roots, pid)
				break
			}
		}
	}
	seen := map[int]bool{}
	var out []int
	var walk func(int)
	walk = func(pid int) {
		if seen[pid] || pid == self {
			return
		}
		seen[pid] = true
		out = append(out, pid)
		for _, c := range children[pid] {
			walk(c)
		}
	}
	for _, r := range roots {
		walk(r)
	}
	return out
}

// parent returns a process's parent and whether it is a zombie.
func parent(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// pid (comm) state ppid ...; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, false
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid, f[0] == "Z"
}

func sanitize(s string) string { return strings.NewReplacer("/", "_", "\x00", "_").Replace(s) }
