// Package patch reads, plans, applies and writes git-style unified diffs
// (adds, deletes, renames, mode changes, binary literals), and plain ones
// (diff -u, diff -ruN) whose file names are read at the strip level the
// tree tells (Resolve).
//
// A patch is planned before any byte is written: every file's new content
// is computed in memory against the tree as it is, so a patch that does not
// apply writes nothing. Applying then goes through a writer that refuses
// any path the plan does not name, beneath the repository root, never
// through a symlink.
package patch

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"golang.org/x/sys/unix"

	"github.com/orket/orket/internal/fsroot"
)

// An Error reports a patch that does not parse or does not apply.
type Error struct {
	Path string // the file at fault, if one is
	Err  error
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Err.Error()
	}
	return e.Path + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// An UnsafePathError is a patch path that escapes the repository.
type UnsafePathError struct{ Path, Reason string }

func (e *UnsafePathError) Error() string { return e.Path + ": " + e.Reason }

// A SymlinkPathError is a patch path that would be written through a
// symlink: refused, wherever the link points.
type SymlinkPathError struct{ Path, Link string }

func (e *SymlinkPathError) Error() string {
	return e.Path + ": would be written through the symlink " + e.Link
}

// A Patch is a parsed unified diff.
type Patch struct {
	files []*gitdiff.File
	// plain holds, beside each file from a plain header (no diff --git
	// line), its names as written; nil when every header is git's.
	plain    []*plainNames
	resolved bool // the plain names are paths (Resolve)
	strip    int
}

// Parse reads a unified diff: git's extended format (renames, modes,
// binary patches), or plain diff -u output, whose names Resolve reads
// against the tree.
func Parse(r io.Reader) (*Patch, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, &Error{Err: err}
	}
	files, _, err := gitdiff.Parse(bytes.NewReader(raw))
	if err != nil {
		return nil, &Error{Err: err}
	}
	if len(files) == 0 {
		return nil, &Error{Err: errors.New("no file changes found in the patch")}
	}
	for _, f := range files {
		for _, name := range []string{f.OldName, f.NewName} {
			if name == "" {
				continue
			}
			if err := checkPath(name); err != nil {
				return nil, &Error{Path: name, Err: err}
			}
		}
		if f.IsBinary && f.BinaryFragment == nil {
			return nil, &Error{Path: fileName(f), Err: errors.New("binary change without data (make the patch with git diff --binary)")}
		}
	}
	p := &Patch{files: files}
	if err := p.match(raw); err != nil {
		return nil, err
	}
	return p, nil
}

func checkPath(name string) error {
	switch {
	case strings.HasPrefix(name, "/"):
		return &UnsafePathError{name, "absolute path"}
	case strings.Contains(name, "\x00"):
		return &UnsafePathError{name, "NUL in path"}
	case path.Clean(name) == ".":
		return errors.New("names the top directory, not a file")
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == ".." {
			return &UnsafePathError{name, "escapes the repository"}
		}
	}
	return nil
}

func fileName(f *gitdiff.File) string {
	if f.NewName != "" {
		return f.NewName
	}
	return f.OldName
}

// Paths returns the planned touch set: every path the patch writes (both
// sides of a rename), sorted. A plain diff's names are paths only once
// Resolve (or Plan) has read them against the tree: Paths before that is
// a bug of the caller, and panics rather than name a path that may be
// wrong.
func (p *Patch) Paths() []string {
	if p.plain != nil && !p.resolved {
		panic("patch: Paths of a plain diff before Resolve")
	}
	set := map[string]bool{}
	for _, f := range p.files {
		if f.OldName != "" && (f.IsDelete || f.IsRename) {
			set[path.Clean(f.OldName)] = true
		}
		if f.NewName != "" {
			set[path.Clean(f.NewName)] = true
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// A write is one planned change of one path.
type write struct {
	path    string
	delete  bool
	content []byte
	mode    fs.FileMode // 0644, 0755, or fs.ModeSymlink
}

// A Plan is every write of a patch, computed against a tree.
type Plan struct {
	writes []write
}

// Plan computes every write of the patch in memory against the tree at
// root, and refuses paths that go through a symlink (on disk or made by
// the patch itself). Nothing is written.
func (p *Patch) Plan(root *fsroot.Root) (*Plan, error) {
	if err := p.Resolve(root); err != nil {
		return nil, err
	}
	var writes []write
	pending := map[string][]byte{} // content as earlier files of the patch left it
	deleted := map[string]bool{}
	links := map[string]bool{} // symlinks the patch creates
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
				b, err := read(root, old, f, links)
				if err != nil {
					return nil, err
				}
				src = b
			}
		} else if name != "" {
			if err := noSymlinkParents(root, name, links); err != nil {
				return nil, err
			}
			if _, err := root.Lstat(name); err == nil && !deleted[name] {
				return nil, &Error{Path: name, Err: errors.New("already exists")}
			}
		}
		var dst bytes.Buffer
		if err := gitdiff.Apply(&dst, bytes.NewReader(src), f); err != nil {
			return nil, &Error{Path: fileName(f), Err: err}
		}
		if f.IsDelete {
			writes = append(writes, write{path: old, delete: true})
			deleted[old] = true
			delete(pending, old)
			continue
		}
		if f.IsRename && !f.IsCopy {
			writes = append(writes, write{path: old, delete: true})
			deleted[old] = true
			delete(pending, old)
		}
		if err := noSymlinkParents(root, name, links); err != nil {
			return nil, err
		}
		mode := f.NewMode
		if mode == 0 {
			mode = f.OldMode
			if mode == 0 && !f.IsNew {
				if st, err := root.Lstat(old); err == nil {
					mode = modeOf(st.Mode)
				}
			}
		}
		w := write{path: name, content: dst.Bytes(), mode: normalMode(mode)}
		if w.mode == fs.ModeSymlink {
			links[name] = true
		} else {
			delete(links, name)
		}
		writes = append(writes, w)
		pending[name] = dst.Bytes()
		delete(deleted, name)
	}
	return &Plan{writes: writes}, nil
}

// normalMode is a git mode as orket writes it: a symlink, or a regular
// file with 0644 or 0755.
func normalMode(m fs.FileMode) fs.FileMode {
	switch {
	case m&fs.ModeSymlink != 0 || m == 0o120000:
		return fs.ModeSymlink
	case m&0o100 != 0:
		return 0o755
	}
	return 0o644
}

func modeOf(st uint32) fs.FileMode {
	switch st & unix.S_IFMT {
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFREG:
		return fs.FileMode(st & 0o777)
	}
	return fs.ModeIrregular
}

func read(root *fsroot.Root, name string, f *gitdiff.File, links map[string]bool) ([]byte, error) {
	if err := noSymlinkParents(root, name, links); err != nil {
		return nil, err
	}
	st, err := root.Lstat(name)
	if err != nil {
		return nil, &Error{Path: name, Err: errors.New("does not exist in the working tree")}
	}
	switch modeOf(st.Mode) {
	case fs.ModeSymlink:
		if f.OldMode != 0 && normalMode(f.OldMode) != fs.ModeSymlink {
			return nil, &Error{Path: name, Err: errors.New("is a symlink, the patch expects a file")}
		}
		t, err := root.Readlink(name)
		return []byte(t), err
	case fs.ModeIrregular:
		return nil, &Error{Path: name, Err: errors.New("is not a regular file")}
	}
	return root.ReadFile(name)
}

// noSymlinkParents refuses a path below a symlink that exists on disk or
// that the patch creates.
func noSymlinkParents(root *fsroot.Root, name string, links map[string]bool) error {
	var dirs []string
	for d := path.Dir(name); d != "." && d != "/"; d = path.Dir(d) {
		dirs = append(dirs, d)
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if links[dirs[i]] {
			return &SymlinkPathError{Path: name, Link: dirs[i]}
		}
		st, err := root.Lstat(dirs[i])
		if err != nil {
			if errors.Is(err, fsroot.ErrEscapes) {
				return &SymlinkPathError{Path: name, Link: dirs[i]}
			}
			continue // does not exist yet: will be created as a directory
		}
		if modeOf(st.Mode) == fs.ModeSymlink {
			return &SymlinkPathError{Path: name, Link: dirs[i]}
		}
	}
	return nil
}

// Apply writes the plan into the tree at root: deletions first (and the
// directories they leave empty, as git apply does), then every new content
// in path order.
func (pl *Plan) Apply(root *fsroot.Root) error {
	w := newPlannedWriter(root, pl)
	for _, wr := range pl.writes {
		if wr.delete {
			if err := w.remove(wr.path); err != nil {
				return err
			}
		}
	}
	writes := append([]write(nil), pl.writes...)
	sort.SliceStable(writes, func(i, j int) bool { return writes[i].path < writes[j].path })
	for _, wr := range writes {
		if wr.delete {
			continue
		}
		if err := w.write(wr); err != nil {
			return err
		}
	}
	return nil
}

// A plannedWriter is the only way Apply writes: it refuses any path the
// plan does not name, and its root refuses any path through a symlink.
type plannedWriter struct {
	root    *fsroot.Root
	allowed map[string]bool
}

func newPlannedWriter(root *fsroot.Root, pl *Plan) *plannedWriter {
	w := &plannedWriter{root: root, allowed: map[string]bool{}}
	for _, wr := range pl.writes {
		w.allowed[wr.path] = true
	}
	return w
}

var errNotPlanned = errors.New("not in the patch's plan")

func (w *plannedWriter) remove(p string) error {
	if !w.allowed[p] {
		return &Error{Path: p, Err: errNotPlanned}
	}
	if err := w.root.Remove(p); err != nil {
		return err
	}
	w.root.RemoveEmptyParents(p)
	return nil
}

func (w *plannedWriter) write(wr write) error {
	if !w.allowed[wr.path] {
		return &Error{Path: wr.path, Err: errNotPlanned}
	}
	if wr.mode == fs.ModeSymlink {
		return w.root.Symlink(string(wr.content), wr.path)
	}
	return w.root.WriteFile(wr.path, wr.content, wr.mode, fsroot.Options{})
}
