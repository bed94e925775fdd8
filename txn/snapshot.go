package txn

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"golang.org/x/sys/unix"

	"github.com/orket/orket/internal/fsmonitor"
	"github.com/orket/orket/internal/gitignore"
	"github.com/orket/orket/internal/gitrepo"
	"github.com/orket/orket/internal/testhook"
	"github.com/orket/orket/scope"
)

// SnapshotRefPrefix is where snapshots are published, one ref per run.
const SnapshotRefPrefix = "refs/orket/snapshots/"

// racyWindow is how close to a scan a modification may be and still leave
// a file's stat unchanged (file timestamps come from a coarse clock): files
// modified that recently are always read, never trusted by stat.
const racyWindow = 100 * time.Millisecond

// A Snapshot is the durable record of a working tree before an edit.
type Snapshot struct {
	RunID  string
	Ref    string        // refs/orket/snapshots/<run-id>
	Commit plumbing.Hash // what Ref points to
	Pre    *Tree         // every file with its OID, as it was
	git    *gitState
	guard  *guardState
	idx    *indexInfo               // the index as it was, parsed
	perms  map[string]uint32        // permission bits of files whose bits are not 0644/0755
	tags   map[plumbing.Hash][]byte // annotated tag objects the refs name, byte for byte
	// excludes are info/exclude and core.excludesFile as the snapshot read
	// them; with Pre.Ignores, the rules every later scan judges by.
	excludes []gitignore.Pattern
	outside  map[string]bool // paths not part of the transaction (Start.Outside)
	w        *watcher        // the change journal since the snapshot; nil: scan whole
	dirty    bool            // the tree had uncommitted changes (other than .orket)
	// unknown are the files the index does not hold as they are (see
	// vouched), sorted; scanned says they are known (a snapshot read back
	// by recovery has no list).
	unknown []string
	scanned bool

	layoutOnce sync.Once
	lay        *layout
	// cacheStat is the scan cache's stat after the snapshot: an edit that
	// rewrites the cache is a write to orket's own state (see measure).
	cacheStat *unix.Stat_t
	// hook, if set, is asked what changed since token (see fsmonitor.go).
	hook  *fsmonitor.Hook
	token string
	// unwatched says why the change journal was dropped, if it was.
	unwatched string

	// Scan says how the snapshot looked at the tree.
	Scan ScanInfo

	// Timings are the parts of taking the snapshot, in order.
	Timings Timings
}

// Timings are the parts of a phase and how long each took.
type Timings []Timing

// A Timing is one part of a phase.
type Timing struct {
	Part string
	Time time.Duration
}

// start returns a function that records the time since the last call
// (since start, the first time) as a part.
func (tm *Timings) start() func(part string) {
	t := time.Now()
	return func(part string) {
		now := time.Now()
		*tm = append(*tm, Timing{part, now.Sub(t)})
		t = now
	}
}

// Of returns how long the named part took (zero if it did not happen).
func (tm Timings) Of(part string) time.Duration {
	var d time.Duration
	for _, t := range tm {
		if t.Part == part {
			d += t.Time
		}
	}
	return d
}

// Dirty reports whether the tree had uncommitted changes (besides
// .orket) when the snapshot was taken.
func (s *Snapshot) Dirty() bool { return s.dirty }

// IndexEntry returns the stage-0 entry of path p in the index as the
// snapshot found it; false when the index had none (an untracked path).
func (s *Snapshot) IndexEntry(p string) (*File, bool) {
	if s.idx == nil {
		return nil, false
	}
	if e := s.idx.entry(p); e != nil {
		return &File{Mode: e.Mode, OID: e.Hash}, true
	}
	return nil, false
}

// Close stops the snapshot's change journal. A snapshot needs no closing
// for correctness; it releases the inotify descriptor.
func (s *Snapshot) Close() {
	if s != nil && s.w != nil {
		s.w.close()
		s.w = nil
	}
}

// changed returns the directories where something happened since the
// snapshot (dirty: its entries; fresh: created or moved in, to be scanned
// whole), if the change journal can vouch for having seen everything.
func (s *Snapshot) changed() (dirty, fresh map[string]bool, how string, ok bool) {
	if s.w != nil {
		if dirty, fresh, ok = s.w.sync(); ok {
			return dirty, fresh, "inotify", true
		}
		s.w.close()
		s.w = nil
		if s.hook == nil {
			s.stopWatching("the inotify journal missed events (queue overflow or watch limit)")
		}
	}
	if s.hook != nil {
		dirty, ok = s.hookChanged()
		return dirty, map[string]bool{}, "fsmonitor", ok
	}
	return nil, nil, "", false
}

// stopWatching drops the change journal: from now on every measurement
// scans the whole tree.
func (s *Snapshot) stopWatching(why string) {
	s.Close()
	s.hook = nil
	if s.unwatched == "" {
		s.unwatched = why
	}
}

// manifest is the machine-readable part of a snapshot commit: what the
// index does not already say about the tree.
type manifest struct {
	Version   int                      `json:"version"`
	RunID     string                   `json:"run_id"`
	Start     time.Time                `json:"start"`
	Files     []manifestFile           `json:"files"`   // untracked, modified and .orket files
	Deleted   []string                 `json:"deleted"` // tracked in the index, absent from the tree
	EmptyDirs []string                 `json:"empty_dirs"`
	Perms     map[string]uint32        `json:"perms,omitempty"`
	Git       map[string]plumbing.Hash `json:"git"`            // HEAD, refs, index...: blob ids of their bytes
	Guard     map[string]plumbing.Hash `json:"guard"`          // config, hooks, info
	Tags      []plumbing.Hash          `json:"tags,omitempty"` // annotated tag objects kept under tags/
	// GuardModes are the permission bits of the guard files (hooks).
	GuardModes map[string]uint32 `json:"guard_modes,omitempty"`
	// Ignored are the small ignored files the snapshot keeps (ignored/).
	Ignored []manifestFile `json:"ignored,omitempty"`
	// IndexFile, relative to the git directory, is a hard link to the
	// index as it was (see keepIndex); without it, Git holds its blob.
	IndexFile string `json:"index_file,omitempty"`
	// Outside are the files that are not part of the transaction
	// (Start.Outside): a recovery leaves them as they are too.
	Outside []string `json:"outside,omitempty"`
}

type manifestFile struct {
	Path  string            `json:"path"`
	Mode  filemode.FileMode `json:"mode"`
	OID   plumbing.Hash     `json:"oid"`
	Size  int64             `json:"size"`
	Mtime int64             `json:"mtime"`
	Ctime int64             `json:"ctime"`
	Ino   uint64            `json:"ino"`
}

// newScanner returns a scanner judging by the repository's ignore rules as
// they are now.
func (r *Repo) newScanner(idx ...*indexInfo) (*scanner, error) {
	ex, err := r.excludes()
	if err != nil {
		return nil, err
	}
	root, err := r.FS()
	if err != nil {
		return nil, err
	}
	return &scanner{root: r.Root, fs: root, idx: idx, excludes: ex, workers: r.Options.ScanWorkers, rootfd: -1}, nil
}

// snapshotScanner returns a scanner judging by the ignore rules as the
// snapshot found them: .gitignore files an edit wrote (a self-ignoring
// one included) hide nothing from the transaction.
func (r *Repo) snapshotScanner(s *Snapshot, idx ...*indexInfo) (*scanner, error) {
	root, err := r.FS()
	if err != nil {
		return nil, err
	}
	rules := s.Pre.Ignores
	if rules == nil {
		rules = map[string][]gitignore.Pattern{}
	}
	return &scanner{root: r.Root, fs: root, idx: idx, excludes: s.excludes, rules: rules, outside: s.outside, workers: r.Options.ScanWorkers, rootfd: -1}, nil
}

// excludes returns the repository-wide ignore patterns: core.excludesFile
// (or its XDG default) and .git/info/exclude.
func (r *Repo) excludes() ([]gitignore.Pattern, error) {
	ps, err := gitrepo.Excludes(r.Git, r.Root, r.CommonDir)
	if err != nil {
		return nil, err
	}
	return ps, nil
}

// snapshot records the working tree durably: blobs for every file the index
// does not hold, a commit under refs/orket/snapshots/<runID>, all fsynced
// before it returns.
func (r *Repo) snapshot(runID string, outside []string) (*Snapshot, error) {
	var tm Timings
	b := &snapshotBuild{r: r, runID: runID, lap: tm.start()}
	// A snapshot of a large tree allocates tens of megabytes that live as
	// long as the transaction (the index, the tree): collecting garbage
	// while they are built would only mark them again and again.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	if err := r.CheckSupported(); err != nil {
		return nil, err
	}
	var herr error
	b.hook, herr = r.fsmonitorHook()
	if b.hook != nil {
		b.query = r.askHook(b.hook, true)
		defer b.query.wait() // never leave the hook running
		b.w = b.query.w
	}
	if err := b.readState(outside); err != nil {
		return nil, err
	}
	if err := b.scan(herr); err != nil {
		return nil, err
	}
	if err := b.hash(); err != nil {
		return nil, err
	}
	s := b.newSnapshot()
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	b.planManifest()
	if err := b.storeFiles(); err != nil {
		return nil, err
	}
	if err := b.storeGitState(); err != nil {
		return nil, err
	}
	if err := b.publish(); err != nil {
		return nil, err
	}
	b.updateCache()
	s.Timings = tm
	testhook.Point("snapshot-published")
	ok = true
	return s, nil
}

// A snapshotBuild carries what the steps of taking a snapshot share, in
// the order they fill it in.
type snapshotBuild struct {
	r     *Repo
	runID string
	lap   func(part string)

	hook  *fsmonitor.Hook // the fsmonitor hook, nil when there is none or it failed
	query *hookQuery      // the question put to hook
	w     *watcher        // the change journal, nil when there is none

	gs       *gitState
	guard    *guardState
	ii       *indexInfo
	sc       *scanner
	excludes []gitignore.Pattern

	start  time.Time  // when the scan began
	cache  *treeCache // the scan cache as the last snapshot left it, or nil
	pre    *Tree
	v      *vouched
	toHash []string // the files to read
	info   ScanInfo
	token  string // the hook's token from before the scan
	save   bool   // the hook's answer wants the cache saved

	s      *Snapshot
	m      *manifest
	stored []string // the files whose content the snapshot stores
	ow     *objectWriter
}

// readState reads git's state, its configuration and the index, and makes
// the scanner that judges the tree by them.
func (b *snapshotBuild) readState(outside []string) error {
	var err error
	b.gs, err = b.r.readGitState()
	if err != nil {
		return fmt.Errorf("read git state: %w", err)
	}
	b.guard, err = b.r.readGuardState()
	if err != nil {
		return fmt.Errorf("read git configuration: %w", err)
	}
	b.lap("git-state")
	b.ii, err = b.r.indexOf(b.gs)
	if err != nil {
		return err
	}
	if b.ii.conv, err = b.r.readConversions(b.ii); err != nil {
		return err
	}
	b.lap("index")
	b.sc, err = b.r.newScanner(b.ii)
	if err != nil {
		return err
	}
	b.excludes = b.sc.excludes
	b.sc.outside = setOf(outside)
	return nil
}

// scan looks at the tree: where the fsmonitor hook says something changed,
// if there is a hook and it answers, or else all of it.
func (b *snapshotBuild) scan(herr error) error {
	b.start = time.Now()
	if !b.r.noCache {
		b.cache = b.r.loadCache()
	}
	if herr != nil {
		b.info.Why = herr.Error()
	}
	if b.hook != nil {
		b.scanWithHook()
	}
	if b.pre == nil {
		return b.scanWhole()
	}
	return nil
}

// scanWithHook asks the hook where to look: the tree as the cache has it,
// but where something changed since. When the hook fails, b.pre stays nil
// and the hook is dropped.
func (b *snapshotBuild) scanWithHook() {
	var err error
	b.pre, b.v, b.toHash, b.token, b.info.Why, b.info.Dirs, b.save, err = b.r.hookScan(b.query, b.ii, b.sc, b.cache, b.start)
	if err != nil {
		b.info.Why, b.hook, b.token, b.pre = err.Error(), nil, "", nil
	}
	if b.pre != nil {
		b.info.How = "fsmonitor"
		b.lap("scan")
	}
}

// scanWhole scans the whole tree, and chooses the files to read: only
// those the index does not vouch for, and of those only the ones the last
// snapshot did not read as they are.
func (b *snapshotBuild) scanWhole() error {
	// Watch while scanning (unless a hook's token, from before the
	// scan, will say what changed): whatever changes after a
	// directory is read is in the journal, whatever changed before
	// is in the scan.
	if b.w == nil && b.hook == nil && !b.r.Options.NoWatch {
		syncDir := filepath.Join(b.r.GitDir, "orket")
		if os.MkdirAll(syncDir, 0o755) == nil {
			b.w, _ = newWatcher(syncDir) // without inotify, measuring scans the whole tree
		}
	}
	b.sc.rules = nil
	b.sc.w, b.sc.vouch = b.w, true
	var err error
	b.pre, b.v, err = b.sc.scanVouched()
	if err != nil {
		b.w.close()
		return fmt.Errorf("scan the working tree: %w", err)
	}
	b.pre.Start = b.start
	b.info.How, b.info.Dirs = "scan", len(b.pre.jobs)
	b.lap("scan")
	b.toHash = b.cache.reuse(b.pre, b.v.unknown)
	return nil
}

// hash reads the files chosen to read, and those below a .gitattributes
// the index does not track, and leaves out of the tree the paths outside
// the transaction.
func (b *snapshotBuild) hash() error {
	root, err := b.r.FS()
	if err != nil {
		b.w.close()
		return err
	}
	pre, v := b.pre, b.v
	// A .gitattributes the index does not track converts too: what the
	// index vouched for below it is read after all.
	attrs := v.attrs
	for p := range pre.Ignored {
		if baseName(p) == ".gitattributes" {
			attrs = append(attrs, p)
		}
	}
	if added := b.ii.conv.addFound(root, attrs); added != nil {
		unknown := setOf(v.unknown)
		for p, f := range pre.Files {
			if !unknown[p] && below(added, p) {
				f.OID = plumbing.ZeroHash
				v.unknown = append(v.unknown, p)
				b.toHash = append(b.toHash, p)
			}
		}
		sort.Strings(v.unknown)
	}
	if err := hashAll(root, pre, b.toHash); err != nil {
		b.w.close()
		return fmt.Errorf("read the working tree: %w", err)
	}
	b.lap("hash")
	pre.drop(b.sc.outside) // a tree the scan cache gave may hold them
	return nil
}

// newSnapshot makes the snapshot from what the scan found; it is not
// published yet.
func (b *snapshotBuild) newSnapshot() *Snapshot {
	b.s = &Snapshot{RunID: b.runID, outside: b.sc.outside, Ref: SnapshotRefPrefix + b.runID, Pre: b.pre, git: b.gs, guard: b.guard, idx: b.ii, w: b.w, perms: map[string]uint32{},
		excludes: b.excludes, hook: b.hook, token: b.token, Scan: b.info, unknown: b.v.unknown, scanned: true}
	return b.s
}

// Paths calls fn with every path the index names (in its order, each
// once), then every file the index does not hold as it is (untracked or
// modified, sorted): every file of Pre, and perhaps a tracked file that
// is gone or named twice (a caller that cares looks it up in Pre.Files).
// On a large tree it costs a fraction of ranging over Pre.Files, whose
// keys lie all over the heap while the index's names are one block:
// 100,000 files cost 12 ms that way.
func (s *Snapshot) Paths(fn func(p string)) {
	if !s.scanned {
		for p := range s.Pre.Files {
			fn(p)
		}
		return
	}
	prev := ""
	for i := range s.idx.list {
		if p := s.idx.list[i].Name; p != prev {
			fn(p)
			prev = p
		}
	}
	for _, p := range s.unknown {
		fn(p)
	}
}

// planManifest chooses the files the snapshot stores and the tracked
// files it records as deleted, and says whether the tree was dirty.
func (b *snapshotBuild) planManifest() {
	s, pre, v, ii := b.s, b.pre, b.v, b.ii
	m := &manifest{Version: 1, RunID: b.runID, Start: pre.Start, Deleted: []string{}, EmptyDirs: sortedKeys(pre.Empty), Outside: sortedKeys(b.sc.outside),
		Git: map[string]plumbing.Hash{}, Guard: map[string]plumbing.Hash{}, GuardModes: b.guard.modes}
	b.m = m
	for _, p := range v.perms {
		if f := pre.Files[p]; f != nil {
			s.perms[p] = f.Perm
		}
	}
	// Stored: the files whose content or mode the index does not hold,
	// among those it did not vouch for (sorted, as unknown is).
	for _, p := range v.unknown {
		f := pre.Files[p]
		if f == nil {
			continue // removed while hashed
		}
		if e := ii.entry(p); e != nil && e.Hash == f.OID && e.Mode == f.Mode {
			continue
		}
		b.stored = append(b.stored, p)
		m.Files = append(m.Files, manifestFile{Path: p, Mode: f.Mode, OID: f.OID, Size: f.Size, Mtime: f.Mtime, Ctime: f.Ctime, Ino: f.Ino})
	}
	m.Perms = s.perms
	for _, p := range b.stored {
		if !scope.Reserved(p) && ii.gitReports(p, pre.Files[p]) {
			s.dirty = true
			break
		}
	}
	m.Deleted = append(m.Deleted, v.missing...)
	for _, p := range v.unknown {
		if pre.Files[p] == nil && ii.entry(p) != nil {
			m.Deleted = append(m.Deleted, p) // removed while hashed
		}
	}
	sort.Strings(m.Deleted)
	s.dirty = s.dirty || len(m.Deleted) > 0
}

// storeFiles writes the stored files as blobs, and the small ignored files
// the snapshot keeps.
func (b *snapshotBuild) storeFiles() error {
	b.ow = newObjectWriter(b.r)
	for _, p := range b.stored {
		if err := b.ow.storeFile(p, b.pre.Files[p]); err != nil {
			return fmt.Errorf("store %s: %w", p, err)
		}
	}
	keptIgnored, err := b.r.keepIgnored(b.pre)
	if err != nil {
		return err
	}
	for _, p := range keptIgnored {
		f := b.pre.Ignored[p]
		if err := b.ow.storeFile(p, f); err != nil {
			// Changed while kept: it is not kept.
			f.OID = plumbing.ZeroHash
			continue
		}
		b.m.Ignored = append(b.m.Ignored, manifestFile{Path: p, Mode: f.Mode, OID: f.OID, Size: f.Size, Mtime: f.Mtime, Ctime: f.Ctime, Ino: f.Ino})
		if f.Perm != defaultPerm(f.Mode) && f.Mode != filemode.Symlink {
			b.s.perms[p] = f.Perm // a .env is often 0600
		}
	}
	return nil
}

// storeGitState keeps the index, and writes git's own files (HEAD, refs,
// configuration, hooks) as blobs.
func (b *snapshotBuild) storeGitState() error {
	m := b.m
	// The index is kept as a hard link (at the cost of a link whatever
	// its size), or as a blob where the file system cannot link.
	m.IndexFile = b.r.keepIndex(b.runID, b.gs, b.ow)
	var err error
	for k, data := range b.gs.files {
		switch {
		case k == inGitDir+"index" && m.IndexFile != "":
			continue
		case k == inGitDir+"index":
			m.Git[k], err = b.r.indexBlob(b.ow, b.gs)
		default:
			m.Git[k], err = b.ow.blob(data)
		}
		if err != nil {
			return err
		}
	}
	for k, data := range b.guard.files {
		if m.Guard[k], err = b.ow.blob(data); err != nil {
			return err
		}
	}
	b.lap("blobs")
	return nil
}

// publish writes the snapshot commit, syncs every object, and only then
// writes the ref that makes the snapshot findable.
func (b *snapshotBuild) publish() error {
	s := b.s
	commit, tags, err := b.ow.snapshotCommit(b.m, b.stored, b.pre, b.gs, b.ii)
	if err != nil {
		return fmt.Errorf("write snapshot commit: %w", err)
	}
	b.lap("commit")
	// Every object is on disk before the ref that makes it findable.
	if err := b.ow.sync(); err != nil {
		return err
	}
	if err := gitrepo.WriteRef(b.r.CommonDir, s.Ref, commit, gitrepo.RefLog{Msg: "orket: snapshot", GitDir: b.r.GitDir}); err != nil {
		return fmt.Errorf("publish %s: %w", s.Ref, err)
	}
	s.Commit, s.tags = commit, tags
	b.lap("sync")
	return nil
}

// updateCache writes the scan cache for the next snapshot when this one
// learned something new, and remembers the cache file's stat.
func (b *snapshotBuild) updateCache() {
	r, s, hook, cache, v := b.r, b.s, b.hook, b.cache, b.v
	switch {
	case r.noCache:
	case hook != nil && (b.save || b.info.How == "scan"):
		s.cacheStat, _ = r.saveCache(&treeCache{hook: hook.Command, token: b.token, start: b.start.UnixNano(), excludes: excludesDigest(b.excludes),
			full: true, tree: b.pre, index: b.ii.trailer, missing: b.m.Deleted, vouched: &vouched{unknown: b.stored, perms: v.perms, attrs: v.attrs}})
	case hook == nil && (cache == nil || cache.full || len(b.toHash) > 0 || len(v.unknown) != len(cache.tree.Files)):
		s.cacheStat, _ = r.saveCache(&treeCache{start: b.start.UnixNano(), excludes: excludesDigest(b.excludes), tree: subtree(b.pre, v.unknown)})
	default:
		s.cacheStat = cache.stat
	}
	b.lap("cache")
}

func defaultPerm(m filemode.FileMode) uint32 {
	if m == filemode.Executable {
		return 0o755
	}
	return 0o644
}

func (r *Repo) indexOf(gs *gitState) (*indexInfo, error) {
	var mtime time.Time
	if st := gs.index; st != nil {
		mtime = time.Unix(st.Mtim.Sec, st.Mtim.Nsec)
	}
	return parseIndex(gs.files[inGitDir+"index"], mtime)
}

// keepIndex keeps the index file the snapshot read, as it is, without
// copying it: a hard link beside the journal (.git/orket/index-<run-id>).
// git never writes the index in place (it renames a new file over it), so
// the link keeps these bytes whatever happens to .git/index; the link and
// its directory are fsynced with the snapshot's objects, by ow's next
// sync (which writes out the file's data, if git had not). It returns the
// link's path relative to the git directory, or "" when the file system
// cannot link or the index is no longer the file that was read: then the
// index is stored as a blob.
func (r *Repo) keepIndex(runID string, gs *gitState, ow *objectWriter) string {
	if gs.index == nil {
		return ""
	}
	name := "orket/index-" + runID
	p := filepath.Join(r.GitDir, filepath.FromSlash(name))
	os.Remove(p)
	if err := os.Link(filepath.Join(r.GitDir, "index"), p); err != nil {
		return ""
	}
	f, err := os.Open(p)
	if err != nil {
		os.Remove(p)
		return ""
	}
	defer f.Close()
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || !sameIndexFile(gs.index, &st) {
		os.Remove(p)
		return ""
	}
	ow.files = append(ow.files, p)
	ow.dirs[filepath.Dir(p)] = true
	// The link changed the file's ctime, nothing else.
	gs.index = &st
	return name
}

// dropIndex removes a snapshot's link to the index.
func (r *Repo) dropIndex(runID string) {
	if runID != "" {
		os.Remove(filepath.Join(r.GitDir, "orket", "index-"+runID))
	}
}

// indexBlob stores the index's bytes as a blob and returns its id. The id
// of the index file last stored is remembered beside the journal, with the
// file's stat: git never rewrites the index in place (it renames a new
// file over it), so while the stat is the same so are the bytes, and
// megabytes are not hashed again on every run. A stat is remembered only
// once the file is older than racyWindow, so that no later file can reuse
// its inode with the same times.
func (r *Repo) indexBlob(ow *objectWriter, gs *gitState) (plumbing.Hash, error) {
	b := gs.files[inGitDir+"index"]
	st := gs.index
	if st == nil {
		return ow.blob(b)
	}
	key := fmt.Sprintf("%d %d %d.%09d %d.%09d", st.Ino, st.Size, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
	memo := filepath.Join(r.GitDir, "orket", "index-blob")
	if old, err := os.ReadFile(memo); err == nil {
		if k, id, ok := strings.Cut(strings.TrimSpace(string(old)), " = "); ok && k == key {
			if h := plumbing.NewHash(id); !h.IsZero() && ow.has(h) {
				return h, nil
			}
		}
	}
	id, err := ow.blob(b)
	if err != nil {
		return id, err
	}
	if time.Since(time.Unix(st.Ctim.Sec, st.Ctim.Nsec)) > racyWindow && time.Since(time.Unix(st.Mtim.Sec, st.Mtim.Nsec)) > racyWindow {
		// A cache: losing it costs a hash, so it is not synced.
		_ = os.WriteFile(memo, []byte(key+" = "+id.String()+"\n"), 0o644)
	}
	return id, nil
}

// snapshotCommit writes the commit a user can restore from with plain git:
//
//	index        the index file as it was
//	worktree/    every file the index does not hold (untracked, modified)
//	deleted      tracked paths absent from the tree (skip-worktree ones
//	             too), one per line
//	empty-dirs   empty directories, one per line
//	perms        permission bits that are not 644 or 755: "mode path" lines
//	refs         HEAD and every local branch and tag: "id name" lines
//	restore.sh   the whole restore as a shell script (plain git and sh)
//	manifest.json
//
// and, to keep everything a revert needs reachable whatever gc runs:
//
//	index-tree/  the index's content as a tree
//	git/, guard/ the bytes of git's own files (refs, HEAD, config, hooks)
//	tags/        annotated tag objects, by id
//
// Its parents are every commit a ref names.
func (w *objectWriter) snapshotCommit(m *manifest, stored []string, pre *Tree, gs *gitState, ii *indexInfo) (id plumbing.Hash, snapTags map[plumbing.Hash][]byte, err error) {
	commits, tags := w.pins(gs)
	for id := range tags {
		m.Tags = append(m.Tags, id)
	}
	sort.Slice(m.Tags, func(i, j int) bool { return m.Tags[i].String() < m.Tags[j].String() })
	var mj []byte
	mj, err = json.Marshal(m)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	top := map[string]treeItem{}
	add := func(name string, b []byte) error {
		id, err := w.blob(b)
		top[name] = treeItem{mode: filemode.Regular, id: id}
		return err
	}
	for name, b := range map[string][]byte{
		"manifest.json": mj, "deleted": []byte(joinLines(absentPaths(m.Deleted, pre, ii))), "empty-dirs": []byte(joinLines(m.EmptyDirs)),
		"refs": []byte(refsText(gs)), "perms": []byte(permsText(m.Perms)), "restore.sh": []byte(restoreScript(m.RunID)),
		"guard-modes": []byte(guardModesText(m.GuardModes)),
	} {
		if err := add(name, b); err != nil {
			return plumbing.ZeroHash, nil, err
		}
	}
	// The index (megabytes on a large tree) is stored once, with the git
	// state; the commit names the same blob.
	if id, ok := m.Git[inGitDir+"index"]; ok {
		top["index"] = treeItem{mode: filemode.Regular, id: id}
	}
	files := map[string]treeItem{}
	for _, p := range stored {
		f := pre.Files[p]
		files[p] = treeItem{mode: f.Mode, id: f.OID}
	}
	ignored := map[string]treeItem{}
	for _, f := range m.Ignored {
		ignored[f.Path] = treeItem{mode: f.Mode, id: f.OID}
	}
	subtrees := map[string]map[string]treeItem{"worktree": files, "git": keyTree(m.Git), "guard": keyTree(m.Guard), "tags": {}, "ignored": ignored}
	for id, b := range tags {
		bid, err := w.blob(b)
		if err != nil {
			return plumbing.ZeroHash, nil, err
		}
		subtrees["tags"][id.String()] = treeItem{mode: filemode.Regular, id: bid}
	}
	for name, items := range subtrees {
		id, err := w.tree(items, "")
		if err != nil {
			return plumbing.ZeroHash, nil, err
		}
		top[name] = treeItem{mode: filemode.Dir, id: id}
	}
	var it plumbing.Hash
	it, err = w.indexTree(ii)
	if err != nil {
		return plumbing.ZeroHash, nil, fmt.Errorf("the index's tree: %w", err)
	}
	top["index-tree"] = treeItem{mode: filemode.Dir, id: it}
	var root plumbing.Hash
	root, err = w.tree(top, "")
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	sig := object.Signature{Name: "orket", Email: "orket@localhost", When: m.Start}
	id, err = w.encode(&object.Commit{Author: sig, Committer: sig, TreeHash: root, ParentHashes: commits, Message: restoreMessage(m.RunID)})
	return id, tags, err
}

// absentPaths are the paths restore.sh removes: the tracked files absent
// from the tree (deleted), and those a sparse checkout keeps out of it
// (skip-worktree entries without a file), which git checkout-index and
// git clean leave as an edit made them.
func absentPaths(deleted []string, pre *Tree, ii *indexInfo) []string {
	out := deleted
	for i := range ii.list {
		if e := &ii.list[i]; e.SkipWorktree && e.Stage == 0 && pre.Files[e.Name] == nil {
			if len(out) == len(deleted) {
				out = append([]string(nil), deleted...)
			}
			out = append(out, e.Name)
		}
	}
	if len(out) > len(deleted) {
		sort.Strings(out)
	}
	return out
}

// keyTree names git-state blobs by where they live: "gitdir:HEAD" is
// gitdir/HEAD.
func keyTree(m map[string]plumbing.Hash) map[string]treeItem {
	out := map[string]treeItem{}
	for k, id := range m {
		where, rest, _ := strings.Cut(k, ":")
		out[where+"/"+rest] = treeItem{mode: filemode.Regular, id: id}
	}
	return out
}

// guardModesText lists git's own files (hooks) with their permission bits,
// relative to the git directory they live in.
func guardModesText(modes map[string]uint32) string {
	var lines []string
	for _, k := range sortedKeys(modes) {
		where, rest, _ := strings.Cut(k, ":")
		lines = append(lines, fmt.Sprintf("%04o %s %s", modes[k], where, rest))
	}
	return joinLines(lines)
}

func permsText(perms map[string]uint32) string {
	var lines []string
	for _, p := range sortedKeys(perms) {
		lines = append(lines, fmt.Sprintf("%04o %s", perms[p], p))
	}
	return joinLines(lines)
}

func restoreMessage(runID string) string {
	return "orket snapshot " + runID + `

The working tree before orket run ` + runID + `. orket recover restores it
exactly. To restore it with plain git and sh instead, from the
repository's top directory:

  git cat-file blob ` + SnapshotRefPrefix + runID + `:restore.sh | sh

That puts back every tracked and untracked (not ignored) file with its
content and permission bits, removes what the edit created, brings back
empty directories, the index, HEAD, every branch and tag (and deletes
those the edit created), the stash, an operation in progress, and git's
configuration, hooks and info files; then it forgets the snapshot. It
does not restore modification times, ignored files, or paths with a
newline in their name.

Files: restore.sh, index (or, kept without copying it, the git
directory's orket/index-` + runID + `), worktree/ (files the index did not hold),
deleted, empty-dirs, perms, refs, git/ and guard/ (git's own files, byte
for byte), tags/, index-tree/, manifest.json (everything, for orket).
`
}

// restoreScript is restore.sh: the whole restore with git and a POSIX sh.
func restoreScript(runID string) string {
	return `#!/bin/sh
# Restores the repository as it was before orket run ` + runID + `.
# Run it from the top directory of the work tree:
#   git cat-file blob ` + SnapshotRefPrefix + runID + `:restore.sh | sh
set -eu
ref=` + SnapshotRefPrefix + runID + `
git rev-parse -q --verify "$ref^{commit}" >/dev/null || { echo "restore.sh: $ref does not exist" >&2; exit 1; }
gitdir=$(git rev-parse --git-dir)
common=$(git rev-parse --git-common-dir)
has() { git cat-file -e "$ref:$1" 2>/dev/null; }

# Annotated tags a gc may have pruned.
if has tags; then
  git ls-tree --name-only "$ref:tags" | while read -r t; do
    git cat-file -e "$t" 2>/dev/null || git cat-file blob "$ref:tags/$t" | git hash-object -t tag -w --stdin >/dev/null
  done
fi

# Branches, tags, packed-refs, the stash, configuration, hooks and info:
# what the snapshot does not have goes, then its files come back byte
# for byte.
for d in refs/heads refs/tags hooks info; do
  [ -d "$common/$d" ] || continue
  (cd "$common" && find "$d" -type f) | while IFS= read -r f; do
    has "git/common/$f" || has "guard/common/$f" || rm -f -- "$common/$f"
  done
done
for f in packed-refs refs/stash logs/refs/stash config.worktree; do
  has "git/common/$f" || has "guard/common/$f" || rm -f -- "$common/$f"
done
git archive "$ref:git/common" | tar -x -C "$common"
git archive "$ref:guard/common" | tar -x -C "$common"
if has guard-modes; then
  git cat-file blob "$ref:guard-modes" | while read -r mode where f; do
    if [ "$where" = common ]; then chmod "$mode" -- "$common/$f"; else chmod "$mode" -- "$gitdir/$f"; fi
  done
fi

# HEAD, the index and an operation in progress.
for f in ORIG_HEAD MERGE_HEAD MERGE_MSG MERGE_MODE AUTO_MERGE CHERRY_PICK_HEAD REVERT_HEAD BISECT_LOG; do
  has "git/gitdir/$f" || rm -f -- "$gitdir/$f"
done
for d in rebase-merge rebase-apply sequencer; do
  has "git/gitdir/$d" || rm -rf -- "$gitdir/$d"
done
git archive "$ref:git/gitdir" | tar -x -C "$gitdir"
# The index, kept beside the journal as a hard link (or, if that is gone,
# rebuilt from the snapshot's tree of it, without its stat data).
if ! has git/gitdir/index; then
  if [ -f "$gitdir/orket/index-` + runID + `" ]; then
    cp -- "$gitdir/orket/index-` + runID + `" "$gitdir/index.orket-restore"
    mv -f -- "$gitdir/index.orket-restore" "$gitdir/index"
  else
    git read-tree "$ref:index-tree"
  fi
fi

# Tracked files from the index; files the edit created go; the others
# come back with their permission bits; deleted files and empty
# directories as they were.
git checkout-index --all --force
git clean -fdq
git -c tar.umask=022 archive "$ref:worktree" | tar -x
git cat-file blob "$ref:deleted" | while IFS= read -r p; do
  rm -f -- "$p"
  case "$p" in */*) rmdir -p -- "${p%/*}" 2>/dev/null || true ;; esac
done
git cat-file blob "$ref:empty-dirs" | while IFS= read -r d; do mkdir -p -- "$d"; done
if has perms; then
  git cat-file blob "$ref:perms" | while read -r mode p; do chmod "$mode" -- "$p"; done
fi

# Forget the snapshot.
git update-ref -d "$ref"
rm -f "$gitdir/orket/txn.json" "$gitdir/orket/index-` + runID + `"
echo "restored the repository as it was before orket run ` + runID + `"
`
}

func refsText(gs *gitState) string {
	var lines []string
	for _, k := range sortedKeys(gs.files) {
		name := strings.SplitN(k, ":", 2)[1]
		if name == "HEAD" || strings.HasPrefix(name, "refs/") {
			lines = append(lines, strings.TrimSpace(string(gs.files[k]))+" "+name)
		}
	}
	return joinLines(lines)
}

func joinLines(l []string) string {
	if len(l) == 0 {
		return ""
	}
	return strings.Join(l, "\n") + "\n"
}

var errNoSnapshot = errors.New("no such snapshot")
