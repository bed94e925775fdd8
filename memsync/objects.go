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
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
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

// A flat tree maps every file's path to its blob; the directories' trees
// are kept beside, under their path followed by a slash ("" + "/" for the
// root), so that a tree can be rebuilt reusing the ones that did not
// change.
type flat map[string]plumbing.Hash

func isDirKey(p string) bool { return strings.HasSuffix(p, "/") }

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
		files[dir+"/"] = h
		t, err := object.GetTree(s, h)
		if err != nil {
			return fmt.Errorf("read memory tree %s: %w", h, err)
		}
		// Checked before anything is read from it: a tree orket did not
		// write is refused whole, never half merged.
		if len(files)+len(t.Entries) > maxTreeEntries {
			return &damagedTree{Path: dir, What: fmt.Sprintf("more than %d entries", maxTreeEntries)}
		}
		for _, e := range t.Entries {
			if what := badEntry(e); what != "" {
				return &damagedTree{Path: dir, What: what}
			}
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

// maxTreeEntries bounds a memory tree: a year of daily shards of every
// log and ten versions of a thousand agents' guardrails are far fewer.
const maxTreeEntries = 1 << 20

// badEntry says what is wrong with a tree entry orket could not have
// written, or "" when nothing is.
func badEntry(e object.TreeEntry) string {
	switch {
	case e.Name == "" || e.Name == "." || e.Name == "..":
		return fmt.Sprintf("an entry named %q", e.Name)
	case strings.ContainsAny(e.Name, "/\x00"):
		return fmt.Sprintf("entry %q holds a path, not a name", e.Name)
	case e.Mode != filemode.Dir && e.Mode != filemode.Regular && e.Mode != filemode.Executable:
		return fmt.Sprintf("entry %q is a %s, not a file or a directory", e.Name, kindOf(e.Mode))
	}
	return ""
}

func kindOf(m filemode.FileMode) string {
	switch m {
	case filemode.Symlink:
		return "symlink"
	case filemode.Submodule:
		return "submodule"
	}
	return "mode " + m.String()
}

// buildTree stores the trees of a list of files and returns the root
// tree's hash. A directory whose files are those it has in base keeps
// base's tree.
func buildTree(s storer.EncodedObjectStorer, files, base flat) (plumbing.Hash, error) {
	type dir struct {
		entries []object.TreeEntry
		subdirs map[string]*dir
	}
	dirty := map[string]bool{}
	mark := func(p string) {
		for d := path.Dir(p); ; d = path.Dir(d) {
			if d == "." {
				d = ""
			}
			if dirty[d] {
				return
			}
			dirty[d] = true
			if d == "" {
				return
			}
		}
	}
	for p, h := range files {
		if !isDirKey(p) && base[p] != h {
			mark(p)
		}
	}
	for p := range base {
		if _, ok := files[p]; !ok && !isDirKey(p) {
			mark(p)
		}
	}
	root := &dir{subdirs: map[string]*dir{}}
	for p, h := range files {
		if isDirKey(p) {
			continue
		}
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
		d.entries = append(d.entries, object.TreeEntry{Name: parts[len(parts)-1], Mode: filemode.Regular, Hash: h})
	}
	var store func(name string, d *dir) (plumbing.Hash, error)
	store = func(name string, d *dir) (plumbing.Hash, error) {
		if h, ok := base[name+"/"]; ok && !dirty[name] {
			return h, nil
		}
		entries := d.entries
		for sub, sd := range d.subdirs {
			h, err := store(path.Join(name, sub), sd)
			if err != nil {
				return h, err
			}
			entries = append(entries, object.TreeEntry{Name: sub, Mode: filemode.Dir, Hash: h})
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
	return store("", root)
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

// packAbove is how many objects make a copy a pack of its own rather
// than loose objects, as git's receive.unpackLimit and fetch.unpackLimit
// decide: a loose object costs a file, many small packs slow every lookup.
const packAbove = 100

// copyObjects copies objects from one store to another: loose, or as one
// pack when there are many.
func copyObjects(dst, src storer.EncodedObjectStorer, hs []plumbing.Hash) error {
	if pw, ok := dst.(storer.PackfileWriter); ok && len(hs) > packAbove {
		var todo []plumbing.Hash
		for _, h := range hs {
			if dst.HasEncodedObject(h) != nil {
				todo = append(todo, h)
			}
		}
		if len(todo) > packAbove {
			w, err := pw.PackfileWriter()
			if err != nil {
				return err
			}
			if _, err := packfile.NewEncoder(w, src, false).Encode(todo, 0); err != nil {
				w.Close()
				return fmt.Errorf("write a pack: %w", err)
			}
			return w.Close()
		}
		hs = todo
	}
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
