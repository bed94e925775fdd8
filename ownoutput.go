package orket

// orket's own output in the work tree: orket run ... > run.log
// 2>&1, or orket run ... | tee build.log, inside the repository. The file
// grows while the edit runs, but it is orket's output, not the edit's
// write: counting it would revert a good change, blame the agent and cut
// the log back to its first lines. What is left out of the transaction
// (txn.Start.Outside), decided once before the snapshot, before the edit
// runs, so nothing the edit does can add to it:
//
//   - a regular file in the work tree that is orket's standard output or
//     standard error (the same device and inode as fd 1 or fd 2);
//   - when fd 1 or 2 is a pipe, the regular files in the work tree that
//     the processes reading that pipe (tee) hold open for writing, among
//     the process that started orket and its descendants (Linux, from
//     /proc; elsewhere only the first rule applies).
//
// Nothing else: a log another process writes (a build started beside
// orket) is a write like any other. The run says which files it left out
// (Record.OwnOutput).

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// ownOutput returns the files of the work tree root that are orket's own
// output through the streams outs (repository-relative, with slashes).
func ownOutput(root string, outs []*os.File) []string {
	if len(outs) == 0 {
		return nil
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	found := map[string]bool{}
	for _, f := range outs {
		if f == nil {
			continue
		}
		fi, err := f.Stat()
		if err != nil {
			continue
		}
		switch {
		case fi.Mode().IsRegular():
			if p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd()))); err == nil {
				if rel, ok := inTree(root, p, fi); ok {
					found[rel] = true
				}
			}
		case fi.Mode()&os.ModeNamedPipe != 0:
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				for _, rel := range pipeReadersFiles(root, st.Ino) {
					found[rel] = true
				}
			}
		}
	}
	out := make([]string, 0, len(found))
	for p := range found {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// inTree returns the path p (a file whose stat is fi) relative to root,
// when it is a file inside the work tree but not in its .git.
func inTree(root, p string, fi os.FileInfo) (string, bool) {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	rel = filepath.ToSlash(rel)
	if rel == ".git" || strings.HasPrefix(rel, ".git/") {
		return "", false
	}
	// The name still leads to the file orket writes (not a file renamed
	// or deleted since).
	if now, err := os.Lstat(p); err != nil || !os.SameFile(now, fi) {
		return "", false
	}
	return rel, true
}

// pipeReadersFiles returns the regular files in the work tree that the
// other processes holding the read end of pipe ino have open for writing.
// The readers are looked for first among the process that started orket
// and all its descendants, orket's own included (the pipeline orket is
// part of, a harness reading its output, a process substitution), then,
// when none of those reads the pipe (orket run inside a script whose
// output goes to tee, under timeout or sudo), among every process: looking
// at every process's descriptors cost a run 20 ms on a machine of 370
// processes.
func pipeReadersFiles(root string, ino uint64) []string {
	self := os.Getpid()
	want := "pipe:[" + strconv.FormatUint(ino, 10) + "]"
	pids, all := pipeCandidates(self)
	out, found := readersFiles(root, want, pids)
	if !found && !all {
		out, _ = readersFiles(root, want, allProcesses(self))
	}
	return out
}

// readersFiles returns the regular files in the work tree that those of
// pids reading the pipe want hold open for writing, and whether any of
// them reads it.
func readersFiles(root, want string, pids []int) (out []string, found bool) {
	for _, pid := range pids {
		dir := "/proc/" + strconv.Itoa(pid)
		fds, err := os.ReadDir(dir + "/fd")
		if err != nil {
			continue // another user's, or gone
		}
		// The links first: only a process that holds the pipe has its
		// files' access modes read (fdinfo costs an open and a read a
		// descriptor, and most processes hold no end of this pipe).
		holds := false
		links := make([]string, len(fds))
		for i, fd := range fds {
			if links[i], err = os.Readlink(dir + "/fd/" + fd.Name()); err == nil && links[i] == want {
				holds = true
			}
		}
		if !holds {
			continue
		}
		reads := false
		var writable []string
		for i, fd := range fds {
			link := links[i]
			if link != want && !filepath.IsAbs(link) {
				continue
			}
			acc, ok := fdAccess(dir + "/fdinfo/" + fd.Name())
			if !ok {
				continue
			}
			switch {
			case link == want && acc == syscall.O_RDONLY:
				reads = true
			case filepath.IsAbs(link) && acc != syscall.O_RDONLY:
				writable = append(writable, link)
			}
		}
		if !reads {
			continue
		}
		found = true
		for _, p := range writable {
			fi, err := os.Stat(p)
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			if rel, ok := inTree(root, p, fi); ok {
				out = append(out, rel)
			}
		}
	}
	return out, found
}

// pipeCandidates are the processes that most likely read orket's pipes:
// its parent and the parent's descendants, orket's own children among
// them; every process when the kernel does not list children
// (/proc/PID/task/TID/children), and all says so.
func pipeCandidates(self int) (pids []int, all bool) {
	if _, err := os.Stat("/proc/self/task/" + strconv.Itoa(self) + "/children"); err != nil {
		return allProcesses(self), true
	}
	parent := os.Getppid()
	seen := map[int]bool{self: true, parent: true}
	out := []int{parent}
	if kids, ok := children(self); ok {
		for _, k := range kids {
			seen[k] = true
			out = append(out, k)
		}
	}
	for i := 0; i < len(out); i++ {
		kids, ok := children(out[i])
		if !ok {
			return allProcesses(self), true
		}
		for _, k := range kids {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out, false
}

// children lists the children of process pid, from each of its threads'
// children file (a process or thread gone meanwhile has none); false
// when one cannot be read.
func children(pid int) ([]int, bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true
	}
	if err != nil {
		return nil, false
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/children")
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, false
		}
		for _, f := range strings.Fields(string(b)) {
			if k, err := strconv.Atoi(f); err == nil {
				out = append(out, k)
			}
		}
	}
	return out, true
}

// allProcesses lists every process but self.
func allProcesses(self int) []int {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, d := range procs {
		if pid, err := strconv.Atoi(d.Name()); err == nil && pid != self {
			out = append(out, pid)
		}
	}
	return out
}

// fdAccess reads the access mode (O_RDONLY, O_WRONLY, O_RDWR) of an open
// file from its /proc fdinfo.
func fdAccess(fdinfo string) (int, bool) {
	f, err := os.Open(fdinfo)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
			if err != nil {
				return 0, false
			}
			return int(flags) & syscall.O_ACCMODE, true
		}
	}
	return 0, false
}
