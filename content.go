package orket

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"golang.org/x/sys/unix"

	"github.com/orket/orket/store"
)

// maxContentBytes bounds what a run reads to name its tree's content; a
// bigger change has no content key (and no flaky mark by content).
const maxContentBytes = 64 << 20

// contentKey names the content of the tree a run verified, so that a
// command that failed and later passed on the same content is known to be
// flaky (docs/verdicts.md, Flaky steps): a tree id (the snapshot's, or the
// base commit's for a verify-only run) and the content of every path the
// run changed from it. It returns "" when the content cannot be named
// cheaply.
func (r *run) contentKey(base plumbing.Hash, paths []string) string {
	if base.IsZero() {
		return ""
	}
	root, err := r.req.Repo.FS()
	if err != nil {
		return ""
	}
	h := sha256.New()
	h.Write([]byte(r.req.Edit.Source() + "\x00" + base.String() + "\n"))
	sorted := append([]string{}, paths...)
	sort.Strings(sorted)
	var total int64
	for _, p := range sorted {
		io.WriteString(h, p+"\x00")
		st, err := root.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR):
			io.WriteString(h, "-\n")
			continue
		case err != nil:
			return ""
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			target, err := root.Readlink(p)
			if err != nil {
				return ""
			}
			io.WriteString(h, "l"+target+"\n")
		case unix.S_IFREG:
			if total += st.Size; total > maxContentBytes {
				return ""
			}
			f, err := root.Open(p)
			if err != nil {
				return ""
			}
			x := "f"
			if st.Mode&0o111 != 0 {
				x = "x"
			}
			io.WriteString(h, x)
			_, err = io.Copy(h, f)
			f.Close()
			if err != nil {
				return ""
			}
			io.WriteString(h, "\n")
		default:
			io.WriteString(h, "d\n")
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// treeOfCommit is the tree id of a commit; zero when it cannot be read.
func (r *run) treeOfCommit(id plumbing.Hash) plumbing.Hash {
	c, err := object.GetCommit(r.req.Repo.Git.Storer, id)
	if err != nil {
		return plumbing.ZeroHash
	}
	return c.TreeHash
}

// snapshotContent names the working tree a snapshot recorded: the index's
// tree, overlaid with the files of its worktree entry that differ from it
// (a file whose stat data is stale is stored there with the index's
// content), and the deleted paths. The rest of a snapshot (its manifest,
// git state) differs from run to run. Zero when it cannot be read.
func (r *run) snapshotContent(commit plumbing.Hash) plumbing.Hash {
	c, err := object.GetCommit(r.req.Repo.Git.Storer, commit)
	if err != nil {
		return plumbing.ZeroHash
	}
	top, err := c.Tree()
	if err != nil {
		return plumbing.ZeroHash
	}
	// The index's tree is named by its entry; it is read only if the
	// worktree holds files to compare with it (reading it can mean
	// loading a large pack's index).
	ie, err1 := top.FindEntry("index-tree")
	work, err2 := top.Tree("worktree")
	if err1 != nil || err2 != nil {
		return plumbing.ZeroHash
	}
	var index *object.Tree
	h := sha256.New()
	io.WriteString(h, "index "+ie.Hash.String()+"\n")
	if e, err := top.FindEntry("deleted"); err == nil {
		io.WriteString(h, "deleted "+e.Hash.String()+"\n")
	}
	// Depth first, in tree order, as git lists a tree; the names and ids
	// are in the trees, so no blob is read. orket's own state, which runs
	// change, is left out.
	var walk func(t *object.Tree, prefix string) error
	walk = func(t *object.Tree, prefix string) error {
		for _, e := range t.Entries {
			name := prefix + e.Name
			switch {
			case name == store.Dir, e.Mode == filemode.Submodule:
			case e.Mode == filemode.Dir:
				sub, err := object.GetTree(r.req.Repo.Git.Storer, e.Hash)
				if err != nil {
					return err
				}
				if err := walk(sub, name+"/"); err != nil {
					return err
				}
			default:
				if index == nil {
					var err error
					if index, err = object.GetTree(r.req.Repo.Git.Storer, ie.Hash); err != nil {
						return err
					}
				}
				if ix, err := index.FindEntry(name); err == nil && ix.Hash == e.Hash && ix.Mode == e.Mode {
					continue // as the index has it
				}
				io.WriteString(h, e.Mode.String()+" "+e.Hash.String()+" "+name+"\n")
			}
		}
		return nil
	}
	if walk(work, "") != nil {
		return plumbing.ZeroHash
	}
	var id plumbing.Hash
	copy(id[:], h.Sum(nil))
	return id
}

// cleanTreeContent is what snapshotContent names for a snapshot of a
// clean tree, whose index and work tree are the commit's tree: its index
// tree, and no deleted path (an empty list).
func cleanTreeContent(tree plumbing.Hash) plumbing.Hash {
	h := sha256.New()
	io.WriteString(h, "index "+tree.String()+"\n")
	io.WriteString(h, "deleted "+plumbing.ComputeHash(plumbing.BlobObject, nil).String()+"\n")
	var id plumbing.Hash
	copy(id[:], h.Sum(nil))
	return id
}

// baseCommit is the commit a verify-only run's touch set is the diff
// from: --base, or HEAD.
func (r *run) baseCommit(rev string) plumbing.Hash {
	if rev == "" {
		rev = "HEAD"
	}
	h, err := r.req.Repo.Git.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return plumbing.ZeroHash
	}
	return *h
}
