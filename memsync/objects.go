package memsync

import (
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// maxBlob bounds a file of the memory tree read into memory; a larger
// one is refused as not orket's.
const maxBlob = 256 << 20

// readBlob returns a blob's content.
func readBlob(s storer.EncodedObjectStorer, h plumbing.Hash) ([]byte, error) {
	o, err := s.EncodedObject(plumbing.BlobObject, h)
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", h, err)
	}
	if o.Size() > maxBlob {
		return nil, fmt.Errorf("blob %s holds %d bytes, more than %d", h, o.Size(), maxBlob)
	}
	r, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b := make([]byte, 0, o.Size())
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		b = append(b, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return b, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read blob %s: %w", h, err)
		}
	}
}

// writeObject stores an object unless the store has it already.
func writeObject(s storer.EncodedObjectStorer, t plumbing.ObjectType, data []byte) (plumbing.Hash, error) {
	h := plumbing.ComputeHash(t, data)
	if s.HasEncodedObject(h) == nil {
		return h, nil
	}
	o := s.NewEncodedObject()
	o.SetType(t)
	o.SetSize(int64(len(data)))
	w, err := o.Writer()
	if err != nil {
		return h, err
	}
	if _, err := w.Write(data); err != nil {
		return h, err
	}
	if err := w.Close(); err != nil {
		return h, err
	}
	if _, err := s.SetEncodedObject(o); err != nil {
		return h, fmt.Errorf("store object: %w", err)
	}
	return h, nil
}

// A flat tree maps every file's path to its blob.
type flat map[string]plumbing.Hash

// flatten lists the files of the tree of commit c (zero: none).
func flatten(s storer.EncodedObjectStorer, c plumbing.Hash) (flat, plumbing.Hash, error) {
	files := flat{}
	if c.IsZero() {
		return files, plumbing.ZeroHash, nil
	}
	commit, err := object.GetCommit(s, c)
	if err != nil {
		return nil, plumbing.ZeroHash, fmt.Errorf("read memory commit %s: %w", c, err)
	}
	var walk func(dir string, h plumbing.Hash, depth int) error
	walk = func(dir string, h plumbing.Hash, depth int) error {
		if depth > 8 {
			return nil // deeper than any layout of the memory: not ours
		}
		t, err := object.GetTree(s, h)
		if err != nil {
			return fmt.Errorf("read memory tree %s: %w", h, err)
		}
		for _, e := range t.Entries {
			p := path.Join(dir, e.Name)
			switch {
			case e.Mode == filemode.Dir:
				if err := walk(p, e.Hash, depth+1); err != nil {
					return err
				}
			case e.Mode.IsFile():
				files[p] = e.Hash
			}
		}
		return nil
	}
	return files, commit.TreeHash, walk("", commit.TreeHash, 0)
}

// buildTree stores the trees of a flat list of files and returns the root
// tree's hash.
func buildTree(s storer.EncodedObjectStorer, files flat) (plumbing.Hash, error) {
	type dir struct {
		entries []object.TreeEntry
		subdirs map[string]*dir
	}
	root := &dir{subdirs: map[string]*dir{}}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		parts := strings.Split(p, "/")
		d := root
		for _, c := range parts[:len(parts)-1] {
			sub, ok := d.subdirs[c]
			if !ok {
				sub = &dir{subdirs: map[string]*dir{}}
				d.subdirs[c] = sub
			}
			d = sub
		}
		d.entries = append(d.entries, object.TreeEntry{Name: parts[len(parts)-1], Mode: filemode.Regular, Hash: files[p]})
	}
	var store func(d *dir) (plumbing.Hash, error)
	store = func(d *dir) (plumbing.Hash, error) {
		entries := d.entries
		for name, sub := range d.subdirs {
			h, err := store(sub)
			if err != nil {
				return h, err
			}
			entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
		}
		sort.Sort(object.TreeEntrySorter(entries))
		t := &object.Tree{Entries: entries}
		mem := &plumbing.MemoryObject{}
		if err := t.Encode(mem); err != nil {
			return plumbing.ZeroHash, err
		}
		r, _ := mem.Reader()
		data, _ := io.ReadAll(r)
		return writeObject(s, plumbing.TreeObject, data)
	}
	return store(root)
}

// signature is who the memory's commits are by.
func signature(now time.Time) object.Signature {
	return object.Signature{Name: "orket", Email: "orket@localhost", When: now}
}

// writeCommit stores a commit of tree on top of parents.
func writeCommit(s storer.EncodedObjectStorer, tree plumbing.Hash, parents []plumbing.Hash, msg string, now time.Time) (plumbing.Hash, error) {
	c := &object.Commit{Author: signature(now), Committer: signature(now), Message: msg, TreeHash: tree, ParentHashes: parents}
	mem := &plumbing.MemoryObject{}
	if err := c.Encode(mem); err != nil {
		return plumbing.ZeroHash, err
	}
	r, _ := mem.Reader()
	data, _ := io.ReadAll(r)
	return writeObject(s, plumbing.CommitObject, data)
}

// parentsOf returns a commit's parents.
func parentsOf(s storer.EncodedObjectStorer, c plumbing.Hash) ([]plumbing.Hash, error) {
	commit, err := object.GetCommit(s, c)
	if err != nil {
		return nil, err
	}
	return commit.ParentHashes, nil
}

// missing lists the objects of the memory commits from tip down to (not
// including) what the other side has, which has reports: every commit on
// the way and each of its trees' objects the other side lacks, children
// before parents (blobs, trees, then the commit), so a copy that stops
// half way never leaves a commit without its tree. stop is a commit the
// other side is known to have (its memory ref), whose tree's objects are
// not listed again.
func missing(s storer.EncodedObjectStorer, tip plumbing.Hash, has func(plumbing.Hash) bool) ([]plumbing.Hash, error) {
	var out []plumbing.Hash
	seen := map[plumbing.Hash]bool{}
	var commits []plumbing.Hash
	queue := []plumbing.Hash{tip}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if seen[c] || has(c) {
			continue
		}
		seen[c] = true
		commits = append(commits, c)
		ps, err := parentsOf(s, c)
		if err != nil {
			return nil, err
		}
		queue = append(queue, ps...)
	}
	var walk func(h plumbing.Hash) error
	walk = func(h plumbing.Hash) error {
		if seen[h] || has(h) {
			return nil
		}
		seen[h] = true
		t, err := object.GetTree(s, h)
		if err != nil {
			return err
		}
		for _, e := range t.Entries {
			if e.Mode == filemode.Dir {
				if err := walk(e.Hash); err != nil {
					return err
				}
			} else if !seen[e.Hash] && !has(e.Hash) {
				seen[e.Hash] = true
				out = append(out, e.Hash)
			}
		}
		out = append(out, h)
		return nil
	}
	// Oldest first, so parents are stored before their children.
	for i := len(commits) - 1; i >= 0; i-- {
		commit, err := object.GetCommit(s, commits[i])
		if err != nil {
			return nil, err
		}
		if err := walk(commit.TreeHash); err != nil {
			return nil, err
		}
		out = append(out, commits[i])
	}
	return out, nil
}

// copyObjects copies objects from one store to another, as they are
// stored (no re-encoding).
func copyObjects(dst, src storer.EncodedObjectStorer, hs []plumbing.Hash) error {
	for _, h := range hs {
		if dst.HasEncodedObject(h) == nil {
			continue
		}
		o, err := src.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return fmt.Errorf("read object %s: %w", h, err)
		}
		r, err := o.Reader()
		if err != nil {
			return err
		}
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			return fmt.Errorf("read object %s: %w", h, err)
		}
		if got, err := writeObject(dst, o.Type(), data); err != nil {
			return err
		} else if got != h {
			return fmt.Errorf("object %s reads back as %s", h, got)
		}
	}
	return nil
}
