package txn

import (
	"io"

	"github.com/go-git/go-git/v5/plumbing"
)

// ReadBlob returns a blob's content from the object store.
func (r *Repo) ReadBlob(id plumbing.Hash) ([]byte, error) { return r.blobBytes(id) }

func (r *Repo) blobBytes(id plumbing.Hash) ([]byte, error) {
	rd, err := r.openBlob(id)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}
