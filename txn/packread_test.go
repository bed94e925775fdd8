package txn

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// historyRepo makes a repository of many versions of a few files, text
// and binary, small and large, and an empty one, so that git's repacks
// make chains of deltas.
func historyRepo(t *testing.T) string {
	t.Helper()
	gitEnv(t)
	dir := t.TempDir()
	sh(t, dir, "git init -q")
	rng := rand.New(rand.NewSource(1))
	bin := make([]byte, 40<<10)
	rng.Read(bin)
	big := make([]byte, 300<<10)
	for i := range big {
		big[i] = byte('a' + rng.Intn(26))
		if i%61 == 60 {
			big[i] = '\n'
		}
	}
	var text []string
	for i := 0; i < 200; i++ {
		text = append(text, fmt.Sprintf("line %d: %x", i, rng.Int63()))
	}
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("empty", nil)
	for v := 0; v < 60; v++ {
		// Text: a line changed, one added, now and then one removed.
		text[rng.Intn(len(text))] = fmt.Sprintf("changed in %d: %x", v, rng.Int63())
		text = append(text, fmt.Sprintf("added in %d", v))
		if v%7 == 0 {
			text = text[1:]
		}
		write("a.txt", []byte(strings.Join(text, "\n")+"\n"))
		write("b.txt", []byte(strings.Join(text[v%11:], "\n")))
		// Binary: bytes overwritten, bytes appended.
		for k := 0; k < 20; k++ {
			bin[rng.Intn(len(bin))] = byte(rng.Intn(256))
		}
		bin = append(bin, byte(v), 0, 0xff)
		write("data.bin", bin)
		// Large: edits far apart (copies of more than 64 KiB).
		for k := 0; k < 3; k++ {
			big[rng.Intn(len(big))] = '#'
		}
		write("big.txt", big)
		sh(t, dir, "git add -A && git commit -q -m v"+strconv.Itoa(v))
	}
	return dir
}

// gitObjects returns every object of the store, by git cat-file.
func gitObjects(t *testing.T, dir string) map[plumbing.Hash]struct {
	typ string
	b   []byte
} {
	t.Helper()
	cmd := exec.Command("git", "cat-file", "--batch-all-objects", "--batch")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	objs := map[plumbing.Hash]struct {
		typ string
		b   []byte
	}{}
	rd := bufio.NewReader(bytes.NewReader(out))
	for {
		line, err := rd.ReadString('\n')
		if err == io.EOF {
			break
		}
		f := strings.Fields(line)
		if err != nil || len(f) != 3 {
			t.Fatalf("cat-file: %q %v", line, err)
		}
		n, _ := strconv.Atoi(f[2])
		b := make([]byte, n+1)
		if _, err := io.ReadFull(rd, b); err != nil {
			t.Fatal(err)
		}
		objs[plumbing.NewHash(f[0])] = struct {
			typ string
			b   []byte
		}{f[1], b[:n]}
	}
	return objs
}

// chainStats reads every object's chain in the store's packs: how many
// entries of each type, the longest chain, the 64-bit offsets.
func chainStats(t *testing.T, r *Repo) (types map[byte]int, longest int, large int64) {
	t.Helper()
	types = map[byte]int{}
	idx, ok := packIndexFiles(r.objectsDir())
	if !ok || len(idx) == 0 {
		t.Fatalf("no pack indexes: %v", idx)
	}
	for _, path := range idx {
		p, err := openPackIndex(path)
		if err != nil {
			t.Fatal(err)
		}
		large += p.large
		for pos := int64(0); pos < p.n; pos++ {
			off, err := p.offset(pos)
			if err != nil {
				t.Fatal(err)
			}
			chain, err := p.chain(off)
			if err != nil {
				t.Fatal(err)
			}
			types[chain[0].typ]++
			longest = max(longest, len(chain))
		}
		p.close()
	}
	return types, longest, large
}

// TestPackedObjects: orket reads every object of packs that git wrote
// (deltas by offset and by id, long chains, 64-bit offsets) as git does,
// and leaves to go-git the packs it does not read.
func TestPackedObjects(t *testing.T) {
	dir := historyRepo(t)
	reindex := func(opt string) string {
		return `for p in .git/objects/pack/*.pack; do i=${p%.pack}.idx; rm -f "$i"; git index-pack ` + opt + ` "$p"; done`
	}
	for _, c := range []struct {
		name, script string
		ofs, ref     bool // deltas of this kind expected
		large        bool // 64-bit offsets expected
		unread       bool // orket leaves the pack to go-git
	}{
		{name: "repack-depth50", script: "git repack -q -adf --depth=50 --window=250", ofs: true},
		{name: "ref-delta", script: "git -c repack.useDeltaBaseOffset=false repack -q -adf --depth=50 --window=250", ref: true},
		{name: "gc-aggressive", script: "git gc -q --aggressive", ofs: true},
		{name: "large-offsets", script: "git repack -q -adf --depth=50 && " + reindex("--index-version=2,0x100"), ofs: true, large: true},
		{name: "ref-delta-large-offsets", script: "git -c repack.useDeltaBaseOffset=false repack -q -adf && " + reindex("--index-version=2,12"), ref: true, large: true},
		{name: "idx-v1", script: "git repack -q -adf && " + reindex("--index-version=1"), unread: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			sh(t, dir, c.script)
			objs := gitObjects(t, dir)
			r := open(t, dir)
			if !c.unread {
				types, longest, large := chainStats(t, r)
				t.Logf("entries by type %v, longest chain %d, %d 64-bit offsets", types, longest, large)
				if c.ofs && types[packOfsDelta] == 0 || c.ref && types[packRefDelta] == 0 || longest < 10 {
					t.Errorf("expected deltas: entries by type %v, longest chain %d", types, longest)
				}
				if c.large != (large > 0) {
					t.Errorf("%d 64-bit offsets", large)
				}
			}
			blobs, empty := 0, false
			for id, o := range objs {
				typ, b, ok := r.packedObject(id)
				if ok == c.unread {
					t.Fatalf("%s %s: read by orket: %v", o.typ, id, ok)
				}
				if ok && (typ.String() != o.typ || !bytes.Equal(b, o.b)) {
					t.Fatalf("%s %s: orket read a %s of %d bytes, git %d", o.typ, id, typ, len(b), len(o.b))
				}
				ityp, size, ok := r.packedInfo(id)
				if ok == c.unread || ok && (ityp.String() != o.typ || size != int64(len(o.b))) {
					t.Fatalf("%s %s: info %v %d %v, git %d", o.typ, id, ityp, size, ok, len(o.b))
				}
				// (go-git reads no version 1 index either: a pack orket
				// leaves to go-git is only checked to be left.)
				if o.typ != "blob" || c.unread {
					continue
				}
				blobs++
				empty = empty || len(o.b) == 0
				got, err := r.ReadBlob(id)
				if err != nil || !bytes.Equal(got, o.b) {
					t.Fatalf("ReadBlob %s: %d bytes, git %d: %v", id, len(got), len(o.b), err)
				}
				if n, err := r.BlobSize(id); err != nil || n != int64(len(o.b)) {
					t.Fatalf("BlobSize %s: %d, git %d: %v", id, n, len(o.b), err)
				}
			}
			if !c.unread && (blobs < 200 || !empty) {
				t.Errorf("%d blobs, the empty one %v", blobs, empty)
			}
			if _, _, ok := r.packedObject(blobHash([]byte("nowhere"))); ok {
				t.Error("an object git does not have was read")
			}
		})
	}
}

// TestPackedObjectsFallBack: what orket does not read (an object over
// its bound, a pack that lies, alternates) is still read, by go-git.
func TestPackedObjectsFallBack(t *testing.T) {
	gitEnv(t)
	dir := t.TempDir()
	sh(t, dir, `git init -q; printf 'small\n' > s; head -c 70000000 /dev/zero > z; git add s z; git commit -qm one; git gc -q`)
	r := open(t, dir)
	small, big := blobHash([]byte("small\n")), blobHash(make([]byte, 70000000))
	if _, _, ok := r.packedObject(small); !ok {
		t.Fatal("a small packed blob not read by orket")
	}
	if _, _, ok := r.packedObject(big); ok {
		t.Fatal("a blob over maxPackedObject read by orket")
	}
	if n, err := r.BlobSize(big); err != nil || n != 70000000 {
		t.Fatalf("BlobSize of the large blob: %d %v", n, err)
	}
	if b, err := r.ReadBlob(big); err != nil || len(b) != 70000000 {
		t.Fatalf("ReadBlob of the large blob: %d %v", len(b), err)
	}

	// Alternates: left to go-git (whose answer the objects of another
	// store depend on).
	// The clone gets a copy of the source's packs, so that only its
	// alternates file can explain a refusal.
	other := t.TempDir()
	sh(t, other, `git clone -q --shared `+dir+` . && cp `+dir+`/.git/objects/pack/* .git/objects/pack/ && test -s .git/objects/info/alternates`)
	if _, _, ok := open(t, other).packedObject(small); ok {
		t.Fatal("read through alternates")
	}
}

// craftedPack writes a pack of the given entries (and an index naming
// ids at their offsets) as the store's only pack.
func craftedPack(t *testing.T, r *Repo, ids []plumbing.Hash, entries [][]byte) {
	t.Helper()
	var pack bytes.Buffer
	pack.WriteString("PACK")
	binary.Write(&pack, binary.BigEndian, uint32(2))
	binary.Write(&pack, binary.BigEndian, uint32(len(entries)))
	offs := map[plumbing.Hash]uint32{}
	for i, e := range entries {
		offs[ids[i]] = uint32(pack.Len())
		pack.Write(e)
	}
	sum := sha1.Sum(pack.Bytes())
	pack.Write(sum[:])
	sorted := append([]plumbing.Hash(nil), ids...)
	for i := range sorted {
		for j := i + 1; j < len(sorted); j++ {
			if bytes.Compare(sorted[j][:], sorted[i][:]) < 0 {
				sorted[i], sorted[j] = sorted[j], sorted[i]
			}
		}
	}
	var idx bytes.Buffer
	idx.WriteString("\377tOc")
	binary.Write(&idx, binary.BigEndian, uint32(2))
	for b := 0; b < 256; b++ {
		n := 0
		for _, id := range sorted {
			if int(id[0]) <= b {
				n++
			}
		}
		binary.Write(&idx, binary.BigEndian, uint32(n))
	}
	for _, id := range sorted {
		idx.Write(id[:])
	}
	idx.Write(make([]byte, 4*len(sorted)))
	for _, id := range sorted {
		binary.Write(&idx, binary.BigEndian, offs[id])
	}
	idx.Write(sum[:])
	idx.Write(make([]byte, 20))
	dir := filepath.Join(r.objectsDir(), "pack")
	os.RemoveAll(dir)
	os.MkdirAll(dir, 0o755)
	name := filepath.Join(dir, fmt.Sprintf("pack-%x", sum))
	if err := os.WriteFile(name+".pack", pack.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name+".idx", idx.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func entryHeader(typ byte, size int) []byte {
	b := []byte{typ<<4 | byte(size&15)}
	for size >>= 4; size > 0; size >>= 7 {
		b[len(b)-1] |= 0x80
		b = append(b, byte(size&0x7f))
	}
	return b
}

func deflate(b []byte) []byte {
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(b)
	zw.Close()
	return z.Bytes()
}

func deltaHeader(src, dst int) []byte {
	var b []byte
	for _, v := range []int{src, dst} {
		for v >= 0x80 {
			b = append(b, byte(v)|0x80)
			v >>= 7
		}
		b = append(b, byte(v))
	}
	return b
}

// TestHostilePacks: packs that lie (sizes, bases, cycles of deltas,
// contents of another id) are not read by orket: an error, never a loop
// or a panic.
func TestHostilePacks(t *testing.T) {
	gitEnv(t)
	dir := t.TempDir()
	sh(t, dir, "git init -q")
	r := open(t, dir)
	content := []byte("hello, world\n")
	id := blobHash(content)
	other := blobHash([]byte("other"))
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	good := cat(entryHeader(packBlob, len(content)), deflate(content))
	otherEntry := cat(entryHeader(packBlob, 5), deflate([]byte("other")))
	ofsDelta := func(delta []byte) []byte {
		return cat(entryHeader(packOfsDelta, len(delta)), []byte{byte(len(otherEntry))}, deflate(delta))
	}
	for _, c := range []struct {
		name    string
		ids     []plumbing.Hash
		entries [][]byte
		ok      bool
	}{
		{"good", []plumbing.Hash{id}, [][]byte{good}, true},
		{"size-short", []plumbing.Hash{id}, [][]byte{cat(entryHeader(packBlob, len(content)-1), deflate(content))}, false},
		{"size-long", []plumbing.Hash{id}, [][]byte{cat(entryHeader(packBlob, len(content)+1), deflate(content))}, false},
		{"size-huge", []plumbing.Hash{id}, [][]byte{cat(entryHeader(packBlob, 1<<40), deflate(content))}, false},
		{"not-zlib", []plumbing.Hash{id}, [][]byte{cat(entryHeader(packBlob, len(content)), content)}, false},
		{"other-content", []plumbing.Hash{id}, [][]byte{cat(entryHeader(packBlob, 5), deflate([]byte("other")))}, false},
		{"type-5", []plumbing.Hash{id}, [][]byte{cat(entryHeader(5, len(content)), deflate(content))}, false},
		{"truncated-header", []plumbing.Hash{id}, [][]byte{{0xb0}}, false},
		{"ref-delta-self", []plumbing.Hash{id}, [][]byte{cat(entryHeader(packRefDelta, 4), id[:], deflate(deltaHeader(13, 13)))}, false},
		{"ref-delta-cycle", []plumbing.Hash{id, other}, [][]byte{
			cat(entryHeader(packRefDelta, 4), other[:], deflate(deltaHeader(13, 13))),
			cat(entryHeader(packRefDelta, 4), id[:], deflate(deltaHeader(13, 13))),
		}, false},
		{"ref-delta-missing-base", []plumbing.Hash{id}, [][]byte{cat(entryHeader(packRefDelta, 4), other[:], deflate(deltaHeader(13, 13)))}, false},
		{"ofs-delta-before-pack", []plumbing.Hash{id}, [][]byte{cat(entryHeader(packOfsDelta, 4), []byte{0x7f}, deflate(deltaHeader(13, 13)))}, false},
		{"ofs-delta-zero", []plumbing.Hash{id}, [][]byte{cat(entryHeader(packOfsDelta, 4), []byte{0}, deflate(deltaHeader(13, 13)))}, false},
		{"ofs-delta-ok", []plumbing.Hash{other, id}, [][]byte{otherEntry, ofsDelta(cat(deltaHeader(5, 13), []byte{13}, content))}, true},
		{"ofs-delta-copy", []plumbing.Hash{other, id}, [][]byte{otherEntry, ofsDelta(cat(deltaHeader(5, 13), []byte{8}, content[:8], []byte{0x91, 0, 5}))}, false},
		{"ofs-delta-lies-about-base", []plumbing.Hash{other, id}, [][]byte{otherEntry, ofsDelta(cat(deltaHeader(6, 13), []byte{13}, content))}, false},
		{"ofs-delta-lies-about-result", []plumbing.Hash{other, id}, [][]byte{otherEntry, ofsDelta(cat(deltaHeader(5, 14), []byte{13}, content))}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			craftedPack(t, r, c.ids, c.entries)
			b, ok := r.packedBlob(id)
			if ok != c.ok || ok && !bytes.Equal(b, content) {
				t.Fatalf("read %v: %q", ok, b)
			}
		})
	}
}

func TestLargeOffsetTable(t *testing.T) {
	dir := t.TempDir()
	// An index of 2 objects: the second's offset is in the 64-bit table.
	var idx bytes.Buffer
	idx.WriteString("\377tOc\x00\x00\x00\x02")
	for b := 0; b < 256; b++ {
		n := 0
		if b >= 0x10 {
			n++
		}
		if b >= 0x20 {
			n++
		}
		binary.Write(&idx, binary.BigEndian, uint32(n))
	}
	a, z := plumbing.Hash{0x10, 1}, plumbing.Hash{0x20, 2}
	idx.Write(a[:])
	idx.Write(z[:])
	idx.Write(make([]byte, 8))
	binary.Write(&idx, binary.BigEndian, uint32(12))
	binary.Write(&idx, binary.BigEndian, uint32(0x80000000))
	binary.Write(&idx, binary.BigEndian, uint64(5<<32+7))
	idx.Write(make([]byte, 40))
	path := filepath.Join(dir, "pack-x.idx")
	os.WriteFile(path, idx.Bytes(), 0o644)
	p, err := openPackIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	for _, c := range []struct {
		id  plumbing.Hash
		off int64
	}{{a, 12}, {z, 5<<32 + 7}} {
		pos, found, err := p.find(c.id)
		if !found || err != nil {
			t.Fatalf("%s not found: %v", c.id, err)
		}
		if off, err := p.offset(pos); off != c.off || err != nil {
			t.Errorf("%s at %d, want %d: %v", c.id, off, c.off, err)
		}
	}
	if _, err := p.largeOffset(0x80000001); err == nil {
		t.Error("an entry past the 64-bit table read")
	}
}

// TestApplyDelta: git's delta format, and instructions that lie.
func TestApplyDelta(t *testing.T) {
	base := []byte("0123456789abcdef")
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	for _, c := range []struct {
		name  string
		delta []byte
		want  string // "" for an error
	}{
		{"copy-insert", cat(deltaHeader(16, 7), []byte{0x91, 2, 4, 3}, []byte("XYZ")), "2345XYZ"},
		{"copy-all-defaults", cat(deltaHeader(16, 16), []byte{0x90, 16}), string(base)},
		{"copy-offset-bytes", cat(deltaHeader(16, 2), []byte{0x91, 14, 2}), "ef"},
		{"empty-result", deltaHeader(16, 0), "-"},
		{"wrong-base-size", cat(deltaHeader(15, 1), []byte{1, 'x'}), ""},
		{"truncated-header", []byte{0x90}, ""},
		{"truncated-copy", cat(deltaHeader(16, 4), []byte{0x91, 2}), ""},
		{"truncated-insert", cat(deltaHeader(16, 4), []byte{4, 'a'}), ""},
		{"copy-past-base", cat(deltaHeader(16, 4), []byte{0x91, 14, 4}), ""},
		{"copy-64k-default-past-base", cat(deltaHeader(16, 4), []byte{0x80}), ""},
		{"copy-offset-huge", cat(deltaHeader(16, 1), []byte{0x9f, 0xff, 0xff, 0xff, 0xff, 1}), ""},
		{"result-too-long", cat(deltaHeader(16, 2), []byte{3, 'a', 'b', 'c'}), ""},
		{"result-too-short", cat(deltaHeader(16, 4), []byte{3, 'a', 'b', 'c'}), ""},
		{"reserved-0", cat(deltaHeader(16, 1), []byte{0, 1, 'a'}), ""},
		{"result-over-limit", deltaHeader(16, 1<<30), ""},
		{"size-overflow", cat([]byte{0x90}, bytes.Repeat([]byte{0xff}, 12), []byte{1}), ""},
	} {
		got, err := applyDelta(base, c.delta, 1<<20)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("%s: no error, made %q", c.name, got)
		case c.want != "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && string(got) != strings.TrimPrefix(c.want, "-"):
			t.Errorf("%s: made %q, want %q", c.name, got, c.want)
		}
	}
}

// FuzzApplyDelta: whatever a delta says, applying it returns the size it
// promised or an error; it never panics.
func FuzzApplyDelta(f *testing.F) {
	f.Add([]byte("0123456789abcdef"), []byte{16, 7, 0x91, 2, 4, 3, 'X', 'Y', 'Z'})
	f.Add([]byte("abc"), []byte{3, 3, 0x90, 3})
	f.Add([]byte(""), []byte{0, 1, 1, 'a'})
	f.Add([]byte("abc"), []byte{3, 0x80, 0x80, 4, 0x80})
	f.Fuzz(func(t *testing.T, base, delta []byte) {
		out, err := applyDelta(base, delta, 1<<16)
		if err != nil {
			return
		}
		_, i, _ := deltaVarint(delta, 0)
		dst, _, _ := deltaVarint(delta, i)
		if uint64(len(out)) != dst {
			t.Fatalf("made %d bytes, promised %d", len(out), dst)
		}
	})
}

// FuzzPackEntry: whatever bytes an entry starts with, its header parses or
// is an error, and a delta's base is before it.
func FuzzPackEntry(f *testing.F) {
	f.Add([]byte{0x3d, 'x'}, int64(12))
	f.Add([]byte{0xe4, 0x01, 0x85, 0x01}, int64(1000))
	f.Add(append([]byte{0x74}, make([]byte, 20)...), int64(12))
	f.Fuzz(func(t *testing.T, b []byte, off int64) {
		if off < 12 {
			return
		}
		e, err := parseEntry(b, off)
		if err != nil {
			return
		}
		if e.data <= off || e.data > off+int64(len(b)) || e.size < 0 || e.typ == packOfsDelta && (e.base < 0 || e.base >= off) {
			t.Fatalf("%+v from %x at %d", e, b, off)
		}
	})
}
