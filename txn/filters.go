package txn

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"golang.org/x/sys/unix"

	"github.com/orket/orket/internal/fsroot"
)

// Where git converts content (Git LFS and other filters, end-of-line
// conversion, ident), a blob is not what the work tree holds: git
// smudges it on checkout and cleans the file on add. orket keeps the
// work tree's own bytes in its snapshots, so a revert needs neither; a
// take-out to a commit's files (a failed --worktree candidate, a
// rejected --worktree run) does, and only the user's git gives git's
// filters (their configuration, their git-lfs). These are the two other
// places product code runs git, beside gitCommit.

// writeCheckedOut writes blob f to p as git would check it out at p:
// through the smudge filter and end-of-line conversion its attributes
// name (git cat-file --filters).
func (r *Repo) writeCheckedOut(root *fsroot.Root, p string, f *File) error {
	args := []string{"cat-file", "--filters", "--path=" + p, f.OID.String()}
	if st, err := root.Lstat(p); err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
		// What stands in the way goes only once git gave the content (an
		// LFS object it cannot fetch leaves the directory).
		var content bytes.Buffer
		if err := r.gitFilter(&content, nil, args...); err != nil {
			return err
		}
		if err := root.RemoveAll(p); err != nil {
			return err
		}
		return root.WriteFile(p, content.Bytes(), fsroot.FileMode(f.Perm), fsroot.Options{})
	}
	return root.WriteFrom(p, fsroot.FileMode(f.Perm), fsroot.Options{}, func(w io.Writer) error {
		return r.gitFilter(w, nil, args...)
	})
}

// CleanedOID is the blob git would store for p as the work tree holds it
// now (git hash-object --path: through the clean filter and end-of-line
// conversion), without writing it.
func (r *Repo) CleanedOID(p string) (plumbing.Hash, error) {
	root, err := r.FS()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	rd, err := root.Open(p)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer rd.Close()
	var out bytes.Buffer
	if err := r.gitFilter(&out, rd, "hash-object", "--stdin", "--path="+p); err != nil {
		return plumbing.ZeroHash, err
	}
	id := strings.TrimSpace(out.String())
	if !plumbing.IsHash(id) {
		return plumbing.ZeroHash, fmt.Errorf("git hash-object %s: %q is not an object id", p, id)
	}
	return plumbing.NewHash(id), nil
}

// Converted reports whether git may store p other than as its bytes (see
// conversions), as the transaction's snapshot found the repository.
func (t *Txn) Converted(p string) bool { return t.snap.idx != nil && t.snap.idx.conv.applies(p) }

// ConvertedOnCheckout is Converted for a take-out of paths to a commit's
// files. The snapshot's view is the work tree's before the take-out: when
// paths hold a .gitattributes (one the change added, changed or removed),
// the commit's attributes may convert what the work tree's did not, so
// every file counts.
func (t *Txn) ConvertedOnCheckout(paths []string) func(string) bool {
	for _, p := range paths {
		if isAttributes(p) {
			return func(string) bool { return true }
		}
	}
	return t.Converted
}

// isAttributes reports whether p is a .gitattributes file.
func isAttributes(p string) bool { return path.Base(p) == ".gitattributes" }

// gitFilter runs the user's git in the work tree with args, stdin from in
// (nil: none), stdout to out; its error carries what git said.
func (r *Repo) gitFilter(out io.Writer, in io.Reader, args ...string) error {
	cmd := exec.Command("git", args...)
	cmd.Dir = r.Root
	cmd.Stdin, cmd.Stdout = in, out
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return nil
}
