package txn

import (
	"bytes"
	"compress/zlib"
	"errors"
	"io"
	"os"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// side is one side of a file change; a nil *side is an absent file.
type side struct {
	mode    filemode.FileMode
	oid     plumbing.Hash
	content []byte
}

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

// diskSide reads a working-tree file as a patch side.
func (r *Repo) diskSide(p string) (*side, error) {
	abs := r.abs(p)
	fi, err := os.Lstat(abs)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	f, ok := fileOf(fi)
	if !ok {
		return nil, nil
	}
	var b []byte
	if f.Mode == filemode.Symlink {
		t, err := os.Readlink(abs)
		if err != nil {
			return nil, err
		}
		b = []byte(t)
	} else if b, err = os.ReadFile(abs); err != nil {
		return nil, err
	}
	return &side{mode: f.Mode, oid: blobHash(b), content: b}, nil
}

// FormatPatch returns a patch, in git's format (binary files as literal
// GIT binary patches), taking the files named from their state in before
// (content from the object store) to their state on disk now. git apply
// accepts it.
func (r *Repo) FormatPatch(paths []string, before map[string]*File) (string, error) {
	var out strings.Builder
	for _, p := range paths {
		var a *side
		if f := before[p]; f != nil {
			b, err := r.blobBytes(f.OID)
			if err != nil {
				return "", err
			}
			a = &side{mode: f.Mode, oid: f.OID, content: b}
		}
		b, err := r.diskSide(p)
		if err != nil {
			return "", err
		}
		if f := filePatch(p, a, b); f != nil {
			out.WriteString(f.String())
		}
	}
	return out.String(), nil
}

func filePatch(p string, a, b *side) *gitdiff.File {
	if a == nil && b == nil {
		return nil
	}
	if a != nil && b != nil && a.mode == b.mode && a.oid == b.oid {
		return nil
	}
	f := &gitdiff.File{OldName: p, NewName: p}
	var oldC, newC []byte
	oldOID, newOID := plumbing.ZeroHash, plumbing.ZeroHash
	switch {
	case a == nil:
		f.IsNew, f.OldName = true, ""
		f.NewMode = os.FileMode(b.mode)
	case b == nil:
		f.IsDelete, f.NewName = true, ""
		f.OldMode = os.FileMode(a.mode)
	default:
		f.OldMode = os.FileMode(a.mode)
		if a.mode != b.mode {
			f.NewMode = os.FileMode(b.mode)
		}
	}
	if a != nil {
		oldC, oldOID = a.content, a.oid
	}
	if b != nil {
		newC, newOID = b.content, b.oid
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

type lineOp struct {
	op   gitdiff.LineOp
	line string
}

// textFragments diffs two texts by line into hunks with three lines of
// context, as git diff does.
func textFragments(a, b string) []*gitdiff.TextFragment {
	dmp := diffmatchpatch.New()
	ra, rb, lines := dmp.DiffLinesToRunes(a, b)
	diffs := dmp.DiffCharsToLines(dmp.DiffMainRunes(ra, rb, false), lines)
	var ops []lineOp
	for _, d := range diffs {
		op := gitdiff.OpContext
		switch d.Type {
		case diffmatchpatch.DiffInsert:
			op = gitdiff.OpAdd
		case diffmatchpatch.DiffDelete:
			op = gitdiff.OpDelete
		}
		for _, l := range splitLines(d.Text) {
			ops = append(ops, lineOp{op, l})
		}
	}
	var frags []*gitdiff.TextFragment
	oldLine, newLine := int64(1), int64(1)
	for i := 0; i < len(ops); {
		if ops[i].op == gitdiff.OpContext {
			oldLine++
			newLine++
			i++
			continue
		}
		// A change: take context before it, then changes and context until
		// a run of more than 2*context unchanged lines.
		start := i - contextLines
		if start < 0 {
			start = 0
		}
		f := &gitdiff.TextFragment{OldPosition: oldLine - int64(i-start), NewPosition: newLine - int64(i-start)}
		for j := start; j < i; j++ {
			f.Lines = append(f.Lines, gitdiff.Line{Op: gitdiff.OpContext, Line: ops[j].line})
		}
		end := i
		for end < len(ops) {
			if ops[end].op != gitdiff.OpContext {
				end++
				continue
			}
			run := 0
			for end+run < len(ops) && ops[end+run].op == gitdiff.OpContext {
				run++
			}
			if end+run == len(ops) || run > 2*contextLines {
				break
			}
			end += run
		}
		stop := end + contextLines
		if stop > len(ops) {
			stop = len(ops)
		}
		for j := i; j < stop; j++ {
			f.Lines = append(f.Lines, gitdiff.Line{Op: ops[j].op, Line: ops[j].line})
			switch ops[j].op {
			case gitdiff.OpContext:
				oldLine++
				newLine++
			case gitdiff.OpAdd:
				newLine++
			case gitdiff.OpDelete:
				oldLine++
			}
		}
		for _, l := range f.Lines {
			switch l.Op {
			case gitdiff.OpContext:
				f.OldLines++
				f.NewLines++
			case gitdiff.OpAdd:
				f.NewLines++
				f.LinesAdded++
			case gitdiff.OpDelete:
				f.OldLines++
				f.LinesDeleted++
			}
		}
		if f.OldLines == 0 {
			f.OldPosition--
		}
		if f.NewLines == 0 {
			f.NewPosition--
		}
		frags = append(frags, f)
		i = stop
	}
	return frags
}

func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}
