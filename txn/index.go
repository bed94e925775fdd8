package txn

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// An indexEntry is what orket needs of one entry of git's index.
type indexEntry struct {
	Name         string
	Mode         filemode.FileMode
	Hash         plumbing.Hash
	Size         uint32
	Mtime, Ctime int64 // nanoseconds
	Ino          uint32
	Stage        int
	SkipWorktree bool
	IntentToAdd  bool
}

var errIndexFormat = errors.New("malformed index")

// decodeIndex parses git's index file (versions 2, 3 and 4): its entries
// and its cache tree (the TREE extension), if any. Other extensions are
// left alone, except those orket cannot honour (a split or sparse index),
// which it refuses.
func decodeIndex(b []byte) ([]indexEntry, *cacheTree, error) {
	entries, ext, err := decodeEntries(b)
	if err != nil {
		return nil, nil, err
	}
	var ct *cacheTree
	if data, ok := ext["TREE"]; ok {
		// A cache tree orket cannot read is only a lost shortcut.
		ct, _ = parseCacheTree(data)
	}
	return entries, ct, nil
}

func decodeEntries(b []byte) ([]indexEntry, map[string][]byte, error) {
	if len(b) < 12+20 || string(b[:4]) != "DIRC" {
		return nil, nil, errIndexFormat
	}
	// Like git, the trailing checksum is not verified on every read: git
	// writes the index through a lock file and a rename, so a reader never
	// sees half of one, and hashing megabytes on every run would cost more
	// than everything else orket does with a clean index.
	body := b[:len(b)-20]
	version := binary.BigEndian.Uint32(b[4:8])
	if version < 2 || version > 4 {
		return nil, nil, fmt.Errorf("index version %d is not supported", version)
	}
	n := int(binary.BigEndian.Uint32(b[8:12]))
	if n > len(body)/62 {
		return nil, nil, errIndexFormat
	}
	entries := make([]indexEntry, n)
	// Names are substrings of the index's own bytes (versions 2 and 3),
	// which nothing writes again once read, or of one arena (version 4):
	// no allocation per entry.
	var str string
	if version < 4 {
		str = unsafe.String(&body[0], len(body))
	}
	var arena []byte
	off := 12
	prev := ""
	be := binary.BigEndian
	for i := 0; i < n; i++ {
		if off+62 > len(body) {
			return nil, nil, errIndexFormat
		}
		e := body[off:]
		ie := &entries[i]
		ie.Ctime = int64(be.Uint32(e[0:]))*1e9 + int64(be.Uint32(e[4:]))
		ie.Mtime = int64(be.Uint32(e[8:]))*1e9 + int64(be.Uint32(e[12:]))
		ie.Ino = be.Uint32(e[20:])
		ie.Mode = filemode.FileMode(be.Uint32(e[24:]))
		ie.Size = be.Uint32(e[36:])
		copy(ie.Hash[:], e[40:60])
		flags := be.Uint16(e[60:])
		ie.Stage = int(flags>>12) & 3
		p := 62
		if flags&0x4000 != 0 {
			if version < 3 || off+64 > len(body) {
				return nil, nil, errIndexFormat
			}
			ext := be.Uint16(e[62:])
			ie.SkipWorktree = ext&0x4000 != 0
			ie.IntentToAdd = ext&0x2000 != 0
			p = 64
		}
		if version == 4 {
			strip, k := binary.Uvarint(e[p:])
			if k <= 0 || int(strip) > len(prev) {
				return nil, nil, errIndexFormat
			}
			p += k
			end := bytes.IndexByte(e[p:], 0)
			if end < 0 {
				return nil, nil, errIndexFormat
			}
			keep := prev[:len(prev)-int(strip)]
			if size := len(keep) + end; size > 0 {
				if cap(arena)-len(arena) < size {
					arena = make([]byte, 0, max(64<<10, size))
				}
				start := len(arena)
				arena = append(append(arena, keep...), e[p:p+end]...)
				ie.Name = unsafe.String(&arena[start], size)
			}
			off += p + end + 1
		} else {
			end := bytes.IndexByte(e[p:], 0)
			if end < 0 {
				return nil, nil, errIndexFormat
			}
			ie.Name = str[off+p : off+p+end]
			// Entries are padded with 1 to 8 NULs to a multiple of 8.
			off += (p + end + 8) &^ 7
		}
		prev = ie.Name
	}
	// Extensions: a signature, a length, the data.
	ext := map[string][]byte{}
	for off+8 <= len(body) {
		sig := string(body[off : off+4])
		size := int(binary.BigEndian.Uint32(body[off+4:]))
		switch sig {
		case "link":
			return nil, nil, errors.New("split index (core.splitIndex) is not supported; run git update-index --no-split-index")
		case "sdir":
			return nil, nil, errors.New("sparse index is not supported")
		}
		if off+8+size <= len(body) {
			ext[sig] = body[off+8 : off+8+size]
		}
		off += 8 + size
	}
	return entries, ext, nil
}

// A cacheTree is git's cache of the tree objects an index's directories
// would be written as: where valid, a directory's tree id without
// hashing anything.
type cacheTree struct {
	name     string // the directory's name in its parent ("" for the root)
	entries  int    // index entries below it; -1: invalid
	id       plumbing.Hash
	children map[string]*cacheTree
}

// parseCacheTree reads the TREE extension: for each directory in
// pre-order, its name NUL, entry count SP subtree count LF, and the tree
// id when the count is not -1.
func parseCacheTree(b []byte) (*cacheTree, error) {
	var node func() (*cacheTree, error)
	node = func() (*cacheTree, error) {
		nul := bytes.IndexByte(b, 0)
		if nul < 0 {
			return nil, errIndexFormat
		}
		ct := &cacheTree{name: string(b[:nul])}
		b = b[nul+1:]
		lf := bytes.IndexByte(b, '\n')
		if lf < 0 {
			return nil, errIndexFormat
		}
		counts, sub, ok := strings.Cut(string(b[:lf]), " ")
		entries, err1 := strconv.Atoi(counts)
		subtrees, err2 := strconv.Atoi(sub)
		if !ok || err1 != nil || err2 != nil || subtrees < 0 {
			return nil, errIndexFormat
		}
		ct.entries = entries
		b = b[lf+1:]
		if ct.entries >= 0 {
			if len(b) < 20 {
				return nil, errIndexFormat
			}
			copy(ct.id[:], b[:20])
			b = b[20:]
		}
		for i := 0; i < subtrees; i++ {
			c, err := node()
			if err != nil {
				return nil, err
			}
			if ct.children == nil {
				ct.children = map[string]*cacheTree{}
			}
			ct.children[c.name] = c
		}
		return ct, nil
	}
	return node()
}

// indexInfo is a parsed index arranged for the scan: the entries directly
// in each directory are found with one map lookup and a binary search,
// without a map of every path.
type indexInfo struct {
	list  []indexEntry // every entry, in index order (by path, then stage)
	cache *cacheTree   // the TREE extension, if the index has one
	mtime time.Time    // when the index was written: entries as new are racy
	// byDir holds, for each directory ("" for the root), the positions in
	// list of the entries directly in it, in index order.
	byDir    map[string][]int32
	dirs     map[string]bool // every directory holding indexed paths ("" excluded)
	gitlinks map[string]bool
	files    int      // stage-0 entries that are files (not intent-to-add, not gitlinks)
	trailer  [20]byte // the index's checksum: it names its content
}

func parseIndex(b []byte, mtime time.Time) (*indexInfo, error) {
	ii := &indexInfo{byDir: map[string][]int32{}, dirs: map[string]bool{}, gitlinks: map[string]bool{}, mtime: mtime}
	if b == nil {
		return ii, nil
	}
	list, ct, err := decodeIndex(b)
	if err != nil {
		return nil, &UnsupportedError{Path: ".git/index", Reason: "cannot read the index: " + err.Error()}
	}
	ii.trailer = indexTrailer(b)
	ii.list, ii.cache = list, ct
	lastDir := "\x00" // no directory has this name
	var cur []int32
	for i := range list {
		e := &list[i]
		if e.SkipWorktree {
			return nil, &UnsupportedError{Path: ".git/index", Reason: "sparse checkout (skip-worktree entries) is not supported"}
		}
		// Entries are sorted: consecutive ones mostly share a directory,
		// and a directory's direct entries are in order, if not adjacent.
		if d := parentDir(e.Name); d != lastDir {
			if lastDir != "\x00" {
				ii.byDir[lastDir] = cur
			}
			lastDir = d
			cur = ii.byDir[d]
			for d != "" && !ii.dirs[d] {
				ii.dirs[d] = true
				d = parentDir(d)
			}
		}
		cur = append(cur, int32(i))
		if e.Mode == filemode.Submodule {
			ii.gitlinks[e.Name] = true
			continue
		}
		if e.Stage == 0 && !e.IntentToAdd {
			ii.files++
		}
	}
	if lastDir != "\x00" {
		ii.byDir[lastDir] = cur
	}
	return ii, nil
}

// lookup returns the positions in ii.list of the entries named p (one per
// stage): ii.list[lo:hi].
func (ii *indexInfo) lookup(p string) (lo, hi int) { return ii.lookupIn(ii.byDir[parentDir(p)], p) }

// lookupIn is lookup among pos, the entries of p's directory.
func (ii *indexInfo) lookupIn(pos []int32, p string) (lo, hi int) {
	i := sort.Search(len(pos), func(i int) bool { return ii.list[pos[i]].Name >= p })
	if i == len(pos) || ii.list[pos[i]].Name != p {
		return 0, 0
	}
	j := i
	for j < len(pos) && ii.list[pos[j]].Name == p {
		j++
	}
	return int(pos[i]), int(pos[j-1]) + 1
}

// entry returns the stage-0 entry of the file p (not a gitlink, not an
// intent to add), or nil.
func (ii *indexInfo) entry(p string) *indexEntry {
	lo, hi := ii.lookup(p)
	for i := lo; i < hi; i++ {
		if e := &ii.list[i]; e.isFile() {
			return e
		}
	}
	return nil
}

// isFile reports whether an entry stands for a file the tree must hold.
func (e *indexEntry) isFile() bool {
	return e.Stage == 0 && !e.IntentToAdd && e.Mode != filemode.Submodule
}

// tracked reports whether the index names p as anything but a gitlink.
func (ii *indexInfo) tracked(p string) bool {
	lo, hi := ii.lookup(p)
	return hi > lo && !ii.gitlinks[p]
}

// clean reports whether the index vouches for a file's content: the stat
// matches and the file was not modified in the same instant the index was
// written (git's racy-clean rule).
func (ii *indexInfo) clean(p string, f *File) (*indexEntry, bool) {
	e := ii.entry(p)
	return e, e != nil && ii.vouches(e, f)
}

// vouches reports whether e's content is f's: same stat, and not racy.
func (ii *indexInfo) vouches(e *indexEntry, f *File) bool {
	return statMatches(f, e) && e.Mtime < ii.mtime.UnixNano()
}

// statMatches reports whether a file looks as the index recorded it.
func statMatches(f *File, e *indexEntry) bool {
	return f.Mode == e.Mode && uint32(f.Size) == e.Size && f.Mtime == e.Mtime &&
		f.Ctime == e.Ctime && uint32(f.Ino) == e.Ino
}
