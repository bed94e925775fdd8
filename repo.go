package orket

import (
	"errors"
	"io"
	"path/filepath"
	"strings"

	"github.com/orket/orket/patch"
	"github.com/orket/orket/scope"
	"github.com/orket/orket/txn"
)

// A Repo is a git repository orket works in: its work tree, its git
// directory, how its scans are made (Options).
type Repo = txn.Repo

// Open finds the repository whose work tree holds dir.
func Open(dir string) (*Repo, error) {
	r, err := txn.Discover(dir)
	var unsup *txn.UnsupportedError
	switch {
	case errors.Is(err, txn.ErrNotRepo):
		abs, _ := filepath.Abs(dir)
		return nil, &Error{Code: EGitRequired, Err: err, Msg: abs + " is not inside a git work tree",
			Hint: "run orket inside a repository (git init creates one) or pass --repo DIR"}
	case errors.As(err, &unsup):
		return nil, &Error{Code: ERepoUnsupported, Err: err, Msg: err.Error(), Hint: "run orket in a non-bare work tree"}
	case err != nil:
		return nil, &Error{Code: EUsage, Err: err, Msg: "--repo " + err.Error(), Hint: "pass an existing directory"}
	}
	return r, nil
}

// ResolveScopes makes scope patterns given relative to the directory wd,
// as git pathspecs are (":/" names the root), repository-relative. A wd
// outside the work tree (--repo elsewhere) takes them from the root.
func ResolveScopes(repo *Repo, wd string, given []string) ([]string, error) {
	dir := ""
	if wd != "" {
		if real, err := filepath.EvalSymlinks(wd); err == nil {
			wd = real
		}
		if rel, err := filepath.Rel(repo.Root, wd); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			dir = filepath.ToSlash(rel)
		}
	}
	out := make([]string, 0, len(given))
	for _, g := range given {
		p, err := scope.Resolve(dir, g)
		if err != nil {
			return nil, &Error{Code: EUsage, Err: err, Msg: err.Error(),
				Hint: "scopes are relative to the current directory, as git pathspecs are (:/ for the repository root)"}
		}
		out = append(out, p)
	}
	return out, nil
}

// ReadPatch reads a unified diff as a run's edit; name says where it
// came from ("-" for stdin).
func ReadPatch(name string, r io.Reader) (PatchEdit, error) {
	p, err := patch.Parse(r)
	if err != nil {
		return PatchEdit{}, err
	}
	return PatchEdit{Name: name, Patch: p}, nil
}
