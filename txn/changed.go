package txn

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/orket/orket/scope"
)

// A RevisionError reports a revision that does not resolve.
type RevisionError struct {
	Rev string
	Err error
}

func (e *RevisionError) Error() string { return fmt.Sprintf("revision %q: %v", e.Rev, e.Err) }
func (e *RevisionError) Unwrap() error { return e.Err }

// TreeOf returns the files of the commit rev names ("" is HEAD): path to
// mode and blob id. An unborn HEAD has no files.
func (r *Repo) TreeOf(rev string) (map[string]*File, error) {
	files := map[string]*File{}
	var id plumbing.Hash
	if rev == "" {
		ref, err := r.Git.Head()
		if errors.Is(err, plumbing.ErrReferenceNotFound) {
			return files, nil
		}
		if err != nil {
			return nil, &RevisionError{Rev: "HEAD", Err: err}
		}
		id = ref.Hash()
	} else {
		h, err := r.Git.ResolveRevision(plumbing.Revision(rev))
		if err != nil {
			return nil, &RevisionError{Rev: rev, Err: err}
		}
		id = *h
	}
	c, err := object.GetCommit(r.Git.Storer, id)
	if err != nil {
		return nil, &RevisionError{Rev: rev, Err: err}
	}
	t, err := c.Tree()
	if err != nil {
		return nil, err
	}
	w := object.NewTreeWalker(t, true, nil)
	defer w.Close()
	for {
		name, e, err := w.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if e.Mode == filemode.Dir || e.Mode == filemode.Submodule {
			continue
		}
		files[name] = &File{Mode: e.Mode, OID: e.Hash}
	}
	return files, nil
}

// ChangedSince returns the paths whose presence, mode or content differ
// between the commit rev names ("" is HEAD) and the working tree, and that
// commit's files.
func (r *Repo) ChangedSince(rev string) ([]string, map[string]*File, error) {
	base, err := r.TreeOf(rev)
	if err != nil {
		return nil, nil, err
	}
	cur, err := r.ScanWithOIDs()
	if err != nil {
		return nil, nil, err
	}
	// Under core.fileMode=false git does not see the executable bit.
	noFileMode := false
	if raw, err := r.config(); err == nil {
		noFileMode = strings.EqualFold(raw.Section("core").Option("filemode"), "false")
	}
	sameMode := func(a, b filemode.FileMode) bool {
		return a == b || noFileMode && a != filemode.Symlink && b != filemode.Symlink
	}
	var changed []string
	for p, f := range cur.Files {
		if scope.Reserved(p) {
			continue
		}
		if b := base[p]; b == nil || !sameMode(b.Mode, f.Mode) || b.OID != f.OID {
			changed = append(changed, p)
		}
	}
	for p := range base {
		if cur.Files[p] == nil && !scope.Reserved(p) {
			changed = append(changed, p)
		}
	}
	sort.Strings(changed)
	return changed, base, nil
}

// ScanWithOIDs scans the working tree (without .orket) and knows every
// file's blob id, reading only the files the index cannot vouch for.
//
// With an fsmonitor hook and a scan cache for it, only the directories
// where the hook saw changes are read (see hookScan); the cache is left
// as it is (the next snapshot updates it). The tree then holds .orket too.
func (r *Repo) ScanWithOIDs() (*Tree, error) {
	hook, _ := r.fsmonitorHook()
	var query *hookQuery
	if hook != nil {
		if h, token, _ := r.cacheHead(); h == hook.Command && token != "" {
			query = r.askHook(hook, false)
			defer query.wait()
		}
	}
	gs, err := r.readGitState()
	if err != nil {
		return nil, err
	}
	ii, err := r.indexOf(gs)
	if err != nil {
		return nil, err
	}
	sc, err := r.newScanner(ii)
	if err != nil {
		return nil, err
	}
	root, err := r.FS()
	if err != nil {
		return nil, err
	}
	cache := r.loadCache()
	if query != nil {
		cur, _, toHash, _, _, _, _, err := r.hookScan(query, ii, sc, cache, time.Now())
		if err == nil && cur != nil {
			return cur, hashAll(root, cur, toHash)
		}
		sc.rules, sc.w = nil, nil
	}
	sc.noOrket, sc.vouch = true, true
	cur, v, err := sc.scanVouched()
	if err != nil {
		return nil, err
	}
	return cur, hashAll(root, cur, cache.reuse(cur, v.unknown))
}
