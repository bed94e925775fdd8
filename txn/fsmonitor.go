package txn

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/orket/orket/internal/fsmonitor"
)

// With an fsmonitor hook (git's core.fsmonitor, Watchman's hook for
// instance, or Options.FSMonitor), a transaction costs what changed, not
// what the repository holds:
//
//   - the snapshot starts from the scan cache (the whole tree as the last
//     snapshot saw it, and the hook's token from just before) and asks the
//     hook what changed since; it rescans only the directories holding
//     what the hook names, as a measurement does with the inotify journal;
//   - measuring and reverting ask the hook what changed since the
//     snapshot's own token, instead of watching every directory.
//
// The hook is trusted exactly as git trusts it, and no more: an answer
// that starts with "/" (the hook just started watching, or lost its
// history: a restarted Watchman), a failed or timed-out hook, a cache that
// does not match (another hook, other ignore rules, a .gitignore the hook
// names, a changed set of submodules) all mean a whole scan. Whatever the
// hook does not report is not seen: a snapshot that trusts a watcher is
// only as right as the watcher, which is why it is opt-in.

// fsmonitorHook returns the hook a transaction asks, or nil and why not
// (nil, nil: none is configured).
func (r *Repo) fsmonitorHook() (*fsmonitor.Hook, error) {
	if r.Options.NoWatch {
		return nil, nil
	}
	if fi, err := os.Stat(filepath.Join(r.GitDir, "index")); err == nil && fi.Size() < hookMinIndex && !r.hookAlways && !fsmonitor.Eager() {
		// A small tree is scanned faster than a hook answers.
		return nil, nil
	}
	switch v := strings.TrimSpace(r.Options.FSMonitor); v {
	case FSMonitorOff:
		return nil, nil
	case "", FSMonitorGit:
		cfg, err := r.Git.ConfigScoped(gitconfig.SystemScope)
		if err != nil || cfg.Raw == nil {
			return nil, nil
		}
		core := cfg.Raw.Section("core")
		h, err := fsmonitor.FromConfig(core.Option("fsmonitor"), core.Option("fsmonitorhookversion"), r.Root)
		if errors.Is(err, fsmonitor.ErrNoHook) && err.Error() == fsmonitor.ErrNoHook.Error() {
			return nil, nil
		}
		return h, err
	default:
		return &fsmonitor.Hook{Command: v, Dir: r.Root}, nil
	}
}

// hookMinIndex is the size of index (about 20,000 files) below which a
// whole scan, a few tens of milliseconds, costs less than asking a hook
// (Watchman through git's Perl hook answers in 30-60 ms): the hook is not
// asked for smaller trees.
const hookMinIndex = 2 << 20

// Values of Options.FSMonitor besides a hook command.
const (
	FSMonitorGit = "git" // git's core.fsmonitor, if it names a hook (the default)
	FSMonitorOff = "off" // no fsmonitor hook, whatever git's configuration says
)

// hookAll reports whether a hook's answer is as good as "everything
// changed", and why: it names most of the files of the tree (what
// Watchman answers, through git's hook, when it restarted and lost its
// history: a "fresh instance" lists every file it sees, and none it did
// not see go), or so many paths that a whole scan is cheaper than
// rescanning their directories one by one. Either way the whole scan is
// the safe answer.
func hookAll(paths []string, t *Tree) (bool, string) {
	if len(paths) > 4096 && len(paths) > len(t.Files)/8 {
		return true, fmt.Sprintf("the hook names %d changed paths", len(paths))
	}
	named := 0
	for _, p := range paths {
		if t.Files[p] != nil {
			named++
		}
	}
	if named > 0 && named*2 > len(t.Files) {
		return true, fmt.Sprintf("the hook names %d of the %d files (it restarted and lost its history, or most changed)", named, len(t.Files))
	}
	return false, ""
}

// ScanInfo says how a snapshot or a measurement looked at the tree.
type ScanInfo struct {
	// How: "scan" (every directory read), "fsmonitor" (only where the
	// hook reported changes), "inotify" (only where the kernel did).
	How string
	// Why, for a whole scan where a watcher is configured, says why it
	// was not trusted this time.
	Why string
	// Dirs is how many directories were read.
	Dirs int
}

// hookScan takes the snapshot's tree from the scan cache and the hook:
// the cached tree, rescanned where the hook says something changed since
// the cache's token. It returns nil (and why) when the cache cannot be
// used, with the hook's token from before the call: the caller scans
// whole and saves that token with the tree. A failed hook is an error.
func (r *Repo) hookScan(q *hookQuery, ii *indexInfo, sc *scanner, cache *treeCache, start time.Time) (pre *Tree, v *vouched, toHash []string, token string, why string, dirs int, save bool, err error) {
	excludes := excludesDigest(sc.excludes)
	res, err := q.wait()
	if err != nil {
		return nil, nil, nil, "", "", 0, false, err
	}
	switch {
	case cache == nil || !cache.full || cache.hook != q.hook.Command || cache.token == "" || cache.token != q.asked:
		return nil, nil, nil, res.Token, "no scan cache for this hook yet", 0, true, nil
	case cache.excludes != excludes:
		return nil, nil, nil, res.Token, "info/exclude or core.excludesFile changed", 0, true, nil
	case res.All:
		return nil, nil, nil, res.Token, "the hook cannot say what changed (it restarted or lost its history)", 0, true, nil
	}
	if all, why := hookAll(res.Paths, cache.tree); all {
		return nil, nil, nil, res.Token, why, 0, true, nil
	}
	base := cache.tree
	for _, p := range res.Paths {
		if baseName(p) == ".gitignore" {
			return nil, nil, nil, res.Token, p + " changed", 0, true, nil
		}
	}
	dirty := map[string]bool{}
	mark := func(p string) {
		dirty[parentDir(p)] = true
		if _, ok := base.jobs[p]; ok {
			dirty[p] = true
		}
	}
	for _, p := range res.Paths {
		mark(p)
	}
	if ii.trailer != cache.index {
		reported := make(map[string]bool, len(res.Paths))
		for _, p := range res.Paths {
			reported[p] = true
		}
		if why := indexMoved(base, ii, cache.missing, reported, mark); why != "" {
			return nil, nil, nil, res.Token, why, 0, true, nil
		}
	}
	base.resolveJobs(sc.excludes)
	sc.rules, sc.w = base.Ignores, q.w
	preR, curR, err := regionScan(sc, base, newLayout(base), dirty, nil)
	if err != nil {
		return nil, nil, nil, "", "", 0, false, err
	}
	// What was rescanned gets its blob id from the cache when its stat
	// holds, from the index when it vouches, or is read (by the caller).
	cutoff := cache.start - int64(racyWindow)
	for p, f := range curR.Files {
		if old := preR.Files[p]; old != nil && !old.OID.IsZero() && f.sameStat(old) && f.Mtime < cutoff && f.Ctime < cutoff {
			f.OID = old.OID
		} else if e := ii.entry(p); e != nil && ii.vouches(e, f) {
			f.OID = e.Hash
		}
	}
	sameIndex := ii.trailer == cache.index && cache.vouched != nil
	if sameIndex {
		v, toHash = regionVouch(cache, preR, curR, ii)
	}
	base.apply(preR, curR)
	base.Start = start
	if !sameIndex {
		v, toHash = vouchTree(base, ii)
	}
	// The cache is rewritten when it would otherwise make the next
	// snapshot rescan much: its token stays good meanwhile.
	save = len(res.Paths) > 256 || !sameIndex
	return base, v, toHash, res.Token, "", len(curR.jobs), save, nil
}

// A hookQuery is a question to the hook under way: the snapshot asks it
// first thing, and reads the index and the scan cache meanwhile.
type hookQuery struct {
	hook  *fsmonitor.Hook
	asked string
	done  chan struct{}
	res   *fsmonitor.Result
	err   error
	// w, if set, watches the tree's directories (those of the cache,
	// from before the hook was asked, and those the snapshot reads):
	// measuring then costs no question to the hook.
	w *watcher
}

// maxWatchDirs is how many directories a snapshot with a hook watches
// with inotify, so that measuring and reverting need not ask the hook
// again: a watch costs a few microseconds, a question to a hook such as
// Watchman's tens of milliseconds; beyond this, the hook is cheaper.
const maxWatchDirs = 16384

// askHook starts asking the hook what changed since the scan cache's
// token (or since now, without one). When the tree is small enough to
// watch, it first watches the directories the cache knows, so that
// whatever changes after the hook's answer is in the inotify journal.
func (r *Repo) askHook(h *fsmonitor.Hook, watch bool) *hookQuery {
	q := &hookQuery{hook: h, asked: fsmonitor.InitialToken(), done: make(chan struct{})}
	hook, token, dirs := r.cacheHead()
	fromCache := hook == h.Command && token != ""
	if fromCache {
		q.asked = token
	}
	// (Tests make fsmonitor.Eager measure through the hook, as on a tree
	// too large to watch.)
	if watch && !r.Options.NoWatch && !fsmonitor.Eager() && (!fromCache || len(dirs) > 0 && len(dirs) <= maxWatchDirs) {
		syncDir := filepath.Join(r.GitDir, "orket")
		if os.MkdirAll(syncDir, 0o755) == nil {
			q.w, _ = newWatcher(syncDir)
		}
	}
	go func() {
		defer close(q.done)
		if q.w != nil && fromCache {
			for _, d := range dirs {
				q.w.add(abs(r.Root, d), d)
			}
		}
		q.res, q.err = h.Query(context.Background(), q.asked)
	}()
	return q
}

func (q *hookQuery) wait() (*fsmonitor.Result, error) {
	<-q.done
	return q.res, q.err
}

// indexMoved marks, through mark, what an index written since the cache
// changes in the tree: a path that became tracked or untracked is judged
// again in its directory. It returns why a whole scan is needed instead
// (a submodule added or removed, a path tracked inside an ignored
// directory the cache never entered), or "".
func indexMoved(t *Tree, ii *indexInfo, missing []string, reported map[string]bool, mark func(string)) string {
	wasMissing := make(map[string]bool, len(missing))
	for _, p := range missing {
		wasMissing[p] = true
	}
	for g := range ii.gitlinks {
		if !t.Gitlinks[g] {
			return "a submodule was added to the index"
		}
	}
	for g := range t.Gitlinks {
		if !ii.gitlinks[g] {
			return "a submodule was removed from the index"
		}
	}
	for i := range ii.list {
		e := &ii.list[i]
		if e.Mode == filemode.Submodule {
			continue
		}
		if _, ok := t.jobs[parentDir(e.Name)]; !ok {
			if wasMissing[e.Name] || reportedBelow(reported, e.Name) {
				// Still tracked and absent, or somewhere the hook
				// reports: the rescan of its directories finds it.
				continue
			}
			return e.Name + " is tracked in a directory the last scan did not enter"
		}
		if t.untracked[e.Name] || t.Files[e.Name] == nil && t.Ignored[e.Name] != nil {
			mark(e.Name) // newly tracked
		}
	}
	for p := range t.Files {
		if !t.untracked[p] && !ii.tracked(p) {
			mark(p) // no longer tracked: perhaps ignored now
			// Its directory may be an ignored one kept only for it.
			if j, ok := t.jobs[parentDir(p)]; ok && j.ignored {
				for d := parentDir(p); d != ""; d = parentDir(d) {
					mark(d)
					if j, ok := t.jobs[parentDir(d)]; !ok || !j.ignored {
						break
					}
				}
			}
		}
	}
	return ""
}

// reportedBelow reports whether the hook named p or one of its
// directories.
func reportedBelow(reported map[string]bool, p string) bool {
	for ; p != ""; p = parentDir(p) {
		if reported[p] {
			return true
		}
	}
	return false
}

// vouchTree is what scanVouched learns, for a tree taken some other way
// (hookScan): the files whose content the index does not hold (and which
// of those still need reading), the files with odd permission bits, the
// .gitattributes files, and the tracked files that are missing.
func vouchTree(t *Tree, ii *indexInfo) (v *vouched, toHash []string) {
	v = &vouched{}
	for i := range ii.list {
		e := &ii.list[i]
		if !e.IsFile() {
			continue
		}
		f := t.Files[e.Name]
		if f == nil {
			v.missing = append(v.missing, e.Name)
			continue
		}
		if f.OID != e.Hash || f.Mode != e.Mode {
			v.unknown = append(v.unknown, e.Name)
		}
	}
	for p, f := range t.Files {
		if t.untracked[p] {
			v.unknown = append(v.unknown, p)
		}
		if f.Perm != defaultPerm(f.Mode) && f.Mode != filemode.Symlink {
			v.perms = append(v.perms, p)
		}
		if baseName(p) == ".gitattributes" {
			v.attrs = append(v.attrs, p)
		}
	}
	sort.Strings(v.unknown)
	return v, zeroOIDs(t, v.unknown)
}

// regionVouch is vouchTree at the cost of the change: the cache's sets,
// for the index the cache was made with, corrected where regionScan
// looked (pre what the cache had there, cur what is there now).
func regionVouch(c *treeCache, pre, cur *Tree, ii *indexInfo) (v *vouched, toHash []string) {
	redo := func(old []string, keep func(p string, f *File) bool) []string {
		set := make(map[string]bool, len(old))
		for _, p := range old {
			if pre.Files[p] == nil && cur.Files[p] == nil {
				set[p] = true
			}
		}
		for p, f := range cur.Files {
			if keep(p, f) {
				set[p] = true
			}
		}
		return sortedKeys(set)
	}
	v = &vouched{}
	v.unknown = redo(c.vouched.unknown, func(p string, f *File) bool {
		if cur.untracked[p] {
			return true
		}
		e := ii.entry(p)
		return e == nil || f.OID != e.Hash || f.Mode != e.Mode
	})
	v.perms = redo(c.vouched.perms, func(_ string, f *File) bool {
		return f.Perm != defaultPerm(f.Mode) && f.Mode != filemode.Symlink
	})
	v.attrs = redo(c.vouched.attrs, func(p string, _ *File) bool { return baseName(p) == ".gitattributes" })
	missing := map[string]bool{}
	for _, p := range c.missing {
		if cur.Files[p] == nil {
			missing[p] = true
		}
	}
	for p := range pre.Files {
		if !pre.untracked[p] && cur.Files[p] == nil && ii.entry(p) != nil {
			missing[p] = true
		}
	}
	v.missing = sortedKeys(missing)
	return v, zeroOIDs(cur, v.unknown)
}

// zeroOIDs returns the paths of t whose blob id is not known yet.
func zeroOIDs(t *Tree, paths []string) (out []string) {
	for _, p := range paths {
		if f := t.Files[p]; f != nil && f.OID.IsZero() {
			out = append(out, p)
		}
	}
	return out
}

// hookChanged asks the snapshot's hook what changed since the snapshot.
func (s *Snapshot) hookChanged() (dirty map[string]bool, ok bool) {
	res, err := s.hook.Query(context.Background(), s.token)
	if err != nil {
		s.stopWatching("fsmonitor hook failed: " + err.Error())
		return nil, false
	}
	if res.All {
		s.stopWatching("the fsmonitor hook cannot say what changed since the snapshot (it restarted or lost its history)")
		return nil, false
	}
	if all, why := hookAll(res.Paths, s.Pre); all {
		s.stopWatching(why)
		return nil, false
	}
	dirty = map[string]bool{}
	for _, p := range res.Paths {
		dirty[parentDir(p)] = true
		if _, ok := s.Pre.jobs[p]; ok {
			dirty[p] = true
		}
	}
	return dirty, true
}
