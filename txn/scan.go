package txn

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"golang.org/x/sys/unix"

	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/internal/gitignore"
	"github.com/orket/orket/internal/gitrepo"
	"github.com/orket/orket/store"
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
	// byDir lists the files directly in each directory (nil: not known,
	// see Snapshot.layout).
	byDir map[string][]string
	// untracked lists the files no index the scan judged by names.
	untracked map[string]bool
	// region, in a tree restricted to part of the work tree (see
	// regionScan), lists the directories whose content it holds.
	region map[string]bool
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

// scanner walks a work tree in parallel, the way git status does: one
// getdents pass over every directory that is part of the tree, and one
// fstatat per file it holds; nothing is read. Ignored directories are not
// entered (unless the index tracks something inside), and a file's
// content is known without reading it when the index vouches for its
// stat (see indexInfo.vouches).
type scanner struct {
	root string
	fs   *fsroot.Root // the work tree, opened beneath without symlinks
	idx  []*indexInfo // the indexes whose paths count as tracked
	w    *watcher     // if set, every directory read is watched

	excludes []gitignore.Pattern
	noOrket  bool // leave .orket out (a status, not a transaction)
	// outside lists paths that are not part of the tree at all: orket's
	// own output (see Start.Outside).
	outside map[string]bool
	workers int // parallel directory readers; 0: sized to the machine
	// rules, if set, are the .gitignore patterns of each directory as a
	// snapshot read them: the tree is judged by the rules from before the
	// edit, whatever .gitignore files it wrote (nil: read them).
	rules map[string][]gitignore.Pattern
	// vouch: set the OID of every file idx[0] vouches for, note which of
	// idx[0]'s files were found, and list the files it does not vouch for
	// (a snapshot's scan).
	vouch bool

	rootfd int // the work tree, for openat2 beneath it
	found  []bool
}

type dirJob struct {
	rel      string              // "" for the root
	patterns []gitignore.Pattern // inherited ignore patterns
	ignored  bool                // inside an ignored directory: only tracked files count
	guarded  bool                // inside .orket: everything counts
}

// dirInfo is what scanning one directory found besides its files.
type dirInfo struct {
	ignores   []gitignore.Pattern // its own .gitignore, if it has one
	gitlink   bool                // a submodule: not entered
	linked    []string            // files with several hard links
	ignored   map[string]*File    // its ignored entries
	unknown   []string            // files idx[0] does not vouch for (scanner.vouch)
	perms     []string            // files whose permission bits are not 0644 or 0755
	attrs     []string            // .gitattributes files
	untracked []string            // files no index names
}

func (info *dirInfo) addIgnored(rel string, f *File) {
	if info.ignored == nil {
		info.ignored = map[string]*File{}
	}
	info.ignored[rel] = f
}

// dirResult is one directory as a scan found it.
type dirResult struct {
	job   dirJob
	kind  dirKind
	paths []string // its files, in directory order
	files []*File  // and what they are
	info  dirInfo
}

// scan walks the tree. OIDs stay zero except where the index vouches for
// them (scanner.vouch).
func (s *scanner) scan() (*Tree, error) {
	t, _, err := s.scanVouched()
	return t, err
}

// vouched is what a scan with scanner.vouch learns besides the tree.
type vouched struct {
	unknown []string // files whose content idx[0] does not hold (or vouch for), sorted
	perms   []string // files whose permission bits are not the default
	attrs   []string // .gitattributes files
	missing []string // files idx[0] tracks that are not in the tree, sorted
}

// scanVouched is scan that also says, with scanner.vouch, what the index
// does not vouch for.
func (s *scanner) scanVouched() (*Tree, *vouched, error) {
	start := time.Now()
	if err := s.open(); err != nil {
		return nil, nil, err
	}
	defer s.close()
	if s.vouch && len(s.idx) > 0 {
		s.found = make([]bool, len(s.idx[0].list))
	}
	// Directory reads and lstats block in the kernel: more workers than
	// cores keep the cores and the disk busy (git status runs up to 20
	// threads for the same reason).
	workers := runtime.GOMAXPROCS(0) * 4
	if workers < 8 {
		workers = 8
	}
	if s.workers > 0 {
		workers = s.workers
	}
	// The queue is unbounded: workers push subdirectories without blocking.
	var (
		qmu      sync.Mutex
		cond     = sync.NewCond(&qmu)
		queue    []dirJob
		pending  int
		firstErr error
		results  [][]*dirResult
		wg       sync.WaitGroup
	)
	push := func(j dirJob) {
		qmu.Lock()
		queue = append(queue, j)
		pending++
		qmu.Unlock()
		cond.Signal()
	}
	results = make([][]*dirResult, workers)
	// The root is queued before any worker starts: a worker that finds
	// nothing pending stops.
	push(dirJob{rel: "", patterns: s.excludes})
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var sw scanWorker
			for {
				qmu.Lock()
				for len(queue) == 0 && pending > 0 {
					cond.Wait()
				}
				if pending == 0 {
					qmu.Unlock()
					cond.Broadcast()
					return
				}
				j := queue[len(queue)-1]
				queue = queue[:len(queue)-1]
				qmu.Unlock()
				res := &dirResult{job: j}
				var err error
				res.kind, err = s.dir(&sw, j, res, push)
				results[i] = append(results[i], res)
				qmu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				pending--
				done := pending == 0
				qmu.Unlock()
				if done {
					cond.Broadcast()
				}
			}
		}(i)
	}
	wg.Wait()
	if firstErr != nil {
		return nil, nil, firstErr
	}
	n, dirs, root := 0, 0, false
	for _, rs := range results {
		dirs += len(rs)
		for _, r := range rs {
			n += len(r.paths)
			root = root || r.job.rel == "" && r.kind != dirGone
		}
	}
	if !root {
		// Never an empty tree for a tree that could not be read: a
		// revert would take everything out.
		return nil, nil, &os.PathError{Op: "scan", Path: s.root, Err: errors.New("the top directory of the work tree could not be read")}
	}
	t := newTree(n, dirs)
	t.Start = start
	v := &vouched{}
	if s.found != nil {
		ii := s.idx[0]
		for i := range ii.list {
			if e := &ii.list[i]; e.IsFile() && !s.found[i] {
				v.missing = append(v.missing, e.Name)
			}
		}
	}
	for _, rs := range results {
		for _, r := range rs {
			t.add(r)
			v.unknown = append(v.unknown, r.info.unknown...)
			v.perms = append(v.perms, r.info.perms...)
			v.attrs = append(v.attrs, r.info.attrs...)
		}
	}
	sort.Strings(v.unknown)
	return t, v, nil
}

// newTree returns an empty tree sized for n files in dirs directories.
func newTree(n, dirs int) *Tree {
	return &Tree{Files: make(map[string]*File, n), Dirs: make(map[string]bool, dirs), Empty: map[string]bool{},
		jobs: make(map[string]dirJob, dirs), byDir: make(map[string][]string, dirs), untracked: map[string]bool{},
		Ignores: map[string][]gitignore.Pattern{}, Gitlinks: map[string]bool{}, Linked: map[string]bool{}, Ignored: map[string]*File{}}
}

// drop takes the paths out of the tree: they are not part of it.
func (t *Tree) drop(paths map[string]bool) {
	for p := range paths {
		delete(t.Files, p)
		delete(t.Ignored, p)
		delete(t.untracked, p)
		delete(t.Linked, p)
		if t.byDir != nil {
			d := parentDir(p)
			if l := t.byDir[d]; l != nil {
				t.byDir[d] = slices.DeleteFunc(slices.Clone(l), func(q string) bool { return q == p })
			}
		}
	}
}

// setOf returns the paths as a set (nil when there are none).
func setOf(paths []string) map[string]bool {
	if len(paths) == 0 {
		return nil
	}
	m := make(map[string]bool, len(paths))
	for _, p := range paths {
		m[p] = true
	}
	return m
}

// add records one scanned directory in the tree.
func (t *Tree) add(r *dirResult) {
	d := r.job.rel
	if r.info.ignores != nil {
		t.Ignores[d] = r.info.ignores
	}
	if r.info.gitlink {
		t.Gitlinks[d] = true
	}
	for _, p := range r.info.linked {
		t.Linked[p] = true
	}
	for _, p := range r.info.untracked {
		t.untracked[p] = true
	}
	for p, f := range r.info.ignored {
		t.Ignored[p] = f
	}
	if r.kind == dirGone {
		return
	}
	// An ignored directory holding tracked files is rescanned like any
	// other, but is not a directory of the tree.
	t.jobs[d] = r.job
	if d != "" && r.kind != dirIgnored {
		t.Dirs[d] = true
		if r.kind == dirEmpty {
			t.Empty[d] = true
		}
	}
	for i, p := range r.paths {
		t.Files[p] = r.files[i]
	}
	if len(r.paths) > 0 {
		t.byDir[d] = r.paths
	}
}

// open opens the work tree for the scan.
func (s *scanner) open() error {
	fd, err := unix.Open(s.root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: s.root, Err: err}
	}
	s.rootfd = fd
	return nil
}

func (s *scanner) close() {
	unix.Close(s.rootfd)
	s.rootfd = -1
}

var noOpenat2 struct {
	once sync.Once
	yes  bool
}

// openDir opens the directory rel of the tree beneath the root, never
// through a symlink, whatever the length of its path.
func (s *scanner) openDir(rel string) (int, error) {
	if rel == "" {
		return unix.Openat(s.rootfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
	noOpenat2.once.Do(func() {
		fd, err := unix.Openat2(s.rootfd, ".", &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC})
		noOpenat2.yes = errors.Is(err, unix.ENOSYS)
		if err == nil {
			unix.Close(fd)
		}
	})
	if !noOpenat2.yes && len(rel) < unix.PathMax {
		fd, err := unix.Openat2(s.rootfd, rel, &unix.OpenHow{
			Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		if err != nil {
			if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV) {
				err = fsroot.ErrEscapes
			}
			return -1, &os.PathError{Op: "open", Path: rel, Err: err}
		}
		return fd, nil
	}
	// Without openat2, or for a path longer than PATH_MAX: fsroot walks
	// it one directory at a time.
	f, err := s.fs.OpenDir(rel)
	if err != nil {
		return -1, err
	}
	defer f.Close()
	return unix.Dup(int(f.Fd()))
}

// A scanWorker holds one worker's buffers: paths and File records are
// carved out of large blocks, not allocated one by one.
type scanWorker struct {
	buf   []byte
	arena []byte
	slab  []File
	names []dirent
}

type dirent struct {
	name string // the entry's path in the tree (name is its last part)
	typ  uint8
}

// path returns dir/name as a string of the worker's arena.
func (sw *scanWorker) path(dir string, name []byte) string {
	size := len(name)
	if dir != "" {
		size += len(dir) + 1
	}
	if cap(sw.arena)-len(sw.arena) < size {
		sw.arena = make([]byte, 0, max(32<<10, size))
	}
	start := len(sw.arena)
	if dir != "" {
		sw.arena = append(append(sw.arena, dir...), '/')
	}
	sw.arena = append(sw.arena, name...)
	return unsafe.String(&sw.arena[start], size)
}

func (sw *scanWorker) file() *File {
	if len(sw.slab) == 0 {
		sw.slab = make([]File, 256)
	}
	f := &sw.slab[0]
	sw.slab = sw.slab[1:]
	return f
}

// readDir lists an open directory (without "." and ".."), its entries'
// paths built below dir.
func (sw *scanWorker) readDir(fd int, dir string) ([]dirent, error) {
	if sw.buf == nil {
		sw.buf = make([]byte, 32<<10)
	}
	sw.names = sw.names[:0]
	for {
		n, err := unix.Getdents(fd, sw.buf)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return nil, err
		}
		if n <= 0 {
			return sw.names, nil
		}
		for off := 0; off+19 <= n; {
			reclen := int(binary.NativeEndian.Uint16(sw.buf[off+16:]))
			if reclen == 0 || off+reclen > n {
				return nil, errors.New("getdents: malformed record")
			}
			typ := sw.buf[off+18]
			name := sw.buf[off+19 : off+reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			off += reclen
			if len(name) == 0 || name[0] == '.' && (len(name) == 1 || len(name) == 2 && name[1] == '.') {
				continue
			}
			sw.names = append(sw.names, dirent{name: sw.path(dir, name), typ: typ})
		}
	}
}

type dirKind int

const (
	dirGone    dirKind = iota // removed, no longer a directory, or a submodule: nothing of it is in the tree
	dirIgnored                // inside an ignored directory: only the tracked files in it are in the tree
	dirKept
	dirEmpty // part of the tree, with no entries at all
)

// dir scans one directory into res, queueing its subdirectories, and says
// what kind of directory it is. It opens the directory beneath the root,
// never through a symlink, whatever the length of its path.
func (s *scanner) dir(sw *scanWorker, j dirJob, res *dirResult, push func(dirJob)) (dirKind, error) {
	info := &res.info
	if j.rel != "" && !j.guarded && s.gitlink(j.rel) {
		info.gitlink = true
		return dirGone, nil // a submodule: its content is its own repository's
	}
	dirfd, err := s.openDir(j.rel)
	if err != nil {
		if os.IsNotExist(err) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, fsroot.ErrEscapes) {
			return dirGone, nil // removed, or no longer a directory
		}
		return dirGone, err
	}
	defer unix.Close(dirfd)
	if s.w != nil {
		s.w.add(s.abs(j.rel), j.rel)
	}
	entries, err := sw.readDir(dirfd, j.rel)
	if err != nil {
		return dirGone, &os.PathError{Op: "readdir", Path: j.rel, Err: err}
	}
	patterns := j.patterns
	if !j.guarded {
		ps, err := s.ownRules(j.rel, dirfd, entries)
		if err != nil {
			return dirGone, err
		}
		if ps != nil {
			info.ignores = ps
			patterns = append(patterns[:len(patterns):len(patterns)], ps...)
		}
	}
	// The entries of the indexes in this directory, found once.
	var inIdx [2][]int32
	for k, ii := range s.idx[:min(len(s.idx), 2)] {
		inIdx[k] = ii.byDir[j.rel]
	}
	for _, e := range entries {
		rel := e.name
		name := rel[len(rel)-len(baseName(rel)):]
		if j.rel == "" && name == ".git" || s.outside[rel] {
			continue
		}
		typ := e.typ
		var st unix.Stat_t
		stated := false
		if typ == unix.DT_UNKNOWN {
			// Some file systems do not say: ask.
			if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				if errors.Is(err, unix.ENOENT) {
					continue
				}
				return dirGone, &os.PathError{Op: "lstat", Path: rel, Err: err}
			}
			stated = true
			if st.Mode&unix.S_IFMT == unix.S_IFDIR {
				typ = unix.DT_DIR
			}
		}
		if typ == unix.DT_DIR {
			child := dirJob{rel: rel, patterns: patterns, ignored: j.ignored, guarded: j.guarded}
			if j.rel == "" && name == store.Dir {
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
		var vouched *indexEntry
		tracked := false
		for k, ii := range s.idx {
			var lo, hi int
			if k < len(inIdx) {
				lo, hi = ii.lookupIn(inIdx[k], rel)
			} else {
				lo, hi = ii.lookup(rel)
			}
			if hi == lo || ii.gitlinks[rel] {
				continue
			}
			tracked = true
			if k == 0 && s.found != nil {
				for i := lo; i < hi; i++ {
					if ii.list[i].IsFile() {
						vouched = &ii.list[i]
					}
				}
			}
		}
		if !tracked && !j.guarded {
			if j.ignored {
				continue
			}
			ignoredFile = gitignore.Ignored(patterns, rel, false)
		}
		if !stated {
			if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				if errors.Is(err, unix.ENOENT) {
					continue // removed while we looked
				}
				return dirGone, &os.PathError{Op: "lstat", Path: rel, Err: err}
			}
		}
		file := sw.file()
		if !statFile(&st, file) {
			continue // sockets, fifos, devices: git does not track them either
		}
		if ignoredFile {
			info.addIgnored(rel, file)
			continue
		}
		if st.Nlink > 1 && file.Mode != filemode.Symlink {
			info.linked = append(info.linked, rel)
		}
		if !tracked {
			info.untracked = append(info.untracked, rel)
		}
		if s.found != nil {
			if vouched != nil {
				s.found[s.idx[0].pos(vouched)] = true
			}
			if vouched != nil && s.idx[0].vouches(vouched, file) {
				file.OID = vouched.Hash
			} else {
				info.unknown = append(info.unknown, rel)
			}
			if file.Perm != defaultPerm(file.Mode) && file.Mode != filemode.Symlink {
				info.perms = append(info.perms, rel)
			}
			if name == ".gitattributes" {
				info.attrs = append(info.attrs, rel)
			}
		}
		res.paths = append(res.paths, rel)
		res.files = append(res.files, file)
	}
	switch {
	case j.ignored && !j.guarded:
		return dirIgnored, nil
	case len(entries) == 0:
		return dirEmpty, nil
	}
	return dirKept, nil
}

// pos returns e's position in ii.list (e must point into it).
func (ii *indexInfo) pos(e *indexEntry) int {
	return int((uintptr(unsafe.Pointer(e)) - uintptr(unsafe.Pointer(&ii.list[0]))) / unsafe.Sizeof(*e))
}

// abs returns the absolute path of a directory of the tree.
func (s *scanner) abs(rel string) string { return abs(s.root, rel) }

// abs returns the absolute path of rel below root.
func abs(root, rel string) string {
	if rel == "" {
		return root
	}
	return root + "/" + rel
}

// baseName is path.Base for the slash paths of a tree.
func baseName(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

// ownRules returns a directory's .gitignore patterns: those a snapshot
// recorded, when the scanner judges by them, or the file read now (never
// through a symlink, as git reads it).
func (s *scanner) ownRules(rel string, dirfd int, entries []dirent) ([]gitignore.Pattern, error) {
	if s.rules != nil {
		return s.rules[rel], nil
	}
	for _, e := range entries {
		if baseName(e.name) != ".gitignore" || e.typ != unix.DT_REG && e.typ != unix.DT_UNKNOWN {
			continue
		}
		fd, err := unix.Openat(dirfd, ".gitignore", unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) {
				return nil, nil // gone, or a symlink: git does not follow it either
			}
			return nil, &os.PathError{Op: "open", Path: path.Join(rel, ".gitignore"), Err: err}
		}
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			unix.Close(fd)
			return nil, nil
		}
		gf := os.NewFile(uintptr(fd), ".gitignore")
		defer gf.Close()
		return gitrepo.ReadIgnore(gf, rel)
	}
	return nil, nil
}

// gitlink reports whether the index names d as a submodule.
func (s *scanner) gitlink(d string) bool {
	for _, ii := range s.idx {
		if ii.gitlinks[d] {
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
	f := &File{}
	return f, statFile(st, f)
}

// statFile fills f from a stat and reports whether it is a file git
// tracks (a regular file or a symlink).
func statFile(st *unix.Stat_t, f *File) bool {
	*f = File{Size: st.Size, Mtime: st.Mtim.Sec*1e9 + st.Mtim.Nsec, Ctime: st.Ctim.Sec*1e9 + st.Ctim.Nsec,
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
		return false
	}
	return true
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
