package orket

import (
	"errors"
	"io"
	"path/filepath"

	"github.com/orket/orket/patch"
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

// ReadPatch reads a unified diff as a run's edit; name says where it
// came from ("-" for stdin).
func ReadPatch(name string, r io.Reader) (PatchEdit, error) {
	p, err := patch.Parse(r)
	if err != nil {
		return PatchEdit{}, err
	}
	return PatchEdit{Name: name, Patch: p}, nil
}
