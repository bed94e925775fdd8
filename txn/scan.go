package txn

import (
	"bufio"
	"crypto/sha1"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"golang.org/x/sys/unix"

	"github.com/orket/orket/scope"
)

// A File is one path of the working tree as a scan saw it.
type File struct {
	Mode  filemode.FileMode // Regular, Executable or Symlink
	Perm  uint32            // permission bits (0644...), restored as they were
	Size  int64
	Mtime int64 // nanoseconds since the epoch
	Ctime int64
	Ino   uint64
	OID   plumbing.Hash // the blob id of the content; zero until known
}

// sameStat reports whether two observations of a path are
// indistinguishable without reading the file.
func (f *File) sameStat(g *File) bool {
	return f.Mode == g.Mode && f.Perm == g.Perm && uint32(f.Size) == uint32(g.Size) && f.Mtime == g.Mtime && f.Ctime == g.Ctime && uint32(f.Ino) == uint32(g.Ino)
}

// A Tree is the state of a working tree: every tracked and untracked, not
// ignored file (and everything under .orket), and every such directory.
type Tree struct {
	Files map[string]*File
	Dirs  map[string]bool   // every directory that is not ignored, "" excluded
	Empty map[string]bool   // the directories among Dirs with no entries at all
	Start time.Time         // when the scan began
	jobs  map[string]dirJob // how each directory was scanned, to rescan one alone
}

// scanner walks a work tree in parallel.
type scanner struct {
	root string
	idx  []*indexInfo // the indexes whose paths count as tracked
	w    *watcher     // if set, every directory read is watched

	excludes []gitignore.Pattern
	noOrket  bool // leave .orket out (a status, not a transaction)
	workers  int  // parallel directory readers; 0: sized to the machine
}

type dirJob struct {
	rel      string              // "" for the root
	patterns []gitignore.Pattern // inherited ignore patterns
	ignored  bool                // inside an ignored directory: only tracked files count
	guarded  bool                // inside .orket: everything counts
}

type scanResult struct {
	files map[string]*File
	dirs  []string
	err   error
}

// scan walks the tree. Files are stat'ed, not read: OIDs stay zero.
func (s *scanner) scan() (*Tree, error) {
	t := &Tree{Files: make(map[string]*File, len(s.idx[0].all)+64), Dirs: map[string]bool{}, Empty: map[string]bool{}, Start: time.Now(), jobs: map[string]dirJob{}}
	var pending sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	// Directory reads and lstats block in the kernel: more workers than
	// cores keep the cores busy.
	workers := runtime.GOMAXPROCS(0) * 4
	if workers < 8 {
		workers = 8
	}
	if s.workers > 0 {
		workers = s.workers
	}
	// The queue is unbounded: workers push subdirectories without blocking.
	var qmu sync.Mutex
	var queue []dirJob
	cond := sync.NewCond(&qmu)
	done := false
	push := func(j dirJob) {
		pending.Add(1)
		qmu.Lock()
		queue = append(queue, j)
		qmu.Unlock()
		cond.Signal()
	}
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make(map[string]*File, 256)
			var dirs, empty []string
			var jobs []dirJob
			for {
				qmu.Lock()
				for len(queue) == 0 && !done {
					cond.Wait()
				}
				if len(queue) == 0 && done {
					qmu.Unlock()
					break
				}
				j := queue[len(queue)-1]
				queue = queue[:len(queue)-1]
				qmu.Unlock()
				kind, err := s.dir(j, local, push)
				if kind != dirIgnored {
					jobs = append(jobs, j)
				}
				if kind != dirIgnored && j.rel != "" {
					dirs = append(dirs, j.rel)
					if kind == dirEmpty {
						empty = append(empty, j.rel)
					}
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
				pending.Done()
			}
			mu.Lock()
			for k, v := range local {
				t.Files[k] = v
			}
			for _, d := range dirs {
				t.Dirs[d] = true
			}
			for _, d := range empty {
				t.Empty[d] = true
			}
			for _, j := range jobs {
				t.jobs[j.rel] = j
			}
			mu.Unlock()
		}()
	}
	push(dirJob{rel: "", patterns: s.excludes})
	pending.Wait()
	qmu.Lock()
	done = true
	qmu.Unlock()
	cond.Broadcast()
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return t, nil
}

type dirKind int

const (
	dirIgnored dirKind = iota // inside an ignored directory: not part of the tree
	dirKept
	dirEmpty // part of the tree, with no entries at all
)

// dir scans one directory, queueing its subdirectories, and says what kind
// of directory it is.
func (s *scanner) dir(j dirJob, out map[string]*File, push func(dirJob)) (dirKind, error) {
	abs := filepath.Join(s.root, filepath.FromSlash(j.rel))
	f, err := os.OpenFile(abs, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		if os.IsNotExist(err) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
			return dirIgnored, nil // removed, or no longer a directory
		}
		return dirIgnored, err
	}
	defer f.Close()
	if s.w != nil {
		s.w.add(abs, j.rel)
	}
	entries, err := f.ReadDir(-1)
	if err != nil {
		return dirIgnored, err
	}
	dirfd := int(f.Fd())
	if j.rel != "" && !j.guarded {
		for _, e := range entries {
			if e.Name() == ".git" {
				return dirIgnored, nil // a nested repository or submodule: not ours to transact
			}
		}
	}
	patterns := j.patterns
	if !j.guarded {
		for _, e := range entries {
			if e.Name() == ".gitignore" && e.Type().IsRegular() {
				ps, err := readPatterns(filepath.Join(abs, ".gitignore"), splitPath(j.rel))
				if err != nil {
					return dirIgnored, err
				}
				if len(ps) > 0 {
					patterns = append(patterns[:len(patterns):len(patterns)], ps...)
				}
			}
		}
	}
	var comps []string
	if j.rel != "" {
		comps = splitPath(j.rel)
	}
	for _, e := range entries {
		name := e.Name()
		rel := name
		if j.rel != "" {
			rel = j.rel + "/" + name
		}
		if j.rel == "" && name == ".git" {
			continue
		}
		typ := e.Type()
		if typ.IsDir() {
			child := dirJob{rel: rel, patterns: patterns, ignored: j.ignored, guarded: j.guarded}
			if j.rel == "" && name == scope.OrketDir {
				if s.noOrket {
					continue
				}
				child.guarded = true
			}
			if !child.guarded && !child.ignored && ignored(patterns, append(comps, name), true) {
				child.ignored = true
			}
			if child.ignored && !s.trackedDir(rel) {
				continue
			}
			push(child)
			continue
		}
		if !j.guarded && !s.tracked(rel) {
			if j.ignored || ignored(patterns, append(comps, name), false) {
				continue
			}
		}
		var st unix.Stat_t
		if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue // removed while we looked
			}
			return dirIgnored, &os.PathError{Op: "lstat", Path: filepath.Join(abs, name), Err: err}
		}
		file, ok := fileOfStat(&st)
		if !ok {
			continue // sockets, fifos, devices: git does not track them either
		}
		out[rel] = file
	}
	switch {
	case j.ignored && !j.guarded:
		return dirIgnored, nil
	case len(entries) == 0:
		return dirEmpty, nil
	}
	return dirKept, nil
}

func (s *scanner) tracked(p string) bool {
	for _, ii := range s.idx {
		if ii.all[p] && !ii.gitlinks[p] {
			return true
		}
	}
	return false
}

func (s *scanner) trackedDir(d string) bool {
	for _, ii := range s.idx {
		if ii.dirs[d] {
			return true
		}
	}
	return false
}

func fileOfStat(st *unix.Stat_t) (*File, bool) {
	f := &File{Size: st.Size, Mtime: st.Mtim.Sec*1e9 + st.Mtim.Nsec, Ctime: st.Ctim.Sec*1e9 + st.Ctim.Nsec,
		Ino: st.Ino, Perm: st.Mode & 0o777}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		f.Mode = filemode.Regular
		if st.Mode&0o100 != 0 {
			f.Mode = filemode.Executable
		}
	case unix.S_IFLNK:
		f.Mode = filemode.Symlink
	default:
		return nil, false
	}
	return f, true
}

func fileOf(fi fs.FileInfo) (*File, bool) {
	st, _ := fi.Sys().(*syscall.Stat_t)
	f := &File{Size: fi.Size(), Mtime: fi.ModTime().UnixNano(), Perm: uint32(fi.Mode().Perm())}
	if st != nil {
		f.Ctime = st.Ctim.Sec*1e9 + st.Ctim.Nsec
		f.Ino = st.Ino
	}
	switch m := fi.Mode(); {
	case m.IsRegular():
		f.Mode = filemode.Regular
		if m&0o100 != 0 {
			f.Mode = filemode.Executable
		}
	case m&fs.ModeSymlink != 0:
		f.Mode = filemode.Symlink
	default:
		return nil, false
	}
	return f, true
}

func ignored(ps []gitignore.Pattern, comps []string, isDir bool) bool {
	for i := len(ps) - 1; i >= 0; i-- {
		switch ps[i].Match(comps, isDir) {
		case gitignore.Exclude:
			return true
		case gitignore.Include:
			return false
		}
	}
	return false
}

func splitPath(rel string) []string {
	if rel == "" {
		return nil
	}
	return strings.Split(rel, "/")
}

// readPatterns reads a gitignore-style file; a missing file has none.
func readPatterns(file string, domain []string) ([]gitignore.Pattern, error) {
	f, err := os.Open(file)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps, sc.Err()
}

// hashFile returns the git blob id of a path's content (a symlink's target
// for a symlink).
func hashFile(abs string, mode filemode.FileMode) (plumbing.Hash, error) {
	if mode == filemode.Symlink {
		target, err := os.Readlink(abs)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		return blobHash([]byte(target)), nil
	}
	f, err := os.Open(abs)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	h := sha1.New()
	h.Write([]byte("blob " + strconv.FormatInt(fi.Size(), 10) + "\x00"))
	n, err := io.Copy(h, f)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if n != fi.Size() {
		return plumbing.ZeroHash, errChanged(abs)
	}
	var id plumbing.Hash
	copy(id[:], h.Sum(nil))
	return id, nil
}

type errChanged string

func (e errChanged) Error() string { return string(e) + ": changed while being read" }

func blobHash(b []byte) plumbing.Hash {
	h := sha1.New()
	h.Write([]byte("blob " + strconv.Itoa(len(b)) + "\x00"))
	h.Write(b)
	var id plumbing.Hash
	copy(id[:], h.Sum(nil))
	return id
}

// hashAll fills in the OID of the named files in parallel.
func hashAll(root string, t *Tree, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	var gone []string
	ch := make(chan string)
	n := runtime.GOMAXPROCS(0)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range ch {
				f := t.Files[p]
				id, err := hashFile(filepath.Join(root, filepath.FromSlash(p)), f.Mode)
				if errors.Is(err, fs.ErrNotExist) {
					// Removed since the scan saw it: it is absent now.
					mu.Lock()
					gone = append(gone, p)
					mu.Unlock()
					continue
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					continue
				}
				f.OID = id
			}
		}()
	}
	for _, p := range paths {
		ch <- p
	}
	close(ch)
	wg.Wait()
	for _, p := range gone {
		delete(t.Files, p)
	}
	return firstErr
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// parentDirs returns every proper ancestor directory of a slash path.
func parentDirs(p string) []string {
	var out []string
	for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
		out = append(out, d)
	}
	return out
}
