package txn

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Asking go-git whether an object exists, or what it is, loads every pack
// index of the repository whole into memory first: tens of megabytes for
// a large repository, on every run. A snapshot needs a handful of answers,
// so it reads them itself: a pack index (version 2) is a table of 256
// counts and the sorted object ids, and one bucket of it says whether an
// id is there.

// packs lists the pack indexes of an object store; nil when orket cannot
// answer for the store alone (alternates, an index it cannot read).
func packIndexFiles(objectsDir string) (idx []string, ok bool) {
	if _, err := os.Stat(filepath.Join(objectsDir, "info", "alternates")); err == nil {
		return nil, false
	}
	names, err := os.ReadDir(filepath.Join(objectsDir, "pack"))
	if err != nil {
		return nil, os.IsNotExist(err)
	}
	for _, n := range names {
		if strings.HasSuffix(n.Name(), ".idx") {
			idx = append(idx, filepath.Join(objectsDir, "pack", n.Name()))
		}
	}
	return idx, true
}

// inPackIndex reports whether the pack index at path lists id; ok is
// false when the file is not a version 2 index orket can read.
func inPackIndex(path string, id plumbing.Hash) (found, ok bool) {
	p, err := openPackIndex(path)
	if err != nil {
		return false, false
	}
	defer p.close()
	_, found, err = p.find(id)
	return found, err == nil
}

// inPacks reports whether some pack of the store holds id.
func (w *objectWriter) inPacks(id plumbing.Hash) bool {
	if !w.packsKnown {
		w.packsKnown = true
		w.packIdx, w.packsReadable = packIndexFiles(w.objectsDir())
	}
	if w.packsReadable {
		readable := true
		for _, p := range w.packIdx {
			found, ok := inPackIndex(p, id)
			if found {
				w.freshenPack(p)
				return true
			}
			readable = readable && ok
		}
		if readable {
			return false
		}
	}
	return w.r.Git.Storer.HasEncodedObject(id) == nil
}

// An objectKinds remembers what the objects that refs name are (commits,
// annotated tags with their bytes), in .git/orket/pins: an object's id
// names its content, so what it is never changes; only whether it still
// exists does, which has answers cheaply.
type objectKinds struct {
	file    string
	kinds   map[plumbing.Hash]string // "commit", "other", or a tag's bytes in base64 after "tag "
	changed bool
}

func (r *Repo) loadKinds() *objectKinds {
	k := &objectKinds{file: filepath.Join(r.GitDir, "orket", "pins"), kinds: map[plumbing.Hash]string{}}
	b, err := os.ReadFile(k.file)
	if err != nil {
		return k
	}
	for _, line := range strings.Split(string(b), "\n") {
		id, kind, ok := strings.Cut(line, " ")
		if h := plumbing.NewHash(id); ok && len(id) == 40 && !h.IsZero() {
			k.kinds[h] = kind
		}
	}
	return k
}

func (k *objectKinds) save() {
	if !k.changed {
		return
	}
	var b strings.Builder
	for id, kind := range k.kinds {
		b.WriteString(id.String() + " " + kind + "\n")
	}
	tmp := k.file + ".tmp-" + randHex(4)
	// A cache: losing it costs reading the objects again.
	if os.WriteFile(tmp, []byte(b.String()), 0o644) == nil && os.Rename(tmp, k.file) != nil {
		os.Remove(tmp)
	}
}

// kind returns what id is (plumbing.CommitObject, plumbing.TagObject with
// the tag's bytes, or another type), and whether it exists.
func (w *objectWriter) kind(k *objectKinds, id plumbing.Hash) (plumbing.ObjectType, []byte, bool) {
	if kind, ok := k.kinds[id]; ok && w.has(id) {
		switch {
		case kind == "commit":
			return plumbing.CommitObject, nil, true
		case strings.HasPrefix(kind, "tag "):
			if b, err := base64.StdEncoding.DecodeString(kind[4:]); err == nil {
				return plumbing.TagObject, b, true
			}
		default:
			return plumbing.AnyObject, nil, true
		}
	}
	// A packed object is read by orket (its type from its entries; a
	// tag's bytes, checked against its id); the rest by go-git.
	typ, _, ok := w.r.packedInfo(id)
	var b []byte
	if ok && typ == plumbing.TagObject {
		typ, b, ok = w.r.packedObject(id)
	}
	if !ok {
		obj, err := w.r.Git.Storer.EncodedObject(plumbing.AnyObject, id)
		if err != nil {
			return plumbing.InvalidObject, nil, false
		}
		if typ = obj.Type(); typ == plumbing.TagObject {
			if b, err = readAll(obj); err != nil {
				return plumbing.InvalidObject, nil, false
			}
		}
	}
	switch typ {
	case plumbing.CommitObject:
		k.kinds[id], k.changed = "commit", true
		return plumbing.CommitObject, nil, true
	case plumbing.TagObject:
		k.kinds[id], k.changed = "tag "+base64.StdEncoding.EncodeToString(b), true
		return plumbing.TagObject, b, true
	}
	k.kinds[id], k.changed = "other", true
	return typ, nil, true
}

// tagTarget returns what an annotated tag's bytes point to.
func tagTarget(w *objectWriter, id plumbing.Hash, b []byte) (plumbing.Hash, bool) {
	obj := &plumbing.MemoryObject{}
	obj.SetType(plumbing.TagObject)
	obj.Write(b)
	tag, err := object.DecodeTag(w.r.Git.Storer, obj)
	if err != nil {
		return plumbing.ZeroHash, false
	}
	return tag.Target, true
}
