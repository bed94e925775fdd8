package txn

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"

	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/orket/orket/internal/gitrepo"
)

// resetPaths puts the named paths back as base (a commit's files, from
// TreeOf) has them, in the working tree and in the index: files base has
// are rewritten, others removed. It is how a failed --worktree candidate
// is taken out.
func (r *Repo) resetPaths(paths []string, base map[string]*File) error {
	root, err := r.FS()
	if err != nil {
		return err
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
		g.Perm = defaultPerm(f.Mode)
		if err := r.writeBlob(root, p, &g); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return r.setIndexEntries(paths, base)
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
