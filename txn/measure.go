package txn

import (
	"bytes"
	"sort"
)

// A Change is what happened to a repository since a snapshot.
type Change struct {
	// IgnoredChanged lists ignored files (and directories, "dir/") that
	// existed and were deleted or rewritten; IgnoredCreated the new ones.
	IgnoredChanged, IgnoredCreated []string
	// Paths is the touch set: every file added, modified, deleted or
	// whose mode changed, repository-relative and sorted.
	Paths []string
	// Git lists the git files that moved (.git/HEAD, .git/refs/heads/x,
	// .git/index): allowed to an edit, undone by a revert.
	Git []string
	// Guarded lists writes to git's configuration, hooks and info files:
	// never allowed.
	Guarded []string
	// Scan says how the tree was looked at.
	Scan ScanInfo
}

// measure compares the repository with the snapshot.
func (r *Repo) measure(s *Snapshot) (*Change, error) {
	gs, err := r.readGitStateSince(s.git)
	if err != nil {
		return nil, err
	}
	guard, err := r.readGuardState()
	if err != nil {
		return nil, err
	}
	pre, cur, info, err := r.scanNow(s, gs)
	if err != nil {
		return nil, err
	}
	paths, err := r.diffTree(pre, cur)
	if err != nil {
		return nil, err
	}
	c := &Change{Paths: append(paths, dirChanges(s.Pre, pre, cur)...), Scan: info}
	sort.Strings(c.Paths)
	c.IgnoredChanged, c.IgnoredCreated = ignoredChanges(pre, cur)
	for _, k := range diffFiles(s.git.files, gs.files) {
		c.Git = append(c.Git, displayKey(k))
	}
	for _, k := range s.guard.diff(guard) {
		c.Guarded = append(c.Guarded, displayKey(k))
	}
	if !r.snapshotRefIntact(s) {
		c.Guarded = append(c.Guarded, ".git/"+s.Ref)
	}
	if r.cacheChanged(s.cacheStat) {
		c.Guarded = append(c.Guarded, ".git/orket/scan-cache")
	}
	return c, nil
}

// scanNow looks at the tree as it is now, counting as tracked what either
// the snapshot's index or the current one names. It returns the
// snapshot's tree and the current one, both restricted to the part of the
// work tree it looked at (see partialScan); without a change journal that
// can vouch for the rest, that is all of it.
func (r *Repo) scanNow(s *Snapshot, gs *gitState) (pre, cur *Tree, info ScanInfo, err error) {
	idx := []*indexInfo{s.idx}
	if b, ok := gs.files[inGitDir+"index"]; ok && !bytes.Equal(b, s.git.files[inGitDir+"index"]) {
		if now, err := parseIndex(b, s.Pre.Start); err == nil {
			idx = append(idx, now)
		}
	}
	if dirty, fresh, how, ok := s.changed(); ok {
		// A write through another hard link of a file makes no event
		// in the file's directory: those directories are read again.
		for p := range s.Pre.Linked {
			dirty[parentDir(p)] = true
		}
		pre, cur, err := r.partialScan(s, idx, dirty, fresh)
		if err != nil || !newLinkToOld(s.Pre, cur) {
			return pre, cur, ScanInfo{How: how, Dirs: len(cur.jobs)}, err
		}
		// The edit linked a new name to a file of the tree: a write
		// through it made no event where the old name lives. Scan whole.
		s.stopWatching("a file of the tree got a new name (a hard link)")
	}
	sc, err := r.snapshotScanner(s, idx...)
	if err != nil {
		return nil, nil, info, err
	}
	cur, err = sc.scan()
	if err != nil {
		return nil, nil, info, err
	}
	return s.Pre, cur, ScanInfo{How: "scan", Why: s.unwatched, Dirs: len(cur.jobs)}, nil
}

// dirChanges names what changed that is not a file: an empty directory
// made or removed ("dir/"), a submodule's directory gone (its path). pre
// and cur are restricted to the same region (see partialScan); snap is
// the whole snapshot.
func dirChanges(snap, pre, cur *Tree) []string {
	var out []string
	for d := range cur.Empty {
		if !snap.Dirs[d] {
			out = append(out, d+"/")
		}
	}
	for d := range pre.Empty {
		if !cur.Dirs[d] {
			out = append(out, d+"/")
		}
	}
	for d := range pre.Gitlinks {
		if !cur.Gitlinks[d] {
			out = append(out, d)
		}
	}
	return out
}

// diffTree returns the paths whose presence, mode or content differ
// between pre and cur, reading only files whose stat changed or that were
// modified too close to the snapshot for their stat to be trusted.
func (r *Repo) diffTree(pre, cur *Tree) ([]string, error) {
	cutoff := pre.Start.Add(-racyWindow).UnixNano()
	var changed, toHash []string
	for p, c := range cur.Files {
		f := pre.Files[p]
		switch {
		case f == nil:
			changed = append(changed, p)
		case f.Mode != c.Mode || f.Perm != c.Perm:
			changed = append(changed, p)
		case f.sameStat(c) && c.Mtime < cutoff:
			c.OID = f.OID
		default:
			toHash = append(toHash, p)
		}
	}
	for p := range pre.Files {
		if cur.Files[p] == nil {
			changed = append(changed, p)
		}
	}
	root, err := r.FS()
	if err != nil {
		return nil, err
	}
	if err := hashAll(root, cur, toHash); err != nil {
		return nil, err
	}
	for _, p := range toHash {
		if cur.Files[p].OID != pre.Files[p].OID {
			changed = append(changed, p)
		}
	}
	sort.Strings(changed)
	return changed, nil
}

// newLinkToOld reports whether a file of cur with several links is a new
// name (or a new inode) for a file the snapshot has under another name.
func newLinkToOld(pre, cur *Tree) bool {
	var inodes map[uint64]string
	for p := range cur.Linked {
		f := cur.Files[p]
		if f == nil {
			continue
		}
		if old := pre.Files[p]; old != nil && old.Ino == f.Ino {
			continue
		}
		if inodes == nil {
			inodes = make(map[uint64]string, len(pre.Files))
			for q, g := range pre.Files {
				inodes[g.Ino] = q
			}
		}
		if q, ok := inodes[f.Ino]; ok && q != p {
			return true
		}
	}
	return false
}

// snapshotRefIntact reports whether the snapshot's ref still names its
// commit: an edit may not touch it.
func (r *Repo) snapshotRefIntact(s *Snapshot) bool {
	id, err := r.resolveRef(s.Ref)
	return err == nil && id == s.Commit
}
