package gitrepo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Reading git's index is on the path of every orket run, on trees of a
// million files: it is decoded in place, without an allocation per entry
// (go-git's decoder allocates one, and checks the trailing checksum on
// every read). The format is git's: Documentation/gitformat-index.txt.

// An IndexEntry is what orket needs of one entry of git's index.
type IndexEntry struct {
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

// IsFile reports whether an entry stands for a file the work tree must
// hold: stage 0, not an intent to add, not a submodule, not outside a
// sparse checkout (skip-worktree: git neither writes nor expects it).
func (e *IndexEntry) IsFile() bool {
	return e.Stage == 0 && !e.IntentToAdd && !e.SkipWorktree && e.Mode != filemode.Submodule
}

// ErrIndexFormat reports an index that does not parse.
var ErrIndexFormat = errors.New("malformed index")

// ReadIndex reads and decodes the index of the git directory gitDir (see
// DecodeIndex); no entries when there is no index yet.
func ReadIndex(gitDir string) ([]IndexEntry, error) {
	b, err := os.ReadFile(filepath.Join(gitDir, "index"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	entries, _, err := DecodeIndex(b)
	return entries, err
}

// DecodeIndex parses git's index file (versions 2, 3 and 4): its entries
// and its cache tree (the TREE extension), if any. Other extensions are
// left alone, except those orket cannot honour (a split or sparse index),
// which it refuses. Entries' names point into b (versions 2 and 3), which
// the caller must not write again.
func DecodeIndex(b []byte) ([]IndexEntry, *CacheTree, error) {
	entries, ext, err := decodeEntries(b)
	if err != nil {
		return nil, nil, err
	}
	var ct *CacheTree
	if data, ok := ext["TREE"]; ok {
		// A cache tree orket cannot read is only a lost shortcut.
		ct, _ = parseCacheTree(data)
	}
	return entries, ct, nil
}

// IndexTrailer returns the checksum git ends the index with: it names the
// index's content.
func IndexTrailer(b []byte) (t [20]byte) {
	if len(b) >= 20 {
		copy(t[:], b[len(b)-20:])
	}
	return t
}

// indexReader walks the entries of an index's body.
type indexReader struct {
	body    []byte
	str     string // body as a string (versions 2 and 3): names are substrings of it
	version uint32
	off     int
	prev    string // the previous entry's name (version 4 names are relative to it)
	arena   []byte // version 4 names, carved out of large blocks
}

func decodeEntries(b []byte) ([]IndexEntry, map[string][]byte, error) {
	if len(b) < 12+20 || string(b[:4]) != "DIRC" {
		return nil, nil, ErrIndexFormat
	}
	// Like git, the trailing checksum is not verified on every read: git
	// writes the index through a lock file and a rename, so a reader never
	// sees half of one, and hashing megabytes on every run would cost more
	// than everything else orket does with a clean index.
	r := &indexReader{body: b[:len(b)-20], version: binary.BigEndian.Uint32(b[4:8]), off: 12}
	if r.version < 2 || r.version > 4 {
		return nil, nil, fmt.Errorf("index version %d is not supported", r.version)
	}
	n := int(binary.BigEndian.Uint32(b[8:12]))
	if n > len(r.body)/62 {
		return nil, nil, ErrIndexFormat
	}
	entries := make([]IndexEntry, n)
	// Names are substrings of the index's own bytes (versions 2 and 3),
	// which nothing writes again once read, or of one arena (version 4):
	// no allocation per entry.
	if r.version < 4 {
		r.str = unsafe.String(&r.body[0], len(r.body))
	}
	for i := range entries {
		if err := r.entry(&entries[i]); err != nil {
			return nil, nil, err
		}
	}
	ext, err := r.extensions()
	return entries, ext, err
}

// entry decodes the entry at r.off into ie and moves past it.
func (r *indexReader) entry(ie *IndexEntry) error {
	if r.off+62 > len(r.body) {
		return ErrIndexFormat
	}
	e := r.body[r.off:]
	be := binary.BigEndian
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
		if r.version < 3 || r.off+64 > len(r.body) {
			return ErrIndexFormat
		}
		ext := be.Uint16(e[62:])
		ie.SkipWorktree = ext&0x4000 != 0
		ie.IntentToAdd = ext&0x2000 != 0
		p = 64
	}
	var err error
	if r.version == 4 {
		err = r.prefixedName(ie, e, p)
	} else {
		err = r.paddedName(ie, e, p)
	}
	r.prev = ie.Name
	return err
}

// paddedName reads a version 2 or 3 name, at p in the entry e: NUL
// terminated, the entry padded with 1 to 8 NULs to a multiple of 8.
func (r *indexReader) paddedName(ie *IndexEntry, e []byte, p int) error {
	end := bytes.IndexByte(e[p:], 0)
	if end < 0 {
		return ErrIndexFormat
	}
	ie.Name = r.str[r.off+p : r.off+p+end]
	r.off += (p + end + 8) &^ 7
	return nil
}

// prefixedName reads a version 4 name, at p in the entry e: how many
// bytes to strip from the end of the previous name, then what follows,
// NUL terminated.
func (r *indexReader) prefixedName(ie *IndexEntry, e []byte, p int) error {
	strip, k := binary.Uvarint(e[p:])
	if k <= 0 || int(strip) > len(r.prev) {
		return ErrIndexFormat
	}
	p += k
	end := bytes.IndexByte(e[p:], 0)
	if end < 0 {
		return ErrIndexFormat
	}
	keep := r.prev[:len(r.prev)-int(strip)]
	if size := len(keep) + end; size > 0 {
		if cap(r.arena)-len(r.arena) < size {
			r.arena = make([]byte, 0, max(64<<10, size))
		}
		start := len(r.arena)
		r.arena = append(append(r.arena, keep...), e[p:p+end]...)
		ie.Name = unsafe.String(&r.arena[start], size)
	}
	r.off += p + end + 1
	return nil
}

// extensions reads the extensions after the entries: a signature, a
// length, the data.
func (r *indexReader) extensions() (map[string][]byte, error) {
	ext := map[string][]byte{}
	body := r.body
	for off := r.off; off+8 <= len(body); {
		sig := string(body[off : off+4])
		size := int(binary.BigEndian.Uint32(body[off+4:]))
		switch sig {
		case "link":
			return nil, errors.New("a split index is not supported; run git config core.splitIndex false && git update-index --no-split-index")
		case "sdir":
			return nil, errors.New("a sparse index (index.sparse=true) is not supported; run git sparse-checkout init --no-sparse-index (a sparse checkout with a full index is)")
		}
		if off+8+size <= len(body) {
			ext[sig] = body[off+8 : off+8+size]
		}
		off += 8 + size
	}
	return ext, nil
}

// A CacheTree is git's cache of the tree objects an index's directories
// would be written as: where valid, a directory's tree id without
// hashing anything.
type CacheTree struct {
	Name     string // the directory's name in its parent ("" for the root)
	Entries  int    // index entries below it; -1: invalid
	ID       plumbing.Hash
	Children map[string]*CacheTree
}

// parseCacheTree reads the TREE extension: for each directory in
// pre-order, its name NUL, entry count SP subtree count LF, and the tree
// id when the count is not -1.
func parseCacheTree(b []byte) (*CacheTree, error) {
	var node func() (*CacheTree, error)
	node = func() (*CacheTree, error) {
		nul := bytes.IndexByte(b, 0)
		if nul < 0 {
			return nil, ErrIndexFormat
		}
		ct := &CacheTree{Name: string(b[:nul])}
		b = b[nul+1:]
		lf := bytes.IndexByte(b, '\n')
		if lf < 0 {
			return nil, ErrIndexFormat
		}
		counts, sub, ok := strings.Cut(string(b[:lf]), " ")
		entries, err1 := strconv.Atoi(counts)
		subtrees, err2 := strconv.Atoi(sub)
		if !ok || err1 != nil || err2 != nil || subtrees < 0 {
			return nil, ErrIndexFormat
		}
		ct.Entries = entries
		b = b[lf+1:]
		if ct.Entries >= 0 {
			if len(b) < 20 {
				return nil, ErrIndexFormat
			}
			copy(ct.ID[:], b[:20])
			b = b[20:]
		}
		for i := 0; i < subtrees; i++ {
			c, err := node()
			if err != nil {
				return nil, err
			}
			if ct.Children == nil {
				ct.Children = map[string]*CacheTree{}
			}
			ct.Children[c.Name] = c
		}
		return ct, nil
	}
	return node()
}
