package txn

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// A PatchError reports a patch that does not parse or does not apply.
type PatchError struct {
	Path string // the file at fault, if one is
	Err  error
}

func (e *PatchError) Error() string {
	if e.Path == "" {
		return e.Err.Error()
	}
	return e.Path + ": " + e.Err.Error()
}

func (e *PatchError) Unwrap() error { return e.Err }

// A Patch is a parsed git-style unified diff.
type Patch struct {
	files []*gitdiff.File
}

// ParsePatch reads a unified diff (git's extended format: renames, modes,
// binary patches).
func ParsePatch(r io.Reader) (*Patch, error) {
	files, _, err := gitdiff.Parse(r)
	if err != nil {
		return nil, &PatchError{Err: err}
	}
	if len(files) == 0 {
		return nil, &PatchError{Err: errors.New("no file changes found in the patch")}
	}
	p := &Patch{files: files}
	for _, f := range files {
		for _, name := range []string{f.OldName, f.NewName} {
			if name == "" {
				continue
			}
			if err := checkPatchPath(name); err != nil {
				return nil, &PatchError{Path: name, Err: err}
			}
		}
		if f.IsBinary && f.BinaryFragment == nil {
			return nil, &PatchError{Path: patchName(f), Err: errors.New("binary change without data (make the patch with git diff --binary)")}
		}
	}
	return p, nil
}

// An UnsafePathError is a patch path that escapes the repository.
type UnsafePathError struct{ Path, Reason string }

func (e *UnsafePathError) Error() string { return e.Path + ": " + e.Reason }

func checkPatchPath(name string) error {
	switch {
	case strings.HasPrefix(name, "/"):
		return &UnsafePathError{name, "absolute path"}
	case strings.Contains(name, "\x00"):
		return &UnsafePathError{name, "NUL in path"}
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == ".." {
			return &UnsafePathError{name, "escapes the repository"}
		}
	}
	return nil
}

func patchName(f *gitdiff.File) string {
	if f.NewName != "" {
		return f.NewName
	}
	return f.OldName
}

// Paths returns the planned touch set: every path the patch writes (both
// sides of a rename), sorted.
func (p *Patch) Paths() []string {
	set := map[string]bool{}
	for _, f := range p.files {
		if f.OldName != "" && (f.IsDelete || f.IsRename) {
			set[path.Clean(f.OldName)] = true
		}
		if f.NewName != "" {
			set[path.Clean(f.NewName)] = true
		}
	}
	return sortedKeys(set)
}

type plannedWrite struct {
	path    string
	delete  bool
	content []byte
	mode    os.FileMode // 0644, 0755 or symlink
}

// plan computes every write of the patch in memory, reading the current
// files, and refuses paths that go through a symlink. Nothing is written.
func (r *Repo) plan(p *Patch) ([]plannedWrite, error) {
	var writes []plannedWrite
	pending := map[string][]byte{} // content as earlier files of the patch left it
	deleted := map[string]bool{}
	for _, f := range p.files {
		old, name := path.Clean(f.OldName), path.Clean(f.NewName)
		if f.OldName == "" {
			old = ""
		}
		if f.NewName == "" {
			name = ""
		}
		var src []byte
		if !f.IsNew {
			if b, ok := pending[old]; ok && !deleted[old] {
				src = b
			} else {
				b, err := r.readForPatch(old, f)
				if err != nil {
					return nil, err
				}
				src = b
			}
		} else if name != "" {
			if err := r.noSymlinkParents(name); err != nil {
				return nil, err
			}
			if _, err := os.Lstat(r.abs(name)); err == nil && !deleted[name] {
				return nil, &PatchError{Path: name, Err: errors.New("already exists")}
			}
		}
		var dst bytes.Buffer
		if err := gitdiff.Apply(&dst, bytes.NewReader(src), f); err != nil {
			return nil, &PatchError{Path: patchName(f), Err: err}
		}
		if f.IsDelete {
			writes = append(writes, plannedWrite{path: old, delete: true})
			deleted[old] = true
			delete(pending, old)
			continue
		}
		if f.IsRename && !f.IsCopy {
			writes = append(writes, plannedWrite{path: old, delete: true})
			deleted[old] = true
			delete(pending, old)
		}
		if err := r.noSymlinkParents(name); err != nil {
			return nil, err
		}
		mode := f.NewMode
		if mode == 0 {
			mode = f.OldMode
			if mode == 0 && !f.IsNew {
				if fi, err := os.Lstat(r.abs(old)); err == nil {
					mode = fi.Mode()
				}
			}
		}
		writes = append(writes, plannedWrite{path: name, content: dst.Bytes(), mode: mode})
		pending[name] = dst.Bytes()
		delete(deleted, name)
	}
	return writes, nil
}

func (r *Repo) readForPatch(name string, f *gitdiff.File) ([]byte, error) {
	if err := r.noSymlinkParents(name); err != nil {
		return nil, err
	}
	abs := r.abs(name)
	fi, err := os.Lstat(abs)
	if err != nil {
		return nil, &PatchError{Path: name, Err: errors.New("does not exist in the working tree")}
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		if f.OldMode != 0 && f.OldMode&os.ModeSymlink == 0 && f.OldMode != 0o120000 {
			return nil, &PatchError{Path: name, Err: errors.New("is a symlink, the patch expects a file")}
		}
		t, err := os.Readlink(abs)
		return []byte(t), err
	}
	if !fi.Mode().IsRegular() {
		return nil, &PatchError{Path: name, Err: errors.New("is not a regular file")}
	}
	return os.ReadFile(abs)
}

// A SymlinkPathError is a patch path that would be written through a
// symlinked directory: refused, wherever the link points.
type SymlinkPathError struct{ Path, Link string }

func (e *SymlinkPathError) Error() string {
	return e.Path + ": would be written through the symlink " + e.Link
}

func (r *Repo) noSymlinkParents(name string) error {
	dirs := parentDirs(name)
	for i := len(dirs) - 1; i >= 0; i-- {
		fi, err := os.Lstat(r.abs(dirs[i]))
		if err != nil {
			return nil // does not exist yet: will be created as a directory
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return &SymlinkPathError{Path: name, Link: dirs[i]}
		}
	}
	return nil
}

// CheckPatch reports whether the patch applies cleanly, writing nothing.
func (r *Repo) CheckPatch(p *Patch) error {
	_, err := r.plan(p)
	return err
}

// ApplyPatch writes the patch into the working tree. It plans every write
// first, so a patch that does not apply writes nothing.
func (r *Repo) ApplyPatch(p *Patch) error {
	writes, err := r.plan(p)
	if err != nil {
		return err
	}
	for _, w := range writes {
		if !w.delete {
			continue
		}
		if err := os.Remove(r.abs(w.path)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		// As git apply does, remove directories the deletion left empty.
		for _, d := range parentDirs(w.path) {
			if os.Remove(r.abs(d)) != nil {
				break
			}
		}
	}
	sort.SliceStable(writes, func(i, j int) bool { return writes[i].path < writes[j].path })
	for _, w := range writes {
		if w.delete {
			continue
		}
		abs := r.abs(w.path)
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			return err
		}
		tmp := filepath.Join(filepath.Dir(abs), ".orket-tmp-"+randHex(6))
		if w.mode&os.ModeSymlink != 0 || w.mode == 0o120000 {
			if err := os.Symlink(string(w.content), tmp); err != nil {
				return err
			}
		} else {
			perm := os.FileMode(0o644)
			if w.mode&0o100 != 0 {
				perm = 0o755
			}
			if err := os.WriteFile(tmp, w.content, perm); err != nil {
				os.Remove(tmp)
				return err
			}
			if err := os.Chmod(tmp, perm); err != nil {
				os.Remove(tmp)
				return err
			}
		}
		if err := os.Rename(tmp, abs); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("write %s: %w", w.path, err)
		}
	}
	return nil
}
