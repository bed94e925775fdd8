package txn

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"

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
	body, sum := b[:len(b)-20], b[len(b)-20:]
	if !bytes.Equal(sum, make([]byte, 20)) { // index.skipHash leaves it zero
		if h := sha1.Sum(body); !bytes.Equal(h[:], sum) {
			return nil, nil, fmt.Errorf("%w: checksum mismatch", errIndexFormat)
		}
	}
	version := binary.BigEndian.Uint32(b[4:8])
	if version < 2 || version > 4 {
		return nil, nil, fmt.Errorf("index version %d is not supported", version)
	}
	n := int(binary.BigEndian.Uint32(b[8:12]))
	entries := make([]indexEntry, 0, n)
	off := 12
	prev := ""
	for i := 0; i < n; i++ {
		if off+62 > len(body) {
			return nil, nil, errIndexFormat
		}
		e := body[off:]
		be := binary.BigEndian
		var ie indexEntry
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
			ie.Name = prev[:len(prev)-int(strip)] + string(e[p:p+end])
			off += p + end + 1
		} else {
			end := bytes.IndexByte(e[p:], 0)
			if end < 0 {
				return nil, nil, errIndexFormat
			}
			ie.Name = string(e[p : p+end])
			// Entries are padded with 1 to 8 NULs to a multiple of 8.
			off += (p + end + 8) &^ 7
		}
		prev = ie.Name
		entries = append(entries, ie)
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
		var subtrees int
		if _, err := fmt.Sscanf(string(b[:lf]), "%d %d", &ct.entries, &subtrees); err != nil {
			return nil, errIndexFormat
		}
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
