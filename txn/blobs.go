package txn

import (
	"errors"
	"io"
	"os"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// side is a working-tree file's mode, blob id and content.
type side struct {
	mode    filemode.FileMode
	oid     plumbing.Hash
	content []byte
}

// ReadBlob returns a blob's content from the object store.
func (r *Repo) ReadBlob(id plumbing.Hash) ([]byte, error) { return r.blobBytes(id) }

func (r *Repo) blobBytes(id plumbing.Hash) ([]byte, error) {
	obj, err := r.blob(id)
	if err != nil {
		return nil, err
	}
	rd, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}

// diskSide reads a working-tree file (beneath the root, never through a
// symlink) as its mode, blob id and content.
func (r *Repo) diskSide(p string) (*side, error) {
	root, err := r.FS()
	if err != nil {
		return nil, err
	}
	st, err := root.Lstat(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	f, ok := fileOfStat(&st)
	if !ok {
		return nil, nil
	}
	var b []byte
	if f.Mode == filemode.Symlink {
		t, err := root.Readlink(p)
		if err != nil {
			return nil, err
		}
		b = []byte(t)
	} else if b, err = root.ReadFile(p); err != nil {
		return nil, err
	}
	return &side{mode: f.Mode, oid: blobHash(b), content: b}, nil
}
