package patch

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"golang.org/x/sys/unix"

	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/internal/textmerge"
)

// MaxInline bounds what Format writes into a patch for one side of a
// file: a bigger file, or a text of more lines than MaxLines, is written
// as a reference to its blob instead (the patch applies with git apply as
// long as the blob is in the repository; Large keeps it there). Memory
// stays bounded whatever the size of the files changed.
const (
	MaxInline = 4 << 20
	MaxLines  = 200_000
)

// A Side is one side of a file change; a nil *Side is an absent file.
// Content is nil when Size is over MaxInline.
type Side struct {
	Mode    filemode.FileMode
	OID     plumbing.Hash
	Size    int64
	Content []byte
}

// Before returns a path's state before the change (nil: absent), with its
// content when it is at most MaxInline bytes.
type Before func(p string) (*Side, error)

// Large stores the file at p as it is on disk as a blob, streamed, and
// returns its id: for files too big to write into the patch.
type Large func(p string) (plumbing.Hash, error)

// Format writes a patch in git's format (binary files as literal GIT binary
// patches, big ones as blob references) taking each of paths from its
// state in before to its state on disk under root. git apply accepts it.
func Format(w io.Writer, root *fsroot.Root, paths []string, before Before, large Large) error {
	for _, p := range paths {
		if strings.HasSuffix(p, "/") {
			continue // a directory made or removed: no content to carry
		}
		a, err := before(p)
		if err != nil {
			return err
		}
		b, err := diskSide(root, p)
		if err != nil {
			return err
		}
		if big(a) || big(b) {
			if b != nil && b.Content == nil {
				if b.OID, err = large(p); err != nil {
					return err
				}
			}
			if _, err := io.WriteString(w, referencePatch(p, a, b)); err != nil {
				return err
			}
			continue
		}
		if f := filePatch(p, a, b); f != nil {
			if _, err := io.WriteString(w, f.String()); err != nil {
				return err
			}
		}
	}
	return nil
}

// big reports whether a side is too big to write out.
func big(s *Side) bool {
	return s != nil && (s.Size > MaxInline || s.Content == nil && s.Size > 0 ||
		bytes.Count(s.Content, []byte{'\n'}) > MaxLines)
}

// referencePatch is a file's change as git diff --full-index writes it
// without --binary: the blob ids, no data. git apply takes the new content
// from the repository's objects.
func referencePatch(p string, a, b *Side) string {
	var sb strings.Builder
	old, oldMode, nw, newMode := plumbing.ZeroHash, filemode.Empty, plumbing.ZeroHash, filemode.Empty
	if a != nil {
		old, oldMode = a.OID, a.Mode
	}
	if b != nil {
		nw, newMode = b.OID, b.Mode
	}
	qa, qb := quote("a/"+p), quote("b/"+p)
	fmt.Fprintf(&sb, "diff --git %s %s\n", qa, qb)
	switch {
	case a == nil:
		fmt.Fprintf(&sb, "new file mode %o\nindex %s..%s\nBinary files /dev/null and %s differ\n", newMode, old, nw, qb)
	case b == nil:
		fmt.Fprintf(&sb, "deleted file mode %o\nindex %s..%s\nBinary files %s and /dev/null differ\n", oldMode, old, nw, qa)
	case oldMode != newMode:
		fmt.Fprintf(&sb, "old mode %o\nnew mode %o\nindex %s..%s\nBinary files %s and %s differ\n", oldMode, newMode, old, nw, qa, qb)
	default:
		fmt.Fprintf(&sb, "index %s..%s %o\nBinary files %s and %s differ\n", old, nw, newMode, qa, qb)
	}
	return sb.String()
}

// quote writes a path as git does when it needs quoting.
func quote(p string) string {
	for _, c := range []byte(p) {
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return strconv.Quote(p)
		}
	}
	return p
}

// diskSide reads a working-tree file as a patch side (its content only
// when it is at most MaxInline bytes).
func diskSide(root *fsroot.Root, p string) (*Side, error) {
	st, err := root.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fsroot.ErrEscapes) || errors.Is(err, unix.ENOTDIR) {
		return nil, nil // gone, or below what is now a symlink or a file: absent as git sees it
	}
	if err != nil {
		return nil, err
	}
	var b []byte
	var mode filemode.FileMode
	switch m := modeOf(st.Mode); {
	case m == fs.ModeSymlink:
		t, err := root.Readlink(p)
		if err != nil {
			return nil, err
		}
		b, mode = []byte(t), filemode.Symlink
	case m == fs.ModeIrregular:
		return nil, nil // a directory or a special file: not a git file
	default:
		mode = filemode.Regular
		if m&0o100 != 0 {
			mode = filemode.Executable
		}
		if st.Size > MaxInline {
			return &Side{Mode: mode, Size: st.Size}, nil
		}
		if b, err = root.ReadFile(p); err != nil {
			return nil, err
		}
	}
	return &Side{Mode: mode, OID: plumbing.ComputeHash(plumbing.BlobObject, b), Size: int64(len(b)), Content: b}, nil
}

func filePatch(p string, a, b *Side) *gitdiff.File {
	if a == nil && b == nil {
		return nil
	}
	if a != nil && b != nil && a.Mode == b.Mode && a.OID == b.OID {
		return nil
	}
	f := &gitdiff.File{OldName: p, NewName: p}
	var oldC, newC []byte
	oldOID, newOID := plumbing.ZeroHash, plumbing.ZeroHash
	switch {
	case a == nil:
		f.IsNew, f.OldName = true, ""
		f.NewMode = os.FileMode(b.Mode)
	case b == nil:
		f.IsDelete, f.NewName = true, ""
		f.OldMode = os.FileMode(a.Mode)
	default:
		f.OldMode = os.FileMode(a.Mode)
		if a.Mode != b.Mode {
			f.NewMode = os.FileMode(b.Mode)
		}
	}
	if a != nil {
		oldC, oldOID = a.Content, a.OID
	}
	if b != nil {
		newC, newOID = b.Content, b.OID
	}
	f.OldOIDPrefix, f.NewOIDPrefix = oldOID.String(), newOID.String()
	if oldOID == newOID {
		f.OldOIDPrefix, f.NewOIDPrefix = "", "" // a mode change only
		return f
	}
	if isBinary(oldC) || isBinary(newC) {
		f.IsBinary = true
		f.BinaryFragment = &gitdiff.BinaryFragment{Method: gitdiff.BinaryPatchLiteral, Size: int64(len(newC)), RawData: deflate(newC)}
		f.ReverseBinaryFragment = &gitdiff.BinaryFragment{Method: gitdiff.BinaryPatchLiteral, Size: int64(len(oldC)), RawData: deflate(oldC)}
		return f
	}
	f.TextFragments = textFragments(string(oldC), string(newC))
	return f
}

// isBinary applies git's heuristic: a NUL in the first 8000 bytes.
func isBinary(b []byte) bool {
	if len(b) > 8000 {
		b = b[:8000]
	}
	return bytes.IndexByte(b, 0) >= 0
}

func deflate(b []byte) []byte {
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

const contextLines = 3

// textFragments diffs two texts by line into hunks with three lines of
// context, as git diff does.
func textFragments(a, b string) []*gitdiff.TextFragment {
	x, y := textmerge.SplitLines(a), textmerge.SplitLines(b)
	var frags []*gitdiff.TextFragment
	for _, h := range textmerge.Hunks(textmerge.Diff(x, y), contextLines) {
		f := &gitdiff.TextFragment{OldPosition: int64(h.OldStart), OldLines: int64(h.OldLines),
			NewPosition: int64(h.NewStart), NewLines: int64(h.NewLines)}
		for _, o := range h.Ops {
			switch o.Kind {
			case '+':
				f.Lines = append(f.Lines, gitdiff.Line{Op: gitdiff.OpAdd, Line: y[o.B]})
				f.LinesAdded++
			case '-':
				f.Lines = append(f.Lines, gitdiff.Line{Op: gitdiff.OpDelete, Line: x[o.A]})
				f.LinesDeleted++
			default:
				f.Lines = append(f.Lines, gitdiff.Line{Op: gitdiff.OpContext, Line: x[o.A]})
			}
		}
		frags = append(frags, f)
	}
	return frags
}
