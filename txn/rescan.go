package txn

import (
	"sort"
)

// partialScan builds the current tree from the snapshot's and a rescan of
// only the directories the change journal reported: a dirty directory is
// listed again (its files stat'ed), and every directory under it that is
// new, was moved in, or was not part of the snapshot's tree is scanned
// whole. Directories that vanished take their snapshot content with them.
func (r *Repo) partialScan(s *Snapshot, idx []*indexInfo, dirty, fresh map[string]bool) (*Tree, error) {
	pre := s.Pre
	sc, err := r.snapshotScanner(s, idx...)
	if err != nil {
		return nil, err
	}
	byDir, childDirs := s.layout()
	cur := &Tree{Files: make(map[string]*File, len(pre.Files)), Dirs: make(map[string]bool, len(pre.Dirs)),
		Empty: make(map[string]bool, len(pre.Empty)), Start: pre.Start, jobs: pre.jobs,
		Ignores: pre.Ignores, Gitlinks: map[string]bool{}, Linked: map[string]bool{}, Ignored: make(map[string]*File, len(pre.Ignored))}
	for p, f := range pre.Ignored {
		cur.Ignored[p] = f
	}
	byIgnoredDir := map[string][]string{}
	for p := range pre.Ignored {
		byIgnoredDir[parentDir(p)] = append(byIgnoredDir[parentDir(p)], p)
	}
	for d := range pre.Gitlinks {
		cur.Gitlinks[d] = true
	}
	for p := range pre.Linked {
		cur.Linked[p] = true
	}
	for p, f := range pre.Files {
		cur.Files[p] = f
	}
	for d := range pre.Dirs {
		cur.Dirs[d] = true
	}
	for d := range pre.Empty {
		cur.Empty[d] = true
	}
	// cover forgets what the snapshot had in a directory (and below it,
	// when deep), before the rescan says what is there now.
	var cover func(d string, deep bool)
	cover = func(d string, deep bool) {
		for _, p := range byDir[d] {
			delete(cur.Files, p)
		}
		for g := range pre.Gitlinks {
			if parentDir(g) == d {
				delete(cur.Gitlinks, g)
			}
		}
		for _, p := range byIgnoredDir[d] {
			delete(cur.Ignored, p)
		}
		delete(cur.Empty, d)
		if deep {
			if d != "" {
				delete(cur.Dirs, d)
			}
			for _, c := range childDirs[d] {
				cover(c, true)
			}
		}
	}
	type item struct {
		job  dirJob
		deep bool
	}
	var queue []item
	for _, d := range sortedKeys(dirty) {
		if j, ok := pre.jobs[d]; ok {
			queue = append(queue, item{j, false})
		}
	}
	found := map[string]*File{}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		d := it.job.rel
		cover(d, it.deep)
		var children []dirJob
		var info dirInfo
		kind, err := sc.dir(it.job, found, func(c dirJob) { children = append(children, c) }, &info)
		if err != nil {
			return nil, err
		}
		for _, p := range info.linked {
			cur.Linked[p] = true
		}
		for p, f := range info.ignored {
			cur.Ignored[p] = f
		}
		if info.gitlink {
			cur.Gitlinks[d] = true
		}
		if kind == dirIgnored {
			// Gone, or a submodule: nothing of it is part of the tree.
			cover(d, true)
			continue
		}
		if d != "" {
			cur.Dirs[d] = true
		}
		if kind == dirEmpty && d != "" {
			cur.Empty[d] = true
		}
		listed := map[string]bool{}
		for _, c := range children {
			listed[c.rel] = true
			if pre.Gitlinks[c.rel] && sc.gitlink(c.rel) {
				cur.Gitlinks[c.rel] = true
			}
			if it.deep || fresh[c.rel] || !pre.Dirs[c.rel] {
				queue = append(queue, item{c, true})
			}
		}
		if !it.deep {
			for _, c := range childDirs[d] {
				if !listed[c] {
					cover(c, true) // removed, replaced by a file, or now ignored
				}
			}
		}
	}
	for p, f := range found {
		cur.Files[p] = f
	}
	return cur, nil
}

// layout indexes the snapshot's tree by directory: the files directly in
// each directory, and each directory's subdirectories.
func (s *Snapshot) layout() (byDir, childDirs map[string][]string) {
	s.layoutOnce.Do(func() {
		s.byDir = map[string][]string{}
		s.childDirs = map[string][]string{}
		for p := range s.Pre.Files {
			d := parentDir(p)
			s.byDir[d] = append(s.byDir[d], p)
		}
		for d := range s.Pre.Dirs {
			parent := parentDir(d)
			s.childDirs[parent] = append(s.childDirs[parent], d)
		}
		for _, l := range s.childDirs {
			sort.Strings(l)
		}
	})
	return s.byDir, s.childDirs
}
