package memsync

import (
	"errors"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// objectLog is the object store a merge writes through: it remembers the
// objects it stored, so that they are made durable (fsynced) before the
// sync journal or the memory ref names them. go-git does not sync the
// loose objects it writes.
type objectLog struct {
	storer.EncodedObjectStorer
	mu  sync.Mutex
	ids []plumbing.Hash
}

func (l *objectLog) SetEncodedObject(o plumbing.EncodedObject) (plumbing.Hash, error) {
	h, err := l.EncodedObjectStorer.SetEncodedObject(o)
	if err == nil {
		l.mu.Lock()
		l.ids = append(l.ids, h)
		l.mu.Unlock()
	}
	return h, err
}

// sync fsyncs the loose objects stored since the last sync, then their
// directories. A store that is not on disk has nothing to sync.
func (l *objectLog) sync() error {
	fs, ok := l.EncodedObjectStorer.(*filesystem.Storage)
	if !ok {
		return nil
	}
	l.mu.Lock()
	ids := l.ids
	l.ids = nil
	l.mu.Unlock()
	objects := filepath.Join(fs.Filesystem().Root(), "objects")
	dirs := map[string]bool{}
	for _, id := range ids {
		h := id.String()
		p := filepath.Join(objects, h[:2], h[2:])
		if err := fsyncPath(p); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // packed, not loose
			}
			return err
		}
		dirs[filepath.Dir(p)] = true
	}
	for d := range dirs {
		if err := fsyncPath(d); err != nil {
			return err
		}
	}
	return nil
}

func fsyncPath(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
