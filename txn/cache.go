package txn

import (
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"golang.org/x/sys/unix"

	"github.com/orket/orket/internal/gitignore"
)

// The scan cache is what the last snapshot learned about the tree, kept
// beside the journal (.git/orket/scan-cache) so that the next snapshot
// need not learn it again:
//
//   - always, the blob ids of the files the index did not vouch for
//     (untracked and modified files, .orket): a file whose stat is as it
//     was, and was already old when it was read, is not read again, as
//     git trusts the index;
//   - with an fsmonitor hook (see fsmonitor.go), the whole tree and the
//     hook's token at the time of the scan: the next snapshot asks the
//     hook what changed since and rescans only there.
//
// It is a cache: written atomically but not synced, checked by a hash
// when read, ignored when it does not match (another version, another
// set of ignore rules, another hook); losing it costs one whole scan.
// A transaction notices an edit that rewrites it (see Snapshot.cacheStat)
// and drops it.
type treeCache struct {
	hook     string // the fsmonitor hook whose token this is ("": none)
	token    string // the hook's token from just before the scan
	start    int64  // when the scan began (ns): stats from later are racy
	excludes [20]byte
	full     bool // tree is the whole tree (else: only unvouched files)
	tree     *Tree
	index    [20]byte     // the trailer of the index the tree was scanned with
	missing  []string     // with a whole tree: the files that index tracks that were absent
	vouched  *vouched     // with a whole tree: what that index did not vouch for
	stat     *unix.Stat_t // the cache file's, as read
}

const cacheMagic = "orket scan cache 3\n"

func (r *Repo) cachePath() string { return filepath.Join(r.GitDir, "orket", "scan-cache") }

// excludesDigest identifies a list of repository-wide ignore patterns.
func excludesDigest(ps []gitignore.Pattern) [20]byte {
	h := sha1.New()
	for _, p := range ps {
		h.Write([]byte(p.Base()))
		h.Write([]byte{0})
		h.Write([]byte(p.String()))
		h.Write([]byte{'\n'})
	}
	var d [20]byte
	copy(d[:], h.Sum(nil))
	return d
}

// Flags of a file record.
const (
	cacheLinked = 1 << iota
	cacheUntracked
)

// Flags of a directory record.
const (
	cacheDir     = 1 << iota // a directory of the tree (in Dirs)
	cacheEmpty               // an empty one
	cacheJob                 // scanned (ignored directories holding tracked files too)
	cacheIgnored             // inside an ignored directory
	cacheGuarded             // inside .orket
)

// encode writes the cache.
func (c *treeCache) encode() []byte {
	b := make([]byte, 0, 64+len(c.tree.Files)*64)
	b = c.appendHeader(b)
	// Directories first (with a whole tree): a snapshot reads them before
	// the rest, to watch them while it asks the hook.
	b = c.appendDirs(b)
	b = c.appendFiles(b)
	if c.full {
		b = c.appendWhole(b)
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli()))
}

// appendHeader appends the magic, the flags and what the cache is valid
// for: the hook and its token, the scan's start, the ignore rules and the
// index.
func (c *treeCache) appendHeader(b []byte) []byte {
	b = append(b, cacheMagic...)
	flags := byte(0)
	if c.full {
		flags = 1
	}
	b = append(b, flags)
	b = appendString(b, c.hook)
	b = appendString(b, c.token)
	b = binary.AppendVarint(b, c.start)
	b = append(b, c.excludes[:]...)
	return append(b, c.index[:]...)
}

// appendDirs appends the directories of a whole tree with their flags
// (none, with only the unvouched files).
func (c *treeCache) appendDirs(b []byte) []byte {
	t := c.tree
	dirs := map[string]byte{}
	if c.full {
		for d := range t.Dirs {
			dirs[d] |= cacheDir
		}
		for d := range t.Empty {
			dirs[d] |= cacheEmpty
		}
		for d, j := range t.jobs {
			dirs[d] |= cacheJob
			if j.ignored {
				dirs[d] |= cacheIgnored
			}
			if j.guarded {
				dirs[d] |= cacheGuarded
			}
		}
	}
	b = binary.AppendUvarint(b, uint64(len(dirs)))
	for d, fl := range dirs {
		b = appendString(b, d)
		b = append(b, fl)
	}
	return b
}

// appendFiles appends the files, grouped by directory.
func (c *treeCache) appendFiles(b []byte) []byte {
	t := c.tree
	byDir := t.byDir
	listed := 0
	for _, paths := range byDir {
		listed += len(paths)
	}
	if listed != len(t.Files) {
		byDir = map[string][]string{}
		for p := range t.Files {
			byDir[parentDir(p)] = append(byDir[parentDir(p)], p)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(t.Files)))
	b = binary.AppendUvarint(b, uint64(len(byDir)))
	for d, paths := range byDir {
		b = appendString(b, d)
		n := 0
		for _, p := range paths {
			if t.Files[p] != nil {
				n++
			}
		}
		b = binary.AppendUvarint(b, uint64(n))
		for _, p := range paths {
			f := t.Files[p]
			if f == nil {
				continue
			}
			b = appendString(b, p)
			var fl byte
			if t.Linked[p] {
				fl |= cacheLinked
			}
			if t.untracked[p] {
				fl |= cacheUntracked
			}
			b = append(b, fl)
			b = appendFile(b, f)
		}
	}
	return b
}

// appendWhole appends what only a whole tree has: the ignore rules, the
// ignored files kept, the submodules, and the missing and unvouched files.
func (c *treeCache) appendWhole(b []byte) []byte {
	t := c.tree
	b = binary.AppendUvarint(b, uint64(len(t.Ignores)))
	for d, ps := range t.Ignores {
		b = appendString(b, d)
		var lines []string
		for _, p := range ps {
			lines = append(lines, p.String())
		}
		b = appendString(b, strings.Join(lines, "\n"))
	}
	b = binary.AppendUvarint(b, uint64(len(t.Ignored)))
	for p, f := range t.Ignored {
		b = appendString(b, p)
		b = appendFile(b, f)
	}
	b = binary.AppendUvarint(b, uint64(len(t.Gitlinks)))
	for g := range t.Gitlinks {
		b = appendString(b, g)
	}
	v := c.vouched
	if v == nil {
		v = &vouched{}
	}
	for _, l := range [][]string{c.missing, v.unknown, v.perms, v.attrs} {
		b = binary.AppendUvarint(b, uint64(len(l)))
		for _, p := range l {
			b = appendString(b, p)
		}
	}
	return b
}

// castagnoli is CRC-32C, which the processor computes: the cache's
// checksum guards against a torn or damaged file, not against an
// adversary (see treeCache). Its table is made on first use: making it
// costs 0.4 ms, which every start of orket paid before.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendFile(b []byte, f *File) []byte {
	b = binary.AppendUvarint(b, uint64(f.Mode))
	b = binary.AppendUvarint(b, uint64(f.Perm))
	b = binary.AppendVarint(b, f.Size)
	b = binary.AppendVarint(b, f.Mtime)
	b = binary.AppendVarint(b, f.Ctime)
	b = binary.AppendUvarint(b, f.Ino)
	return append(b, f.OID[:]...)
}

var errCache = errors.New("damaged scan cache")

// cacheReader reads the encoding; the first error sticks.
type cacheReader struct {
	b   []byte
	s   string // b as a string: names are substrings of it
	off int
	err error
}

func (r *cacheReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.err = errCache
		return 0
	}
	r.off += n
	return v
}

func (r *cacheReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b[r.off:])
	if n <= 0 {
		r.err = errCache
		return 0
	}
	r.off += n
	return v
}

func (r *cacheReader) bytes(n int) []byte {
	if r.err != nil || n < 0 || r.off+n > len(r.b) {
		r.err = errCache
		return nil
	}
	v := r.b[r.off : r.off+n]
	r.off += n
	return v
}

func (r *cacheReader) byte1() byte {
	if v := r.bytes(1); v != nil {
		return v[0]
	}
	return 0
}

func (r *cacheReader) string() string {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)-r.off) {
		r.err = errCache
		return ""
	}
	v := r.s[r.off : r.off+int(n)]
	r.off += int(n)
	return v
}

// count reads a count of records of at least min bytes each.
func (r *cacheReader) count(min int) int {
	n := r.uvarint()
	if n > uint64(len(r.b)-r.off)/uint64(min) {
		r.err = errCache
		return 0
	}
	return int(n)
}

func (r *cacheReader) file(f *File) {
	f.Mode = filemode.FileMode(r.uvarint())
	f.Perm = uint32(r.uvarint())
	f.Size = r.varint()
	f.Mtime = r.varint()
	f.Ctime = r.varint()
	f.Ino = r.uvarint()
	copy(f.OID[:], r.bytes(20))
}

// decodeCache reads a cache, checking its hash.
func decodeCache(b []byte) (*treeCache, error) {
	if len(b) < len(cacheMagic)+4 || string(b[:len(cacheMagic)]) != cacheMagic {
		return nil, errCache
	}
	body, sum := b[:len(b)-4], b[len(b)-4:]
	if crc32.Checksum(body, castagnoli()) != binary.BigEndian.Uint32(sum) {
		return nil, errCache
	}
	r := &cacheReader{b: body, off: len(cacheMagic)}
	r.s = unsafe.String(&body[0], len(body)) // body is never written again
	c := &treeCache{}
	c.full = r.byte1() == 1
	c.hook = r.string()
	c.token = r.string()
	c.start = r.varint()
	copy(c.excludes[:], r.bytes(20))
	copy(c.index[:], r.bytes(20))
	drecs := r.dirRecords()
	nfiles := r.count(30)
	ndirs := r.count(2)
	t := newTree(nfiles, ndirs)
	for _, dr := range drecs {
		d, fl := dr.d, dr.fl
		if fl&cacheDir != 0 {
			t.Dirs[d] = true
		}
		if fl&cacheEmpty != 0 {
			t.Empty[d] = true
		}
		if fl&cacheJob != 0 {
			t.jobs[d] = dirJob{rel: d, ignored: fl&cacheIgnored != 0, guarded: fl&cacheGuarded != 0}
		}
	}
	r.files(t, nfiles, ndirs)
	if c.full {
		r.whole(c, t)
	}
	if r.err != nil || r.off != len(body) {
		return nil, errCache
	}
	c.tree = t
	return c, nil
}

// A dirRec is a directory of the cache with its flags.
type dirRec struct {
	d  string
	fl byte
}

// dirRecords reads the directories with their flags.
func (r *cacheReader) dirRecords() []dirRec {
	var drecs []dirRec
	for i, n := 0, r.count(2); i < n && r.err == nil; i++ {
		drecs = append(drecs, dirRec{r.string(), r.byte1()})
	}
	return drecs
}

// files reads nfiles files in ndirs directories into t.
func (r *cacheReader) files(t *Tree, nfiles, ndirs int) {
	slab := make([]File, nfiles)
	for i := 0; i < ndirs && r.err == nil; i++ {
		d := r.string()
		n := r.count(30)
		if len(slab) < n {
			r.err = errCache
			break
		}
		paths := make([]string, 0, n)
		for k := 0; k < n && r.err == nil; k++ {
			p := r.string()
			fl := r.byte1()
			f := &slab[0]
			slab = slab[1:]
			r.file(f)
			t.Files[p] = f
			if fl&cacheLinked != 0 {
				t.Linked[p] = true
			}
			if fl&cacheUntracked != 0 {
				t.untracked[p] = true
			}
			paths = append(paths, p)
		}
		t.byDir[d] = paths
	}
}

// whole reads into c and t what only a whole tree has (see appendWhole).
func (r *cacheReader) whole(c *treeCache, t *Tree) {
	n := r.count(2)
	for i := 0; i < n && r.err == nil; i++ {
		d := r.string()
		t.Ignores[d] = gitignore.ParsePatterns([]byte(r.string()), d)
	}
	n = r.count(30)
	for i := 0; i < n && r.err == nil; i++ {
		p := r.string()
		f := &File{}
		r.file(f)
		t.Ignored[p] = f
	}
	n = r.count(2)
	for i := 0; i < n && r.err == nil; i++ {
		t.Gitlinks[r.string()] = true
	}
	c.vouched = &vouched{}
	for _, l := range []*[]string{&c.missing, &c.vouched.unknown, &c.vouched.perms, &c.vouched.attrs} {
		n = r.count(1)
		*l = make([]string, 0, n)
		for i := 0; i < n && r.err == nil; i++ {
			*l = append(*l, r.string())
		}
	}
}

// loadCache reads the scan cache; nil when there is none or it is
// damaged.
func (r *Repo) loadCache() *treeCache {
	f, err := os.Open(r.cachePath())
	if err != nil {
		return nil
	}
	defer f.Close()
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil
	}
	b := make([]byte, st.Size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil
	}
	c, err := decodeCache(b)
	if err != nil {
		return nil
	}
	c.stat = &st
	return c
}

// cacheHead reads the hook, the token and the scanned directories at the
// start of the scan cache, without the rest: the snapshot watches the
// directories and asks the hook while it reads the cache.
func (r *Repo) cacheHead() (hook, token string, dirs []string) {
	f, err := os.Open(r.cachePath())
	if err != nil {
		return "", "", nil
	}
	defer f.Close()
	b := make([]byte, 4<<20)
	n, _ := io.ReadFull(f, b)
	b = b[:n]
	if len(b) < len(cacheMagic)+1 || string(b[:len(cacheMagic)]) != cacheMagic || b[len(cacheMagic)] != 1 {
		return "", "", nil
	}
	cr := &cacheReader{b: b, s: string(b), off: len(cacheMagic) + 1}
	hook, token = cr.string(), cr.string()
	cr.varint()
	cr.bytes(40)
	for i, n := 0, cr.count(2); i < n && cr.err == nil; i++ {
		d, fl := cr.string(), cr.byte1()
		if fl&cacheJob != 0 {
			dirs = append(dirs, d)
		}
	}
	if cr.err != nil {
		return hook, token, nil // a cache too big to read here: nothing to watch early
	}
	return hook, token, dirs
}

// cacheChanged reports whether the scan cache is no longer the file whose
// stat was st (nil: there was none).
func (r *Repo) cacheChanged(st *unix.Stat_t) bool {
	var now unix.Stat_t
	err := unix.Lstat(r.cachePath(), &now)
	if st == nil {
		return err == nil
	}
	return err != nil || now.Ino != st.Ino || now.Size != st.Size || now.Mtim != st.Mtim || now.Ctim != st.Ctim
}

// subtree returns the named files of t as a tree of their own.
func subtree(t *Tree, paths []string) *Tree {
	s := newTree(len(paths), 0)
	for _, p := range paths {
		if f := t.Files[p]; f != nil {
			s.Files[p] = f
			if t.Linked[p] {
				s.Linked[p] = true
			}
			if t.untracked[p] {
				s.untracked[p] = true
			}
		}
	}
	s.byDir = nil
	return s
}

// saveCache writes the scan cache atomically (not durably: it is a
// cache) and returns the stat of the file written.
func (r *Repo) saveCache(c *treeCache) (*unix.Stat_t, error) {
	p := r.cachePath()
	tmp := p + ".tmp-" + randHex(4)
	if err := os.WriteFile(tmp, c.encode(), 0o644); err != nil {
		os.Remove(tmp)
		return nil, err
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// dropCache removes the scan cache.
func (r *Repo) dropCache() { os.Remove(r.cachePath()) }

// jobPatterns rebuilds the ignore patterns a scan of directory d inherits:
// the repository-wide ones, then each ancestor's own, root first.
func jobPatterns(t *Tree, excludes []gitignore.Pattern, d string) []gitignore.Pattern {
	ps := excludes[:len(excludes):len(excludes)]
	if d == "" {
		return ps
	}
	var chain []string // d's ancestors, deepest first, the root last
	for a := parentDir(d); ; a = parentDir(a) {
		chain = append(chain, a)
		if a == "" {
			break
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		if own := t.Ignores[chain[i]]; own != nil {
			ps = append(ps[:len(ps):len(ps)], own...)
		}
	}
	return ps
}

// reuse sets the blob id of each of paths whose stat is as c recorded it,
// if the file was already old when c's scan read it (so that a later
// write, however quick, shows in its stat), and returns the others.
func (c *treeCache) reuse(t *Tree, paths []string) (rest []string) {
	if c == nil {
		return paths
	}
	cutoff := c.start - int64(racyWindow)
	for _, p := range paths {
		f, old := t.Files[p], c.tree.Files[p]
		if f != nil && old != nil && !old.OID.IsZero() && f.sameStat(old) && f.Mtime < cutoff && f.Ctime < cutoff {
			f.OID = old.OID
			continue
		}
		rest = append(rest, p)
	}
	return rest
}

// resolveJobs gives the directories of a tree read from the cache the
// ignore patterns their scan inherits (parents before children).
func (t *Tree) resolveJobs(excludes []gitignore.Pattern) {
	dirs := make([]string, 0, len(t.jobs))
	for d := range t.jobs {
		dirs = append(dirs, d)
	}
	depth := func(d string) int {
		if d == "" {
			return -1
		}
		return strings.Count(d, "/")
	}
	sort.Slice(dirs, func(i, j int) bool { return depth(dirs[i]) < depth(dirs[j]) })
	for _, d := range dirs {
		j := t.jobs[d]
		if d == "" {
			j.patterns = excludes
		} else if parent, ok := t.jobs[parentDir(d)]; ok {
			j.patterns = parent.patterns
			if own := t.Ignores[parentDir(d)]; own != nil {
				j.patterns = append(j.patterns[:len(j.patterns):len(j.patterns)], own...)
			}
		} else {
			j.patterns = jobPatterns(t, excludes, d)
		}
		t.jobs[d] = j
	}
}
