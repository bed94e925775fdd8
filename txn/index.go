package txn

import (
	"sort"
	"time"

	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/orket/orket/internal/gitrepo"
)

// An indexEntry is what orket needs of one entry of git's index.
type indexEntry = gitrepo.IndexEntry

// indexInfo is a parsed index arranged for the scan: the entries directly
// in each directory are found with one map lookup and a binary search,
// without a map of every path.
type indexInfo struct {
	list  []indexEntry       // every entry, in index order (by path, then stage)
	cache *gitrepo.CacheTree // the TREE extension, if the index has one
	mtime time.Time          // when the index was written: entries as new are racy
	// byDir holds, for each directory ("" for the root), the positions in
	// list of the entries directly in it, in index order.
	byDir    map[string][]int32
	dirs     map[string]bool // every directory holding indexed paths ("" excluded)
	gitlinks map[string]bool
	files    int      // stage-0 entries that are files (not intent-to-add, not gitlinks)
	trailer  [20]byte // the index's checksum: it names its content
	// conv, if set, names the paths whose bytes in the work tree the
	// index's stat data does not vouch for (a snapshot's index).
	conv *conversions
}

func parseIndex(b []byte, mtime time.Time) (*indexInfo, error) {
	ii := &indexInfo{byDir: map[string][]int32{}, dirs: map[string]bool{}, gitlinks: map[string]bool{}, mtime: mtime}
	if b == nil {
		return ii, nil
	}
	list, ct, err := gitrepo.DecodeIndex(b)
	if err != nil {
		return nil, &UnsupportedError{Path: ".git/index", Reason: "cannot read the index: " + err.Error()}
	}
	ii.trailer = gitrepo.IndexTrailer(b)
	ii.list, ii.cache = list, ct
	lastDir := "\x00" // no directory has this name
	var cur []int32
	for i := range list {
		e := &list[i]
		// Entries are sorted: consecutive ones mostly share a directory,
		// and a directory's direct entries are in order, if not adjacent.
		if d := parentDir(e.Name); d != lastDir {
			if lastDir != "\x00" {
				ii.byDir[lastDir] = cur
			}
			lastDir = d
			cur = ii.byDir[d]
			for d != "" && !ii.dirs[d] {
				ii.dirs[d] = true
				d = parentDir(d)
			}
		}
		cur = append(cur, int32(i))
		if e.Mode == filemode.Submodule {
			ii.gitlinks[e.Name] = true
			continue
		}
		if e.Stage == 0 && !e.IntentToAdd {
			ii.files++
		}
	}
	if lastDir != "\x00" {
		ii.byDir[lastDir] = cur
	}
	return ii, nil
}

// lookup returns the positions in ii.list of the entries named p (one per
// stage): ii.list[lo:hi].
func (ii *indexInfo) lookup(p string) (lo, hi int) { return ii.lookupIn(ii.byDir[parentDir(p)], p) }

// lookupIn is lookup among pos, the entries of p's directory.
func (ii *indexInfo) lookupIn(pos []int32, p string) (lo, hi int) {
	i := sort.Search(len(pos), func(i int) bool { return ii.list[pos[i]].Name >= p })
	if i == len(pos) || ii.list[pos[i]].Name != p {
		return 0, 0
	}
	j := i
	for j < len(pos) && ii.list[pos[j]].Name == p {
		j++
	}
	return int(pos[i]), int(pos[j-1]) + 1
}

// entry returns the stage-0 entry of the file p (not a gitlink, not an
// intent to add), or nil.
func (ii *indexInfo) entry(p string) *indexEntry {
	lo, hi := ii.lookup(p)
	for i := lo; i < hi; i++ {
		if e := &ii.list[i]; e.IsFile() {
			return e
		}
	}
	return nil
}

// tracked reports whether the index names p as anything but a gitlink.
func (ii *indexInfo) tracked(p string) bool {
	lo, hi := ii.lookup(p)
	return hi > lo && !ii.gitlinks[p]
}

// vouches reports whether e's content is f's: same stat, and not racy.
// Where git converts content (ii.conv), a clean stat says only that git
// would store the file as e's blob, not that its bytes are the blob's:
// the index does not vouch for them.
func (ii *indexInfo) vouches(e *indexEntry, f *File) bool {
	return ii.gitClean(e, f) && !ii.conv.applies(e.Name)
}

// gitClean reports whether git, trusting the index's stat data, takes
// the file for e's content: same stat, and not racy.
func (ii *indexInfo) gitClean(e *indexEntry, f *File) bool {
	return statMatches(f, e) && e.Mtime < ii.mtime.UnixNano()
}

// statMatches reports whether a file looks as the index recorded it.
func statMatches(f *File, e *indexEntry) bool {
	return f.Mode == e.Mode && uint32(f.Size) == e.Size && f.Mtime == e.Mtime &&
		f.Ctime == e.Ctime && uint32(f.Ino) == e.Ino
}
