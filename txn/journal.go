package txn

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/internal/gitignore"
	"github.com/orket/orket/internal/gitrepo"
	"github.com/orket/orket/scope"
)

// The phases a journal records, written before each begins.
const (
	PhaseSnapshot = "snapshot" // taking the snapshot: nothing written yet
	PhaseEdit     = "edit"     // the edit is writing
	PhaseVerify   = "verify"   // verify steps are running
	PhaseCommit   = "commit"   // keeping the change (--commit)
	PhaseRevert   = "revert"   // putting the tree back
	PhaseTakeOut  = "takeout"  // taking a failed --worktree candidate out
	PhaseBaseline = "baseline" // failed steps run again on the reverted tree
)

// A Journal says that a transaction is under way in a work tree, and where
// its snapshot is. It lives in the work tree's git directory, so a crash
// leaves it behind for the next run to find.
type Journal struct {
	RunID   string    `json:"run_id"`
	Ref     string    `json:"ref"`
	Phase   string    `json:"phase"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	Command string    `json:"command,omitempty"`
	// Saved names the files Save wrote under SavedDir(RunID) before
	// anything was taken out of the tree.
	Saved []string `json:"saved,omitempty"`
	// Group is where the run's processes are contained; recovery stops
	// what is left of them first.
	Group string `json:"group,omitempty"`
}

func (r *Repo) journalPath() string { return filepath.Join(r.GitDir, "orket", "txn.json") }

// writeJournal records j, atomically (a reader sees the old journal or
// the new one, whatever happens), and durably (fsynced, with its
// directory) when durable is set. Recovery does the same in every phase
// but one (it reverts), so only two writes must survive a power loss:
// phase edit, before anything is written to the tree, and the list of
// saved files (see Txn.Save). A journal write that is lost leaves the
// previous one, which recovery treats the same way.
func (r *Repo) writeJournal(j *Journal, durable bool) error {
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	p := r.journalPath()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	root, err := fsroot.Open(filepath.Dir(p))
	if err != nil {
		return err
	}
	defer root.Close()
	return root.WriteFile(filepath.Base(p), append(b, '\n'), 0o644, fsroot.Options{Sync: durable})
}

// readJournal returns the journal of an unfinished transaction, or nil.
func (r *Repo) readJournal() (*Journal, error) {
	b, err := os.ReadFile(r.journalPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var j Journal
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("%s: damaged journal: %w", r.journalPath(), err)
	}
	return &j, nil
}

// clearJournal ends a transaction's record.
func (r *Repo) clearJournal() error {
	err := os.Remove(r.journalPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err == nil {
		err = syncDir(filepath.Dir(r.journalPath()))
	}
	return err
}

// dropSnapshot deletes a snapshot's ref. Its objects become unreachable
// and git's gc collects them in time.
func (r *Repo) dropSnapshot(ref string) error {
	// Loose, or packed by git pack-refs.
	if err := gitrepo.DeleteRef(r.CommonDir, ref); err != nil {
		return err
	}
	p := filepath.Join(r.CommonDir, filepath.FromSlash(ref))
	for d := filepath.Dir(p); strings.HasPrefix(d, filepath.Join(r.CommonDir, "refs", "orket")); d = filepath.Dir(d) {
		if os.Remove(d) != nil {
			break
		}
	}
	return nil
}

// resolveRef reads a ref, loose or packed.
func (r *Repo) resolveRef(ref string) (plumbing.Hash, error) {
	id, err := gitrepo.ReadRef(r.CommonDir, ref)
	if err == nil && id.IsZero() {
		err = errNoSnapshot
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%s: %w", ref, err)
	}
	return id, nil
}

// loadSnapshot reads a snapshot back from its ref, as recovery does after
// a crash: the index it saved, plus the manifest's files and stat.
func (r *Repo) loadSnapshot(ref string) (*Snapshot, error) {
	id, tree, m, err := r.readManifest(ref)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{RunID: m.RunID, Ref: ref, Commit: id, git: &gitState{files: map[string][]byte{}},
		guard: &guardState{files: map[string][]byte{}, modes: m.GuardModes}, perms: m.Perms}
	if s.guard.modes == nil {
		s.guard.modes = map[string]uint32{}
	}
	if err := r.loadGitFiles(s, m, tree); err != nil {
		return nil, err
	}
	ii, err := parseIndex(s.git.files[inGitDir+"index"], m.Start)
	if err != nil {
		return nil, err
	}
	s.outside = setOf(m.Outside)
	pre := preTree(m, ii)
	if err := r.loadIgnoreRules(ref, pre, ii); err != nil {
		return nil, err
	}
	global, err := gitrepo.ReadIgnoreFile(gitrepo.ExcludesFile(r.Git, r.Root), "")
	if err != nil {
		return nil, err
	}
	s.excludes = append(global, gitignore.ParsePatterns(s.guard.files[inCommon+"info/exclude"], "")...)
	s.Pre = pre
	s.idx = ii
	return s, nil
}

// readManifest reads the snapshot commit that ref names, and the manifest
// in its tree.
func (r *Repo) readManifest(ref string) (plumbing.Hash, *object.Tree, *manifest, error) {
	id, err := r.resolveRef(ref)
	if err != nil {
		return id, nil, nil, err
	}
	commit, err := object.GetCommit(r.Git.Storer, id)
	if errors.Is(err, plumbing.ErrObjectNotFound) && r.reopen() == nil {
		commit, err = object.GetCommit(r.Git.Storer, id)
	}
	if err != nil {
		return id, nil, nil, fmt.Errorf("%s: %w", ref, err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return id, nil, nil, err
	}
	mf, err := tree.File("manifest.json")
	if err != nil {
		return id, nil, nil, fmt.Errorf("%s: manifest: %w", ref, err)
	}
	mj, err := r.blobBytes(mf.Hash)
	if err != nil {
		return id, nil, nil, fmt.Errorf("%s: manifest: %w", ref, err)
	}
	var m manifest
	if err := json.Unmarshal(mj, &m); err != nil {
		return id, nil, nil, fmt.Errorf("%s: manifest: %w", ref, err)
	}
	return id, tree, &m, nil
}

// loadGitFiles reads back the bytes of git's own files the snapshot kept
// (the index, from its hard link when it kept one) and the annotated tag
// objects.
func (r *Repo) loadGitFiles(s *Snapshot, m *manifest, tree *object.Tree) error {
	ref := s.Ref
	var err error
	for k, h := range m.Git {
		if s.git.files[k], err = r.blobBytes(h); err != nil {
			return fmt.Errorf("%s: %s: %w", ref, k, err)
		}
	}
	if m.IndexFile != "" {
		b, err := os.ReadFile(filepath.Join(r.GitDir, filepath.FromSlash(m.IndexFile)))
		if err != nil {
			return fmt.Errorf("%s: the index it kept: %w", ref, err)
		}
		s.git.files[inGitDir+"index"] = b
	}
	for k, h := range m.Guard {
		if s.guard.files[k], err = r.blobBytes(h); err != nil {
			return fmt.Errorf("%s: %s: %w", ref, k, err)
		}
	}
	s.tags = map[plumbing.Hash][]byte{}
	for _, id := range m.Tags {
		f, err := tree.File("tags/" + id.String())
		if err != nil {
			return fmt.Errorf("%s: tag %s: %w", ref, id, err)
		}
		if s.tags[id], err = r.blobBytes(f.Hash); err != nil {
			return fmt.Errorf("%s: tag %s: %w", ref, id, err)
		}
	}
	return nil
}

// preTree is the tree as the snapshot recorded it: the index's files but
// those deleted or outside the transaction, and the manifest's files,
// permission bits, empty directories and kept ignored files.
func preTree(m *manifest, ii *indexInfo) *Tree {
	pre := &Tree{Files: map[string]*File{}, Dirs: map[string]bool{}, Empty: map[string]bool{}, Start: m.Start}
	deleted := map[string]bool{}
	for _, p := range m.Deleted {
		deleted[p] = true
	}
	for _, p := range m.Outside {
		deleted[p] = true // not part of the transaction, tracked or not
	}
	for i := range ii.list {
		e := &ii.list[i]
		if !e.IsFile() || deleted[e.Name] {
			continue
		}
		f := &File{Mode: e.Mode, Size: int64(e.Size), Mtime: e.Mtime, Ctime: e.Ctime, Ino: uint64(e.Ino), OID: e.Hash}
		pre.Files[e.Name] = f
	}
	for _, mf := range m.Files {
		pre.Files[mf.Path] = &File{Mode: mf.Mode, Size: mf.Size, Mtime: mf.Mtime, Ctime: mf.Ctime, Ino: mf.Ino, OID: mf.OID}
	}
	for p, f := range pre.Files {
		f.Perm = defaultPerm(f.Mode)
		if f.Mode == filemode.Symlink {
			f.Perm = 0o777
		}
		if perm, ok := m.Perms[p]; ok {
			f.Perm = perm
		}
		for _, d := range parentDirs(p) {
			pre.Dirs[d] = true
		}
	}
	for _, d := range m.EmptyDirs {
		pre.Empty[d] = true
		pre.Dirs[d] = true
	}
	pre.Ignores, pre.Gitlinks, pre.Linked, pre.Ignored = map[string][]gitignore.Pattern{}, map[string]bool{}, map[string]bool{}, map[string]*File{}
	for _, mf := range m.Ignored {
		pre.Ignored[mf.Path] = &File{Mode: mf.Mode, Perm: defaultPerm(mf.Mode), Size: mf.Size, Mtime: mf.Mtime, Ctime: mf.Ctime, Ino: mf.Ino, OID: mf.OID}
		if perm, ok := m.Perms[mf.Path]; ok {
			pre.Ignored[mf.Path].Perm = perm
		}
	}
	return pre
}

// loadIgnoreRules gives pre the ignore rules as the snapshot found them,
// from its own blobs of the .gitignore files, and the index's submodules.
func (r *Repo) loadIgnoreRules(ref string, pre *Tree, ii *indexInfo) error {
	for p, f := range pre.Files {
		if path.Base(p) != ".gitignore" || f.Mode == filemode.Symlink || scope.Reserved(p) {
			continue
		}
		b, err := r.blobBytes(f.OID)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", ref, p, err)
		}
		pre.Ignores[parentDir(p)] = gitignore.ParsePatterns(b, parentDir(p))
	}
	for d := range ii.gitlinks {
		pre.Gitlinks[d] = true
	}
	return nil
}
