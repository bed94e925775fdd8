package txn

import (
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Export writes the files of the commit rev names ("" is HEAD) into dir,
// an empty directory of the caller's: a clean copy of the tree, to verify
// apart from the work tree (orket doctor). Executable files are 0755,
// others 0644, symlinks links; submodules are left out. No path of the
// tree can leave dir: git's trees hold no "..", and a name under a
// symlink of the tree is refused.
func (r *Repo) Export(rev, dir string) error {
	files, err := r.TreeOf(rev)
	if err != nil {
		return err
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	links := map[string]bool{}
	for _, p := range paths {
		for d := p; strings.Contains(d, "/"); {
			d = d[:strings.LastIndexByte(d, '/')]
			if links[d] {
				return &os.PathError{Op: "export", Path: p, Err: os.ErrInvalid}
			}
		}
		f := files[p]
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := r.exportFile(f, dst); err != nil {
			return err
		}
		if f.Mode == filemode.Symlink {
			links[p] = true
		}
	}
	return nil
}

func (r *Repo) exportFile(f *File, dst string) error {
	obj, err := r.blob(f.OID)
	if err != nil {
		return err
	}
	rd, err := obj.Reader()
	if err != nil {
		return err
	}
	defer rd.Close()
	if f.Mode == filemode.Symlink {
		target, err := io.ReadAll(rd)
		if err != nil {
			return err
		}
		return os.Symlink(string(target), dst)
	}
	perm := os.FileMode(0o644)
	if f.Mode == filemode.Executable {
		perm = 0o755
	}
	w, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, rd); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}
