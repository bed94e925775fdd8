package txn

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// CommitPaths commits exactly the named paths as they are in the working
// tree, on top of HEAD: the new tree is HEAD's with those paths replaced
// (or removed), whatever else the index holds. The index entries of those
// paths are updated to match; other staged changes stay staged.
func (r *Repo) CommitPaths(paths []string, msg string) (plumbing.Hash, error) {
	base, err := r.TreeOf("")
	if err != nil {
		return plumbing.ZeroHash, err
	}
	items := map[string]treeItem{}
	for p, f := range base {
		items[p] = treeItem{mode: f.Mode, id: f.OID}
	}
	ow := newObjectWriter(r)
	after := map[string]*File{}
	for _, p := range paths {
		if strings.HasSuffix(p, "/") {
			continue // an empty directory: git does not track it
		}
		s, err := r.diskSide(p)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if s == nil {
			delete(items, p)
			continue
		}
		if _, err := ow.blob(s.content); err != nil {
			return plumbing.ZeroHash, err
		}
		items[p] = treeItem{mode: s.mode, id: s.oid}
		after[p] = &File{Mode: s.mode, OID: s.oid}
	}
	root, err := ow.tree(items, "")
	if err != nil {
		return plumbing.ZeroHash, err
	}
	sig, err := r.signature()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	c := &object.Commit{Author: sig, Committer: sig, TreeHash: root, Message: strings.TrimRight(msg, "\n") + "\n"}
	head, herr := r.Git.Head()
	if herr == nil {
		c.ParentHashes = []plumbing.Hash{head.Hash()}
	}
	obj := r.Git.Storer.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	id, err := r.Git.Storer.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if err := syncFS(r.CommonDir); err != nil {
		return plumbing.ZeroHash, err
	}
	// Move the branch HEAD names (or HEAD itself when detached).
	headFile := filepath.Join(r.GitDir, "HEAD")
	b, err := os.ReadFile(headFile)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	target := headFile
	if ref, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "ref: "); ok {
		target = filepath.Join(r.CommonDir, filepath.FromSlash(ref))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	if err := writeFile(target, []byte(id.String()+"\n"), true); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := r.setIndexEntries(paths, after); err != nil {
		return id, fmt.Errorf("committed %s, but updating the index failed: %w", id, err)
	}
	return id, nil
}

// signature is the committer as git would find it: GIT_COMMITTER_* or
// user.name / user.email from the configuration.
func (r *Repo) signature() (object.Signature, error) {
	name, email := os.Getenv("GIT_COMMITTER_NAME"), os.Getenv("GIT_COMMITTER_EMAIL")
	if cfg, err := r.Git.ConfigScoped(0); err == nil {
		if name == "" {
			name = cfg.User.Name
		}
		if email == "" {
			email = cfg.User.Email
		}
	}
	if name == "" || email == "" {
		return object.Signature{}, errors.New("no committer identity; set user.name and user.email (git config) or GIT_COMMITTER_NAME/EMAIL")
	}
	return object.Signature{Name: name, Email: email, When: time.Now()}, nil
}
