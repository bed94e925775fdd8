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

// decodeIndex parses git's index file (versions 2, 3 and 4). It reads
// only the entries; extensions are left alone, except those orket cannot
// honour (a split or sparse index), which it refuses.
func decodeIndex(b []byte) ([]indexEntry, error) {
	if len(b) < 12+20 || string(b[:4]) != "DIRC" {
		return nil, errIndexFormat
	}
	body, sum := b[:len(b)-20], b[len(b)-20:]
	if !bytes.Equal(sum, make([]byte, 20)) { // index.skipHash leaves it zero
		if h := sha1.Sum(body); !bytes.Equal(h[:], sum) {
			return nil, fmt.Errorf("%w: checksum mismatch", errIndexFormat)
		}
	}
	version := binary.BigEndian.Uint32(b[4:8])
	if version < 2 || version > 4 {
		return nil, fmt.Errorf("index version %d is not supported", version)
	}
	n := int(binary.BigEndian.Uint32(b[8:12]))
	entries := make([]indexEntry, 0, n)
	off := 12
	prev := ""
	for i := 0; i < n; i++ {
		if off+62 > len(body) {
			return nil, errIndexFormat
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
				return nil, errIndexFormat
			}
			ext := be.Uint16(e[62:])
			ie.SkipWorktree = ext&0x4000 != 0
			ie.IntentToAdd = ext&0x2000 != 0
			p = 64
		}
		if version == 4 {
			strip, k := binary.Uvarint(e[p:])
			if k <= 0 || int(strip) > len(prev) {
				return nil, errIndexFormat
			}
			p += k
			end := bytes.IndexByte(e[p:], 0)
			if end < 0 {
				return nil, errIndexFormat
			}
			ie.Name = prev[:len(prev)-int(strip)] + string(e[p:p+end])
			off += p + end + 1
		} else {
			end := bytes.IndexByte(e[p:], 0)
			if end < 0 {
				return nil, errIndexFormat
			}
			ie.Name = string(e[p : p+end])
			// Entries are padded with 1 to 8 NULs to a multiple of 8.
			off += (p + end + 8) &^ 7
		}
		prev = ie.Name
		entries = append(entries, ie)
	}
	// Extensions: a signature, a length, the data.
	for off+8 <= len(body) {
		sig := string(body[off : off+4])
		size := int(binary.BigEndian.Uint32(body[off+4:]))
		switch sig {
		case "link":
			return nil, errors.New("split index (core.splitIndex) is not supported; run git update-index --no-split-index")
		case "sdir":
			return nil, errors.New("sparse index is not supported")
		}
		off += 8 + size
	}
	return entries, nil
}
