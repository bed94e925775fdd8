package txn

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"golang.org/x/sys/unix"

	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/internal/gitrepo"
)

// resetPaths puts the named paths back as base has them in the working
// tree, and as index has them in the index (nil: as base): files base has
// are rewritten, others removed; a path index lacks leaves the index. It
// is how a failed --worktree candidate is taken out, and a rejected run's
// change. checkout, when set, names the paths whose base is a blob git
// converts on checkout (base a commit's files): they are written as git
// checks them out.
func (r *Repo) resetPaths(paths []string, base, index map[string]*File, checkout func(string) bool) error {
	root, err := r.FS()
	if err != nil {
		return err
	}
	if checkout != nil {
		// git reads the attributes that convert a file from the work
		// tree: the commit's .gitattributes go back first.
		paths = append([]string(nil), paths...)
		sort.SliceStable(paths, func(i, j int) bool { return isAttributes(paths[i]) && !isAttributes(paths[j]) })
	}
	var errs []error
	for _, p := range paths {
		f := base[p]
		if f == nil {
			if err := root.Remove(p); err != nil {
				errs = append(errs, err)
			}
			root.RemoveEmptyParents(p)
			continue
		}
		g := *f
		if g.Perm == 0 {
			g.Perm = permNow(root, p, f.Mode)
		}
		write := r.writeBlob
		if checkout != nil && g.Mode != filemode.Symlink && checkout(p) {
			write = r.writeCheckedOut
		}
		if err := write(root, p, &g); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if index == nil {
		index = base
	}
	return r.setIndexEntries(paths, index)
}

// permNow is the permission to write p back with when all that is known
// of its earlier state is git's (which keeps only the executable bit): the
// bits the file has now, with the executable bits mode says, so that a
// 0600 credentials file stays 0600; the default bits when it is not a
// regular file now.
func permNow(root *fsroot.Root, p string, mode filemode.FileMode) uint32 {
	st, err := root.Lstat(p)
	if err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || mode == filemode.Symlink {
		return defaultPerm(mode)
	}
	perm := st.Mode & 0o666
	if mode == filemode.Executable {
		perm |= (perm & 0o444) >> 2
	}
	return perm
}

// setIndexEntries makes the index entries of paths match base (removing
// those base lacks) and writes the index with git's lock protocol.
func (r *Repo) setIndexEntries(paths []string, base map[string]*File) error {
	file := filepath.Join(r.GitDir, "index")
	idx := &index.Index{Version: 2}
	if b, err := os.ReadFile(file); err == nil {
		if err := index.NewDecoder(bytes.NewReader(b)).Decode(idx); err != nil {
			return err
		}
	}
	touched := map[string]bool{}
	for _, p := range paths {
		touched[p] = true
	}
	var kept []*index.Entry
	for _, e := range idx.Entries {
		if !touched[e.Name] {
			kept = append(kept, e)
		}
	}
	for _, p := range paths {
		if f := base[p]; f != nil {
			kept = append(kept, &index.Entry{Name: p, Mode: f.Mode, Hash: f.OID})
		}
	}
	sort.Slice(kept, func(i, j int) bool {
		if kept[i].Name != kept[j].Name {
			return kept[i].Name < kept[j].Name
		}
		return kept[i].Stage < kept[j].Stage
	})
	idx.Entries = kept
	idx.Cache = nil // the cached trees no longer match
	idx.ResolveUndo = nil
	var buf bytes.Buffer
	if err := index.NewEncoder(&buf).Encode(idx); err != nil {
		return err
	}
	return gitrepo.WriteLocked(context.Background(), file, buf.Bytes(), gitrepo.LockOptions{})
}
