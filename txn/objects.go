package txn

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"golang.org/x/sys/unix"

	"github.com/orket/orket/internal/gitrepo"
	"github.com/orket/orket/internal/testhook"
)

// objectWriter writes loose objects into the repository's object store
// itself: streamed (a file of any size costs a buffer, not its size in
// memory). sync makes what it wrote durable, and only that: each new
// object file fsynced (all at once, so the file system commits them
// together), then their directories, never the whole file system.
// Objects that exist are not written again, but freshened (see has).
type objectWriter struct {
	r     *Repo
	dirs  map[string]bool // directories written into since the last sync
	files []string        // files written since the last sync: objects (and a snapshot's link to the index)
	// packIdx are the store's pack indexes (see inPacks); packsKnown
	// once listed, packsReadable if orket can answer from them alone.
	packIdx                   []string
	packsKnown, packsReadable bool
	freshPacks                map[string]bool // packs freshened already
}

func newObjectWriter(r *Repo) *objectWriter { return &objectWriter{r: r, dirs: map[string]bool{}} }

func (w *objectWriter) objectsDir() string { return w.r.objectsDir() }

// zlibWriters keeps compressors: each holds about a megabyte of tables.
var zlibWriters = sync.Pool{New: func() any {
	zw, _ := zlib.NewWriterLevel(io.Discard, zlib.BestSpeed)
	return zw
}}

// has reports whether the store holds id, and freshens what holds it (the
// loose object, or its pack) as git does with an object it would have
// written: a git gc running meanwhile (git gc --auto, started by a
// commit) may have judged reachability before the objects that will
// refer to this one existed, and its prune deletes, as it goes, the
// unreachable objects whose file is older than gc.pruneExpire. An object
// an earlier, dropped snapshot wrote (a run record, a file that came
// back) is such an object; with a fresh time it stays.
func (w *objectWriter) has(id plumbing.Hash) bool {
	if w.r.freshenLoose(id) {
		return true
	}
	return w.inPacks(id)
}

// freshenLoose sets the time of the loose object id to now and reports
// whether it exists. One that orket may not touch (another user's) is
// there all the same.
func (r *Repo) freshenLoose(id plumbing.Hash) bool {
	p := r.loosePath(id)
	err := unix.UtimesNanoAt(unix.AT_FDCWD, p, nil, 0)
	if err == nil {
		return true
	}
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return false
	}
	_, err = os.Stat(p)
	return err == nil
}

// freshenPack sets the time of the pack whose index is idx to now, once.
func (w *objectWriter) freshenPack(idx string) {
	if w.freshPacks[idx] {
		return
	}
	if w.freshPacks == nil {
		w.freshPacks = map[string]bool{}
	}
	w.freshPacks[idx] = true
	unix.UtimesNanoAt(unix.AT_FDCWD, strings.TrimSuffix(idx, ".idx")+".pack", nil, 0)
}

func (r *Repo) loosePath(id plumbing.Hash) string {
	h := id.String()
	return filepath.Join(r.CommonDir, "objects", h[:2], h[2:])
}

func (w *objectWriter) blob(b []byte) (plumbing.Hash, error) {
	id := blobHash(b)
	if w.has(id) {
		return id, nil
	}
	return w.write(plumbing.BlobObject, int64(len(b)), bytes.NewReader(b))
}

// write streams an object of size bytes from rd into the store and
// returns its id. rd yielding another size is an error (errChanged).
func (w *objectWriter) write(t plumbing.ObjectType, size int64, rd io.Reader) (plumbing.Hash, error) {
	tmp, err := os.CreateTemp(w.objectsDir(), "tmp_obj_orket_")
	if err != nil {
		return plumbing.ZeroHash, err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := sha1.New()
	zw := zlibWriters.Get().(*zlib.Writer)
	defer zlibWriters.Put(zw)
	zw.Reset(tmp)
	mw := io.MultiWriter(h, zw)
	if _, err := io.WriteString(mw, t.String()+" "+strconv.FormatInt(size, 10)+"\x00"); err != nil {
		return plumbing.ZeroHash, err
	}
	n, err := io.Copy(mw, rd)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if n != size {
		return plumbing.ZeroHash, errChanged(fmt.Sprintf("object of %d bytes read as %d", size, n))
	}
	if err := zw.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := tmp.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	var id plumbing.Hash
	copy(id[:], h.Sum(nil))
	final := w.r.loosePath(id)
	if w.r.freshenLoose(id) {
		// Written meanwhile: that copy stands, made fresh.
		os.Remove(tmp.Name())
		done = true
		return id, nil
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := os.Chmod(tmp.Name(), 0o444); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return plumbing.ZeroHash, err
	}
	done = true
	w.dirs[filepath.Dir(final)] = true
	w.files = append(w.files, final)
	testhook.Point("object-written")
	return id, nil
}

// sync makes the objects written since the last sync durable: their
// files, then the directories they were renamed into.
func (w *objectWriter) sync() error {
	files := w.files
	for d := range w.dirs {
		files = append(files, d)
	}
	if err := syncAll(files[:len(w.files)]); err != nil {
		return err
	}
	if err := syncAll(files[len(w.files):]); err != nil {
		return err
	}
	w.dirs, w.files = map[string]bool{}, nil
	return nil
}

// syncAll fsyncs files (or directories) concurrently: a journaling file
// system commits fsyncs that wait together in one go.
func syncAll(paths []string) error {
	if len(paths) <= 1 {
		for _, p := range paths {
			if err := syncDir(p); err != nil {
				return err
			}
		}
		return nil
	}
	errs := make([]error, len(paths))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i, p := range paths {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			errs[i] = syncDir(p)
			<-sem
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// storeFile stores a working-tree file as a blob, streamed, and checks it
// still has the content it was hashed with.
func (w *objectWriter) storeFile(p string, f *File) error {
	if w.has(f.OID) {
		return nil
	}
	root, err := w.r.FS()
	if err != nil {
		return err
	}
	var id plumbing.Hash
	if f.Mode == filemode.Symlink {
		t, err := root.Readlink(p)
		if err != nil {
			return err
		}
		id, err = w.blob([]byte(t))
		if err != nil {
			return err
		}
	} else {
		fh, err := root.Open(p)
		if err != nil {
			return err
		}
		defer fh.Close()
		fi, err := fh.Stat()
		if err != nil {
			return err
		}
		if id, err = w.write(plumbing.BlobObject, fi.Size(), fh); err != nil {
			if errors.As(err, new(errChanged)) {
				return errChanged(p)
			}
			return err
		}
	}
	if id != f.OID {
		return errChanged(p)
	}
	return nil
}

// encode writes an object go-git can encode (a tree, a commit).
func (w *objectWriter) encode(o interface {
	Encode(plumbing.EncodedObject) error
}) (plumbing.Hash, error) {
	obj := &plumbing.MemoryObject{}
	if err := o.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	if w.has(obj.Hash()) {
		return obj.Hash(), nil
	}
	rd, err := obj.Reader()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer rd.Close()
	return w.write(obj.Type(), obj.Size(), rd)
}

// openBlob streams a blob's content: a loose object is read directly (in
// bounded memory, whatever its size); a packed one by orket when it can
// (up to maxPackedObject, in memory, see packread.go), else through go-git.
func (r *Repo) openBlob(id plumbing.Hash) (io.ReadCloser, error) {
	f, err := os.Open(r.loosePath(id))
	if err == nil {
		zr, err := zlib.NewReader(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("object %s: %w", id, err)
		}
		hdr := make([]byte, 0, 32)
		one := make([]byte, 1)
		for {
			if _, err := io.ReadFull(zr, one); err != nil {
				f.Close()
				return nil, fmt.Errorf("object %s: %w", id, err)
			}
			if one[0] == 0 {
				break
			}
			hdr = append(hdr, one[0])
			if len(hdr) > 30 {
				f.Close()
				return nil, fmt.Errorf("object %s: malformed header", id)
			}
		}
		if !strings.HasPrefix(string(hdr), "blob ") {
			f.Close()
			return nil, fmt.Errorf("object %s is not a blob", id)
		}
		return struct {
			io.Reader
			io.Closer
		}{zr, f}, nil
	}
	if b, ok := r.packedBlob(id); ok {
		return io.NopCloser(bytes.NewReader(b)), nil
	}
	obj, err := r.blob(id)
	if err != nil {
		return nil, err
	}
	return obj.Reader()
}

type treeItem struct {
	mode filemode.FileMode
	id   plumbing.Hash
}

// tree writes nested tree objects for a set of slash paths below prefix.
func (w *objectWriter) tree(items map[string]treeItem, prefix string) (plumbing.Hash, error) {
	direct := map[string]treeItem{}
	sub := map[string]map[string]treeItem{}
	for p, it := range items {
		first, rest, nested := strings.Cut(p, "/")
		if !nested {
			direct[first] = it
			continue
		}
		if sub[first] == nil {
			sub[first] = map[string]treeItem{}
		}
		sub[first][rest] = it
	}
	for name, m := range sub {
		id, err := w.tree(m, path.Join(prefix, name))
		if err != nil {
			return plumbing.ZeroHash, err
		}
		direct[name] = treeItem{mode: filemode.Dir, id: id}
	}
	t := &object.Tree{}
	for name, it := range direct {
		t.Entries = append(t.Entries, object.TreeEntry{Name: name, Mode: it.mode, Hash: it.id})
	}
	// git orders tree entries as if directory names ended in "/".
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(t.Entries, func(i, j int) bool { return key(t.Entries[i]) < key(t.Entries[j]) })
	return w.encode(t)
}

// BlobSize returns a blob's size without reading its content (a loose
// object's header; a packed one's entries, see packedInfo, or go-git's
// reader).
func (r *Repo) BlobSize(id plumbing.Hash) (int64, error) {
	if f, err := os.Open(r.loosePath(id)); err == nil {
		defer f.Close()
		zr, err := zlib.NewReader(f)
		if err != nil {
			return 0, err
		}
		hdr := make([]byte, 32)
		n, _ := io.ReadFull(zr, hdr)
		i := bytes.IndexByte(hdr[:n], 0)
		_, size, ok := strings.Cut(string(hdr[:max(i, 0)]), " ")
		if i < 0 || !ok {
			return 0, fmt.Errorf("object %s: malformed header", id)
		}
		return strconv.ParseInt(size, 10, 64)
	}
	if typ, size, ok := r.packedInfo(id); ok && typ == plumbing.BlobObject {
		return size, nil
	}
	obj, err := r.blob(id)
	if err != nil {
		return 0, err
	}
	return obj.Size(), nil
}

// StoreFile stores the working-tree file at p as a blob, streamed and
// fsynced, and returns its id.
func (r *Repo) StoreFile(p string) (plumbing.Hash, error) {
	w := newObjectWriter(r)
	id, err := w.storePath(p)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return id, w.sync()
}

// storePath writes the working-tree file at p as a blob, streamed (not
// yet synced), and returns its id.
func (w *objectWriter) storePath(p string) (plumbing.Hash, error) {
	root, err := w.r.FS()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	f, err := root.Open(p)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return w.write(plumbing.BlobObject, fi.Size(), f)
}

// KeptRefPrefix is where blobs that a kept patch refers to stay reachable.
const KeptRefPrefix = "refs/orket/kept/"

// KeepBlobs keeps blobs reachable under refs/orket/kept/<runID> (a commit
// whose tree names them by path), durably: a patch that refers to them by
// id applies with git apply as long as the ref is there. ids names blobs
// in the store; files names working-tree files (by their path in the
// tree, to their path in the working tree) to store as blobs on the way,
// made durable with the tree and the commit, all at once.
func (r *Repo) KeepBlobs(runID string, ids map[string]plumbing.Hash, files map[string]string) error {
	if len(ids) == 0 && len(files) == 0 {
		return nil
	}
	w := newObjectWriter(r)
	items := map[string]treeItem{}
	for name, id := range ids {
		items[name] = treeItem{mode: filemode.Regular, id: id}
	}
	for name, p := range files {
		id, err := w.storePath(p)
		if err != nil {
			return err
		}
		items[name] = treeItem{mode: filemode.Regular, id: id}
	}
	tree, err := w.tree(items, "")
	if err != nil {
		return err
	}
	sig := object.Signature{Name: "orket", Email: "orket@localhost"}
	id, err := w.encode(&object.Commit{Author: sig, Committer: sig, TreeHash: tree,
		Message: "orket: the blobs the change of run " + runID + " refers to\n"})
	if err != nil {
		return err
	}
	if err := w.sync(); err != nil {
		return err
	}
	return gitrepo.WriteRef(r.CommonDir, KeptRefPrefix+runID, id, gitrepo.RefLog{Msg: "orket: kept change of run " + runID, GitDir: r.GitDir})
}

// DropKept forgets the blobs a run's kept patch refers to.
func (r *Repo) DropKept(runID string) error { return r.dropSnapshot(KeptRefPrefix + runID) }
