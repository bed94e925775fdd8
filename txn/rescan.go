package txn

import (
	"maps"
	"sort"
)

// partialScan compares the tree with the snapshot by rescanning only the
// directories the change journal (inotify or an fsmonitor hook) reported:
// a dirty directory is listed again (its files stat'ed), and every
// directory under it that is new, was moved in, or was not part of the
// snapshot's tree is scanned whole. Directories that vanished take their
// snapshot content with them.
//
// It returns two trees restricted to the same region, the part of the
// work tree it looked at: what the snapshot had there (pre) and what is
// there now (cur). Outside the region nothing changed, so comparing the
// two is comparing the whole trees, at the cost of the change rather
// than of the repository.
func (r *Repo) partialScan(s *Snapshot, idx []*indexInfo, dirty, fresh map[string]bool) (pre, cur *Tree, err error) {
	sc, err := r.snapshotScanner(s, idx...)
	if err != nil {
		return nil, nil, err
	}
	return regionScan(sc, s.Pre, s.layout(), dirty, fresh)
}

// regionScan is partialScan against any base tree and its layout.
func regionScan(sc *scanner, base *Tree, l *layout, dirty, fresh map[string]bool) (pre, cur *Tree, err error) {
	if err := sc.open(); err != nil {
		return nil, nil, err
	}
	defer sc.close()
	pre, cur = newTree(0, 0), newTree(0, 0)
	pre.Start, cur.Start = base.Start, base.Start
	included := map[string]bool{} // directories whose snapshot content is in pre; true: deep
	pre.region = included
	// include puts what the snapshot had directly in d (and below it,
	// when deep) into pre.
	var include func(d string, deep bool)
	include = func(d string, deep bool) {
		if was, ok := included[d]; ok && (was || !deep) {
			return
		}
		if _, ok := included[d]; !ok {
			if base.Dirs[d] {
				pre.Dirs[d] = true
			}
			if base.Empty[d] {
				pre.Empty[d] = true
			}
			for _, p := range l.byDir[d] {
				if f := base.Files[p]; f != nil {
					pre.Files[p] = f
					if base.untracked[p] {
						pre.untracked[p] = true
					}
				}
			}
			if j, ok := base.jobs[d]; ok {
				pre.jobs[d] = j
			}
			for _, p := range l.ignoredByDir[d] {
				pre.Ignored[p] = base.Ignored[p]
			}
			for _, g := range l.gitlinksByDir[d] {
				pre.Gitlinks[g] = true
			}
		}
		included[d] = deep
		if deep {
			for _, c := range l.childDirs[d] {
				include(c, true)
			}
		}
	}
	type item struct {
		job  dirJob
		deep bool
	}
	var queue []item
	for _, d := range sortedKeys(dirty) {
		if j, ok := base.jobs[d]; ok {
			queue = append(queue, item{j, false})
		}
	}
	var sw scanWorker
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		d := it.job.rel
		include(d, it.deep)
		var children []dirJob
		res := &dirResult{job: it.job}
		res.kind, err = sc.dir(&sw, it.job, res, func(c dirJob) { children = append(children, c) })
		if err != nil {
			return nil, nil, err
		}
		cur.add(res)
		if res.kind == dirGone {
			// Gone, or a submodule now: nothing of it is part of the tree.
			include(d, true)
			continue
		}
		listed := map[string]bool{}
		for _, c := range children {
			listed[c.rel] = true
			if base.Gitlinks[c.rel] && sc.gitlink(c.rel) {
				cur.Gitlinks[c.rel] = true
			}
			if _, known := base.jobs[c.rel]; it.deep || fresh[c.rel] || !known {
				queue = append(queue, item{c, true})
			}
		}
		if !it.deep {
			for _, c := range l.childDirs[d] {
				if !listed[c] {
					include(c, true) // removed, replaced by a file, or now ignored
				}
			}
		}
	}
	return pre, cur, nil
}

// A layout indexes a tree by directory.
type layout struct {
	byDir         map[string][]string // the files directly in each directory
	childDirs     map[string][]string // the scanned subdirectories of each directory
	ignoredByDir  map[string][]string // the ignored entries directly in each directory
	gitlinksByDir map[string][]string // the submodules directly in each directory
}

// layout indexes the snapshot's tree by directory, once.
func (s *Snapshot) layout() *layout {
	s.layoutOnce.Do(func() { s.lay = newLayout(s.Pre) })
	return s.lay
}

func newLayout(t *Tree) *layout {
	l := &layout{byDir: t.byDir, childDirs: map[string][]string{}, ignoredByDir: map[string][]string{}, gitlinksByDir: map[string][]string{}}
	if l.byDir == nil {
		l.byDir = map[string][]string{}
		for p := range t.Files {
			d := parentDir(p)
			l.byDir[d] = append(l.byDir[d], p)
		}
	}
	dirs := t.Dirs
	if len(t.jobs) > 0 {
		dirs = make(map[string]bool, len(t.jobs))
		for d := range t.jobs {
			if d != "" {
				dirs[d] = true
			}
		}
	}
	for d := range dirs {
		parent := parentDir(d)
		l.childDirs[parent] = append(l.childDirs[parent], d)
	}
	for _, c := range l.childDirs {
		sort.Strings(c)
	}
	for p := range t.Ignored {
		l.ignoredByDir[parentDir(p)] = append(l.ignoredByDir[parentDir(p)], p)
	}
	for g := range t.Gitlinks {
		l.gitlinksByDir[parentDir(g)] = append(l.gitlinksByDir[parentDir(g)], g)
	}
	return l
}

// apply makes t, the tree pre was restricted from, the tree as it is now:
// what regionScan found (cur) replaces what t had in the region.
func (t *Tree) apply(pre, cur *Tree) {
	for p := range pre.Files {
		delete(t.Files, p)
		delete(t.Linked, p)
		delete(t.untracked, p)
	}
	for p := range pre.Ignored {
		delete(t.Ignored, p)
	}
	for g := range pre.Gitlinks {
		delete(t.Gitlinks, g)
	}
	for d := range pre.region {
		delete(t.Dirs, d)
		delete(t.Empty, d)
		delete(t.jobs, d)
		delete(t.byDir, d)
	}
	for d := range pre.region {
		if _, ok := cur.jobs[d]; !ok {
			delete(t.Ignores, d)
		}
	}
	maps.Copy(t.Files, cur.Files)
	maps.Copy(t.Ignored, cur.Ignored)
	maps.Copy(t.jobs, cur.jobs)
	maps.Copy(t.byDir, cur.byDir)
	maps.Copy(t.Ignores, cur.Ignores)
	for _, set := range []struct{ to, from map[string]bool }{
		{t.Linked, cur.Linked}, {t.untracked, cur.untracked}, {t.Gitlinks, cur.Gitlinks}, {t.Dirs, cur.Dirs}, {t.Empty, cur.Empty},
	} {
		for p := range set.from {
			set.to[p] = true
		}
	}
}
