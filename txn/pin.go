package txn

import (
	"io"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/orket/orket/internal/gitrepo"
	"github.com/orket/orket/internal/lazyre"
)

// A snapshot keeps reachable, from its own commit, everything a revert
// needs, so that no gc (one the edit runs, or git's own gc --auto) can
// remove it:
//
//   - the index's blobs, as the tree the index would be written as
//     (reusing git's cache tree where it is valid, so a clean index costs
//     no hashing);
//   - every commit a ref or HEAD names (branches, tags, refs/stash and
//     every stash entry, ORIG_HEAD, MERGE_HEAD...), as parents of the
//     snapshot commit;
//   - annotated tag objects, whose bytes are kept as blobs so a revert
//     can write a pruned one back;
//   - the bytes of git's own files (HEAD, refs, the index, config, hooks)
//     as blobs.

// indexTree writes the tree objects of the index's stage-0 entries (where
// missing) and returns the root tree's id.
func (w *objectWriter) indexTree(ii *indexInfo) (plumbing.Hash, error) {
	clean := true // no conflicts or intent-to-add entries: the cache tree counts hold
	for i := range ii.list {
		if e := &ii.list[i]; e.Stage != 0 || e.IntentToAdd {
			clean = false
			break
		}
	}
	if clean {
		// The usual case: the entries are the list itself, and a valid
		// cache tree names the whole tree without hashing anything.
		return w.dirTree(ii.list, "", ii.cache)
	}
	var list []indexEntry
	for _, e := range ii.list {
		if e.Stage == 0 && !e.IntentToAdd {
			list = append(list, e)
		}
	}
	return w.dirTree(list, "", nil)
}

// dirTree writes the tree of the entries below prefix (sorted, every name
// starting with prefix).
func (w *objectWriter) dirTree(list []indexEntry, prefix string, ct *gitrepo.CacheTree) (plumbing.Hash, error) {
	if ct != nil && ct.Entries == len(list) && w.has(ct.ID) {
		return ct.ID, nil
	}
	t := &object.Tree{}
	for i := 0; i < len(list); {
		rest := list[i].Name[len(prefix):]
		dir, _, nested := strings.Cut(rest, "/")
		if !nested {
			t.Entries = append(t.Entries, object.TreeEntry{Name: rest, Mode: list[i].Mode, Hash: list[i].Hash})
			i++
			continue
		}
		k := i
		for k < len(list) && strings.HasPrefix(list[k].Name[len(prefix):], dir+"/") {
			k++
		}
		var child *gitrepo.CacheTree
		if ct != nil {
			child = ct.Children[dir]
		}
		id, err := w.dirTree(list[i:k], prefix+dir+"/", child)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		t.Entries = append(t.Entries, object.TreeEntry{Name: dir, Mode: filemode.Dir, Hash: id})
		i = k
	}
	sortTree(t)
	return w.encode(t)
}

// sortTree orders entries as git does: as if directory names ended in /.
func sortTree(t *object.Tree) {
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(t.Entries, func(i, j int) bool { return key(t.Entries[i]) < key(t.Entries[j]) })
}

var objectID = lazyre.New(`\b[0-9a-f]{40}\b`)

// pins sorts the objects git's own files name (refs, HEAD, packed-refs,
// the stash's reflog, an operation in progress) into commits to keep as
// parents and annotated tags to keep as blobs. Objects that do not exist
// are skipped.
func (w *objectWriter) pins(gs *gitState) (commits []plumbing.Hash, tags map[plumbing.Hash][]byte) {
	tags = map[plumbing.Hash][]byte{}
	seen := map[plumbing.Hash]bool{}
	kinds := w.r.loadKinds()
	defer kinds.save()
	var visit func(id plumbing.Hash, depth int)
	visit = func(id plumbing.Hash, depth int) {
		if seen[id] || depth > 10 {
			return
		}
		seen[id] = true
		t, b, ok := w.kind(kinds, id)
		if !ok {
			return
		}
		switch t {
		case plumbing.CommitObject:
			commits = append(commits, id)
		case plumbing.TagObject:
			tags[id] = b
			if target, ok := tagTarget(w, id, b); ok {
				visit(target, depth+1)
			}
		}
	}
	for _, k := range sortedKeys(gs.files) {
		if k == inGitDir+"index" {
			continue
		}
		for _, m := range objectID().FindAll(gs.files[k], -1) {
			visit(plumbing.NewHash(string(m)), 0)
		}
	}
	return commits, tags
}

func readAll(obj plumbing.EncodedObject) ([]byte, error) {
	rd, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}
