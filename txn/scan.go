package txn

import (
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
	"sync"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"golang.org/x/sys/unix"

	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/internal/gitignore"
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
	// Ignores holds each directory's own .gitignore patterns, as read by
	// this scan: later scans of a transaction judge with these.
	Ignores map[string][]gitignore.Pattern
	// Gitlinks lists the submodule directories present (never entered).
	Gitlinks map[string]bool
	// Linked lists files with more than one hard link: a write through
	// another name changes them without an event in their directory.
	Linked map[string]bool
	// Ignored holds the ignored entries of the directories scanned: files
	// with their stat, directories with Mode filemode.Dir (never entered).
	// They are outside the transaction, but a change to them is seen.
	Ignored map[string]*File
}

// scanner walks a work tree in parallel.
type scanner struct {
	root string
	fs   *fsroot.Root // the work tree, opened beneath without symlinks
	idx  []*indexInfo // the indexes whose paths count as tracked
	w    *watcher     // if set, every directory read is watched

	excludes []gitignore.Pattern
	noOrket  bool // leave .orket out (a status, not a transaction)
	workers  int  // parallel directory readers; 0: sized to the machine
	// rules, if set, are the .gitignore patterns of each directory as a
	// snapshot read them: the tree is judged by the rules from before the
	// edit, whatever .gitignore files it wrote (nil: read them).
	rules map[string][]gitignore.Pattern
}

type dirJob struct {
	rel      string              // "" for the root
	patterns []gitignore.Pattern // inherited ignore patterns
	ignored  bool                // inside an ignored directory: only tracked files count
	guarded  bool                // inside .orket: everything counts
}

// dirInfo is what scanning one directory found besides its files.
type dirInfo struct {
	ignores []gitignore.Pattern // its own .gitignore, if it has one
	gitlink bool                // a submodule: not entered
	linked  []string            // files with several hard links
	ignored map[string]*File    // its ignored entries
}

func (info *dirInfo) addIgnored(rel string, f *File) {
	if info.ignored == nil {
		info.ignored = map[string]*File{}
	}
	info.ignored[rel] = f
}

type scanResult struct {
	files map[string]*File
	dirs  []string
	err   error
}

// scan walks the tree. Files are stat'ed, not read: OIDs stay zero.
func (s *scanner) scan() (*Tree, error) {
	t := &Tree{Files: make(map[string]*File, len(s.idx[0].all)+64), Dirs: map[string]bool{}, Empty: map[string]bool{}, Start: time.Now(), jobs: map[string]dirJob{},
		Ignores: map[string][]gitignore.Pattern{}, Gitlinks: map[string]bool{}, Linked: map[string]bool{}, Ignored: map[string]*File{}}
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
			var dirs, empty, gitlinks, linked []string
			var jobs []dirJob
			ignores := map[string][]gitignore.Pattern{}
			ignoredEntries := map[string]*File{}
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
				var info dirInfo
				kind, err := s.dir(j, local, push, &info)
				if info.ignores != nil {
					ignores[j.rel] = info.ignores
				}
				if info.gitlink {
					gitlinks = append(gitlinks, j.rel)
				}
				linked = append(linked, info.linked...)
				for p, f := range info.ignored {
					ignoredEntries[p] = f
				}
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
			for d, ps := range ignores {
				t.Ignores[d] = ps
			}
			for _, d := range gitlinks {
				t.Gitlinks[d] = true
			}
			for _, p := range linked {
				t.Linked[p] = true
			}
			for p, f := range ignoredEntries {
				t.Ignored[p] = f
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
// of directory it is. It opens the directory beneath the root, never
// through a symlink, whatever the length of its path.
func (s *scanner) dir(j dirJob, out map[string]*File, push func(dirJob), info *dirInfo) (dirKind, error) {
	if j.rel != "" && !j.guarded && s.gitlink(j.rel) {
		info.gitlink = true
		return dirIgnored, nil // a submodule: its content is its own repository's
	}
	f, err := s.fs.OpenDir(j.rel)
	if err != nil {
		if os.IsNotExist(err) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, fsroot.ErrEscapes) {
			return dirIgnored, nil // removed, or no longer a directory
		}
		return dirIgnored, err
	}
	defer f.Close()
	if s.w != nil {
		s.w.add(filepath.Join(s.root, filepath.FromSlash(j.rel)), j.rel)
	}
	entries, err := f.ReadDir(-1)
	if err != nil {
		return dirIgnored, err
	}
	dirfd := int(f.Fd())
	patterns := j.patterns
	if !j.guarded {
		ps, err := s.ownRules(j.rel, dirfd, entries)
		if err != nil {
			return dirIgnored, err
		}
		if ps != nil {
			info.ignores = ps
			patterns = append(patterns[:len(patterns):len(patterns)], ps...)
		}
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
			if !child.guarded && !child.ignored && gitignore.Ignored(patterns, rel, true) {
				child.ignored = true
			}
			if child.ignored && !s.trackedDir(rel) {
				if !j.ignored {
					info.addIgnored(rel, &File{Mode: filemode.Dir})
				}
				continue
			}
			push(child)
			continue
		}
		ignoredFile := false
		if !j.guarded && !s.tracked(rel) {
			if j.ignored {
				continue
			}
			ignoredFile = gitignore.Ignored(patterns, rel, false)
		}
		var st unix.Stat_t
		if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue // removed while we looked
			}
			return dirIgnored, &os.PathError{Op: "lstat", Path: rel, Err: err}
		}
		file, ok := fileOfStat(&st)
		if !ok {
			continue // sockets, fifos, devices: git does not track them either
		}
		if ignoredFile {
			info.addIgnored(rel, file)
			continue
		}
		if st.Nlink > 1 && file.Mode != filemode.Symlink {
			info.linked = append(info.linked, rel)
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

// ownRules returns a directory's .gitignore patterns: those a snapshot
// recorded, when the scanner judges by them, or the file read now (never
// through a symlink, as git reads it).
func (s *scanner) ownRules(rel string, dirfd int, entries []os.DirEntry) ([]gitignore.Pattern, error) {
	if s.rules != nil {
		return s.rules[rel], nil
	}
	for _, e := range entries {
		if e.Name() != ".gitignore" || !e.Type().IsRegular() {
			continue
		}
		fd, err := unix.Openat(dirfd, ".gitignore", unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			if errors.Is(err, unix.ENOENT) {
				return nil, nil
			}
			return nil, &os.PathError{Op: "open", Path: path.Join(rel, ".gitignore"), Err: err}
		}
		gf := os.NewFile(uintptr(fd), ".gitignore")
		b, err := io.ReadAll(io.LimitReader(gf, maxIgnoreFile))
		gf.Close()
		if err != nil {
			return nil, err
		}
		return gitignore.ParsePatterns(b, rel), nil
	}
	return nil, nil
}

// maxIgnoreFile bounds what is read of one ignore file.
const maxIgnoreFile = 16 << 20

// gitlink reports whether the index names d as a submodule.
func (s *scanner) gitlink(d string) bool {
	for _, ii := range s.idx {
		if ii.gitlinks[d] {
			return true
		}
	}
	return false
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
		Ino: st.Ino, Perm: st.Mode & 0o7777}
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
	f := &File{Size: fi.Size(), Mtime: fi.ModTime().UnixNano(), Perm: unixPerm(fi.Mode())}
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

// readPatterns reads an ignore file outside the tree (info/exclude,
// core.excludesFile); a missing file has none.
func readPatterns(file string) ([]gitignore.Pattern, error) {
	if file == "" {
		return nil, nil
	}
	f, err := os.Open(file)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxIgnoreFile))
	if err != nil {
		return nil, err
	}
	return gitignore.ParsePatterns(b, ""), nil
}

// hashFile returns the git blob id of a path's content (a symlink's target
// for a symlink), read beneath root, streamed.
func hashFile(root *fsroot.Root, rel string, mode filemode.FileMode) (plumbing.Hash, error) {
	if mode == filemode.Symlink {
		target, err := root.Readlink(rel)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		return blobHash([]byte(target)), nil
	}
	f, err := root.Open(rel)
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
		return plumbing.ZeroHash, errChanged(rel)
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
func hashAll(root *fsroot.Root, t *Tree, paths []string) error {
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
				id, err := hashFile(root, p, f.Mode)
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

// unixPerm is a FileMode's permission, set-id and sticky bits as the
// kernel spells them (04755).
func unixPerm(m fs.FileMode) uint32 {
	p := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		p |= unix.S_ISUID
	}
	if m&fs.ModeSetgid != 0 {
		p |= unix.S_ISGID
	}
	if m&fs.ModeSticky != 0 {
		p |= unix.S_ISVTX
	}
	return p
}

// fileMode is unixPerm the other way round.
func fileMode(p uint32) fs.FileMode {
	m := fs.FileMode(p & 0o777)
	if p&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if p&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if p&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}
