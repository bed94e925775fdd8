package txn

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// Reading one packed object through go-git loads the pack's whole index
// first and maps every object's offset to its id (30 ms for a pack of
// 100,000 objects), for a run that reads a handful of blobs: the files
// the change modified, for the saved patch and the revert. So orket reads
// them itself, and only what one object needs: its id's bucket of the
// index (see inPackIndex), its offset, and its entries in the pack (the
// object, or a chain of deltas down to one). What it does not read (a
// version 1 index, alternates, objects over maxPackedObject, a SHA-256
// store, anything that does not check out) is left to go-git.
//
// The formats are git's: Documentation/gitformat-pack.txt.

const (
	// maxPackedObject bounds what orket reads into memory: larger
	// objects, and deltas that would make them, are go-git's.
	maxPackedObject = 64 << 20
	// maxDeltaChain bounds a chain of deltas (git makes at most 4095).
	maxDeltaChain = 4096
	// maxChainBytes bounds what reading one object inflates in all.
	maxChainBytes = 1 << 30
)

// Pack entry types (the numbering is plumbing.ObjectType's too).
const (
	packCommit   = 1
	packTree     = 2
	packBlob     = 3
	packTag      = 4
	packOfsDelta = 6
	packRefDelta = 7
)

var errPack = errors.New("pack")

func packErr(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errPack}, a...)...)
}

// A packFile is one pack of the store: its index (version 2), opened, and
// the pack itself, opened when an object is read from it.
type packFile struct {
	path    string // the .idx
	idx     *os.File
	idxSize int64
	n       int64 // objects
	large   int64 // entries of the 64-bit offset table
	fan     [256]uint32

	data    *os.File
	dataEnd int64 // where the entries end (the pack's checksum begins)
}

const (
	idxHeader = 8 + 256*4
	idxTrail  = 2 * 20
)

// openPackIndex opens a version 2 pack index with SHA-1 ids: its size must
// be that of its tables, which a SHA-256 index's is not.
func openPackIndex(path string) (*packFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	p := &packFile{path: path, idx: f}
	fail := func(err error) (*packFile, error) {
		f.Close()
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	p.idxSize = fi.Size()
	var head [idxHeader]byte
	if _, err := f.ReadAt(head[:], 0); err != nil {
		return fail(err)
	}
	if string(head[:4]) != "\377tOc" || binary.BigEndian.Uint32(head[4:8]) != 2 {
		return fail(packErr("%s: not a version 2 index", path))
	}
	for i := range p.fan {
		p.fan[i] = binary.BigEndian.Uint32(head[8+4*i:])
		if i > 0 && p.fan[i] < p.fan[i-1] {
			return fail(packErr("%s: fan-out table not sorted", path))
		}
	}
	p.n = int64(p.fan[255])
	rest := p.idxSize - idxHeader - p.n*(20+4+4) - idxTrail
	// As git: the first object (at offset 12) needs no 64-bit offset.
	if rest < 0 || rest%8 != 0 || rest/8 > max(p.n-1, 0) {
		return fail(packErr("%s: %d bytes for %d objects", path, p.idxSize, p.n))
	}
	p.large = rest / 8
	return p, nil
}

func (p *packFile) close() {
	p.idx.Close()
	if p.data != nil {
		p.data.Close()
	}
}

// find returns id's position in the index.
func (p *packFile) find(id plumbing.Hash) (pos int64, found bool, err error) {
	lo, hi := int64(0), int64(p.fan[id[0]])
	if id[0] > 0 {
		lo = int64(p.fan[id[0]-1])
	}
	if hi <= lo {
		return 0, false, nil
	}
	bucket := make([]byte, (hi-lo)*20)
	if _, err := p.idx.ReadAt(bucket, idxHeader+lo*20); err != nil {
		return 0, false, err
	}
	n := int(hi - lo)
	i := sort.Search(n, func(i int) bool { return bytes.Compare(bucket[i*20:i*20+20], id[:]) >= 0 })
	if i < n && bytes.Equal(bucket[i*20:i*20+20], id[:]) {
		return lo + int64(i), true, nil
	}
	return 0, false, nil
}

// offset returns where the object at pos of the index begins in the pack:
// its entry of the 32-bit offset table, or, when that entry's high bit is
// set, the entry of the 64-bit table it names.
func (p *packFile) offset(pos int64) (int64, error) {
	if pos < 0 || pos >= p.n {
		return 0, packErr("%s: position %d of %d", p.path, pos, p.n)
	}
	var b [8]byte
	if _, err := p.idx.ReadAt(b[:4], idxHeader+p.n*24+pos*4); err != nil {
		return 0, err
	}
	return p.largeOffset(binary.BigEndian.Uint32(b[:4]))
}

func (p *packFile) largeOffset(v uint32) (int64, error) {
	if v&0x80000000 == 0 {
		return int64(v), nil
	}
	j := int64(v & 0x7fffffff)
	if j >= p.large {
		return 0, packErr("%s: large offset %d of %d", p.path, j, p.large)
	}
	var b [8]byte
	if _, err := p.idx.ReadAt(b[:], idxHeader+p.n*28+j*8); err != nil {
		return 0, err
	}
	off := binary.BigEndian.Uint64(b[:])
	if off > 1<<62 {
		return 0, packErr("%s: offset %d", p.path, off)
	}
	return int64(off), nil
}

// openData opens the pack the index describes: a version 2 or 3 pack of
// as many objects.
func (p *packFile) openData() error {
	if p.data != nil {
		return nil
	}
	f, err := os.Open(strings.TrimSuffix(p.path, ".idx") + ".pack")
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	var head [12]byte
	if _, err := f.ReadAt(head[:], 0); err != nil {
		f.Close()
		return err
	}
	v := binary.BigEndian.Uint32(head[4:8])
	if string(head[:4]) != "PACK" || (v != 2 && v != 3) || int64(binary.BigEndian.Uint32(head[8:])) != p.n || fi.Size() < 12+20 {
		f.Close()
		return packErr("%s: not the pack its index describes", f.Name())
	}
	p.data, p.dataEnd = f, fi.Size()-20
	return nil
}

// A packEntry is an entry's header: its type and inflated size (a
// delta's own size, for a delta), where its zlib stream begins, and its
// base for a delta.
type packEntry struct {
	off, data int64
	typ       byte
	size      int64
	base      int64         // packOfsDelta: the base's offset
	baseID    plumbing.Hash // packRefDelta: the base's id
}

// parseEntry reads the header of the entry at off from b, the pack's bytes
// from there on (at most 32 are needed).
func parseEntry(b []byte, off int64) (packEntry, error) {
	e := packEntry{off: off}
	if len(b) == 0 {
		return e, packErr("entry at %d: truncated", off)
	}
	c := b[0]
	e.typ = (c >> 4) & 7
	size := uint64(c & 15)
	i, shift := 1, 4
	for c&0x80 != 0 {
		if i >= len(b) || shift > 53 {
			return e, packErr("entry at %d: bad size", off)
		}
		c = b[i]
		i++
		size |= uint64(c&0x7f) << shift
		shift += 7
	}
	e.size = int64(size)
	switch e.typ {
	case packCommit, packTree, packBlob, packTag:
	case packOfsDelta:
		// The distance back to the base, in git's offset encoding: each
		// further byte adds one before shifting.
		if i >= len(b) {
			return e, packErr("entry at %d: truncated", off)
		}
		c = b[i]
		i++
		rel := uint64(c & 0x7f)
		for c&0x80 != 0 {
			if i >= len(b) || rel >= 1<<55 {
				return e, packErr("entry at %d: bad base offset", off)
			}
			c = b[i]
			i++
			rel = (rel+1)<<7 | uint64(c&0x7f)
		}
		if rel == 0 || rel > uint64(off) {
			return e, packErr("entry at %d: base %d back", off, rel)
		}
		e.base = off - int64(rel)
	case packRefDelta:
		if i+20 > len(b) {
			return e, packErr("entry at %d: truncated", off)
		}
		copy(e.baseID[:], b[i:i+20])
		i += 20
	default:
		return e, packErr("entry at %d: type %d", off, e.typ)
	}
	e.data = off + int64(i)
	return e, nil
}

func (p *packFile) entry(off int64) (packEntry, error) {
	if off < 12 || off >= p.dataEnd {
		return packEntry{}, packErr("%s: offset %d outside the pack", p.path, off)
	}
	var b [32]byte
	n := int(min(int64(len(b)), p.dataEnd-off))
	if _, err := p.data.ReadAt(b[:n], off); err != nil {
		return packEntry{}, err
	}
	return parseEntry(b[:n], off)
}

// chain returns the entries that make the object at off: deltas, the
// object's own first, down to the undeltified base, last.
func (p *packFile) chain(off int64) ([]packEntry, error) {
	if err := p.openData(); err != nil {
		return nil, err
	}
	var chain []packEntry
	for {
		if len(chain) > maxDeltaChain {
			return nil, packErr("%s: a chain of more than %d deltas", p.path, maxDeltaChain)
		}
		e, err := p.entry(off)
		if err != nil {
			return nil, err
		}
		chain = append(chain, e)
		switch e.typ {
		case packOfsDelta:
			off = e.base
		case packRefDelta:
			// A pack on disk holds its deltas' bases (git index-pack
			// --fix-thin completes thin packs).
			pos, found, err := p.find(e.baseID)
			if err != nil {
				return nil, err
			}
			if !found {
				return nil, packErr("%s: base %s not in the pack", p.path, e.baseID)
			}
			if off, err = p.offset(pos); err != nil {
				return nil, err
			}
		default:
			return chain, nil
		}
	}
}

// inflate returns the size bytes of the zlib stream at start; a stream of
// another length, or whose checksum fails, is an error.
func (p *packFile) inflate(zr *io.ReadCloser, start, size int64) ([]byte, error) {
	rd := io.NewSectionReader(p.data, start, p.dataEnd-start)
	var err error
	if *zr == nil {
		*zr, err = zlib.NewReader(rd)
	} else {
		err = (*zr).(zlib.Resetter).Reset(rd, nil)
	}
	if err != nil {
		return nil, err
	}
	out := make([]byte, size)
	if _, err := io.ReadFull(*zr, out); err != nil {
		return nil, packErr("%s: entry at %d: %v", p.path, start, err)
	}
	// Reading on to the stream's end checks its checksum.
	if extra, err := io.ReadAll(io.LimitReader(*zr, 1)); err != nil || len(extra) > 0 {
		return nil, packErr("%s: entry at %d: not %d bytes (%v)", p.path, start, size, err)
	}
	return out, nil
}

// deltaSizes returns the sizes a delta names: of its base and of what it
// makes (read from the delta's first bytes alone).
func (p *packFile) deltaSizes(e packEntry) (src, dst uint64, err error) {
	rd := io.NewSectionReader(p.data, e.data, p.dataEnd-e.data)
	zr, err := zlib.NewReader(rd)
	if err != nil {
		return 0, 0, err
	}
	defer zr.Close()
	b := make([]byte, min(e.size, 20))
	if _, err := io.ReadFull(zr, b); err != nil {
		return 0, 0, packErr("%s: delta at %d: %v", p.path, e.off, err)
	}
	src, i, err := deltaVarint(b, 0)
	if err != nil {
		return 0, 0, err
	}
	dst, _, err = deltaVarint(b, i)
	return src, dst, err
}

// object reads the object at off: its type and content.
func (p *packFile) object(off int64) (byte, []byte, error) {
	chain, err := p.chain(off)
	if err != nil {
		return 0, nil, err
	}
	base := chain[len(chain)-1]
	if base.size > maxPackedObject {
		return 0, nil, packErr("%s: entry at %d: %d bytes", p.path, base.off, base.size)
	}
	var zr io.ReadCloser
	defer func() {
		if zr != nil {
			zr.Close()
		}
	}()
	data, err := p.inflate(&zr, base.data, base.size)
	if err != nil {
		return 0, nil, err
	}
	budget := int64(maxChainBytes) - base.size
	for i := len(chain) - 2; i >= 0; i-- {
		d := chain[i]
		// A delta is at most its result (at most maxPackedObject) and an
		// instruction byte per 127 bytes inserted, plus its header.
		if d.size > maxPackedObject+maxPackedObject/64+32 || d.size > budget {
			return 0, nil, packErr("%s: delta at %d: %d bytes", p.path, d.off, d.size)
		}
		budget -= d.size
		delta, err := p.inflate(&zr, d.data, d.size)
		if err != nil {
			return 0, nil, err
		}
		if data, err = applyDelta(data, delta, int(min(maxPackedObject, budget))); err != nil {
			return 0, nil, fmt.Errorf("%s: delta at %d: %w", p.path, d.off, err)
		}
		budget -= int64(len(data))
	}
	return base.typ, data, nil
}

// info returns the type and size of the object at off without inflating
// more than a delta's first bytes.
func (p *packFile) info(off int64) (byte, int64, error) {
	chain, err := p.chain(off)
	if err != nil {
		return 0, 0, err
	}
	typ := chain[len(chain)-1].typ
	if len(chain) == 1 {
		return typ, chain[0].size, nil
	}
	_, dst, err := p.deltaSizes(chain[0])
	if err != nil {
		return 0, 0, err
	}
	if dst > 1<<62 {
		return 0, 0, packErr("%s: delta at %d: %d bytes", p.path, chain[0].off, dst)
	}
	return typ, int64(dst), nil
}

func deltaVarint(b []byte, i int) (uint64, int, error) {
	var v uint64
	for shift := 0; ; shift += 7 {
		if i >= len(b) || shift > 63 {
			return 0, i, packErr("delta: bad size")
		}
		c := b[i]
		i++
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, i, nil
		}
	}
}

// applyDelta makes an object from its base and a delta in git's format
// (go-git's PatchDelta, which checks every instruction's bounds), once
// the size the delta promises is known to be at most limit bytes.
func applyDelta(base, delta []byte, limit int) ([]byte, error) {
	_, i, err := deltaVarint(delta, 0)
	if err != nil {
		return nil, err
	}
	size, _, err := deltaVarint(delta, i)
	if err != nil {
		return nil, err
	}
	if size > uint64(limit) {
		return nil, packErr("delta: makes %d bytes", size)
	}
	out, err := packfile.PatchDelta(base, delta)
	if err != nil {
		return nil, packErr("delta: %v", err)
	}
	return out, nil
}

// hashObject is the id of an object of type typ and content b (with the
// standard library's SHA-1, as blobHash: go-git's hasher detects
// collisions, at a higher cost).
func hashObject(typ byte, b []byte) plumbing.Hash {
	h := sha1.New()
	h.Write([]byte(plumbing.ObjectType(typ).String() + " " + strconv.Itoa(len(b)) + "\x00"))
	h.Write(b)
	var id plumbing.Hash
	copy(id[:], h.Sum(nil))
	return id
}

// inStorePacks calls f with the pack that holds id and its offset there;
// false when orket cannot say (alternates, an index it does not read, an
// error) or no pack holds id.
func (r *Repo) inStorePacks(id plumbing.Hash, f func(p *packFile, off int64) error) bool {
	idx, ok := packIndexFiles(r.objectsDir())
	if !ok {
		return false
	}
	for _, path := range idx {
		p, err := openPackIndex(path)
		if err != nil {
			return false
		}
		pos, found, err := p.find(id)
		if err == nil && found {
			var off int64
			if off, err = p.offset(pos); err == nil {
				err = f(p, off)
			}
		}
		p.close()
		if err != nil {
			return false
		}
		if found {
			return true
		}
	}
	return false
}

func (r *Repo) objectsDir() string { return filepath.Join(r.CommonDir, "objects") }

// packedObject reads object id from the store's packs, and checks that its
// content is what id names; ok is false when orket cannot (go-git's
// turn then).
func (r *Repo) packedObject(id plumbing.Hash) (typ plumbing.ObjectType, b []byte, ok bool) {
	ok = r.inStorePacks(id, func(p *packFile, off int64) error {
		t, data, err := p.object(off)
		if err != nil {
			return err
		}
		if hashObject(t, data) != id {
			return packErr("%s: object at %d is not %s", p.path, off, id)
		}
		typ, b = plumbing.ObjectType(t), data
		return nil
	})
	return typ, b, ok
}

// packedInfo returns the type and size of object id, from the store's
// packs, as its entries say (its content unread).
func (r *Repo) packedInfo(id plumbing.Hash) (typ plumbing.ObjectType, size int64, ok bool) {
	ok = r.inStorePacks(id, func(p *packFile, off int64) error {
		t, n, err := p.info(off)
		typ, size = plumbing.ObjectType(t), n
		return err
	})
	return typ, size, ok
}

// packedBlob reads blob id from the store's packs (see packedObject).
func (r *Repo) packedBlob(id plumbing.Hash) ([]byte, bool) {
	typ, b, ok := r.packedObject(id)
	return b, ok && typ == plumbing.BlobObject
}
