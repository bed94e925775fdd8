package patch

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/orket/orket/internal/fsroot"
)

// Plain diffs (diff -u, diff -ruN, most review tools and agents) name each
// file on its --- and +++ lines only, as written, with whatever leading
// directory the tool put there: a/ and b/, the two directories diff -ru
// compared, or none. Those names are not repository paths until a strip
// level is chosen (patch -pN, git apply -pN); Resolve chooses it against
// the tree, once for the whole patch.

// plainNames is what a plain file header names: the old and the new side
// as written, timestamps dropped ("" for /dev/null).
type plainNames struct{ old, new string }

// A StripError is a plain diff whose file names cannot be read as paths of
// the tree at one strip level without guessing. Paths are the readings
// that were tried.
type StripError struct {
	Paths []string
	Msg   string
}

func (e *StripError) Error() string { return e.Msg }

var errHeaders = errors.New("cannot match the patch's file headers with its files (make the patch with git diff)")

// scanHeaders lists the file headers of a patch in the order gitdiff.Parse
// finds them: nil for a git header ("diff --git"), the names as written
// for a plain one. It follows gitdiff's reading: a git header runs on
// through its extended lines; a plain header is a --- line, a +++ line
// and a hunk header; a hunk's body is skipped by its line counts, so a
// removed line that reads "-- x" is never taken for a header.
func scanHeaders(b []byte) ([]*plainNames, error) {
	lines := strings.SplitAfter(string(b), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	line := func(i int) string {
		if i < len(lines) {
			return lines[i]
		}
		return ""
	}
	var out []*plainNames
	for i := 0; i < len(lines); {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "diff --git "):
			out = append(out, nil)
			for i++; i < len(lines) && gitHeaderLine(lines[i]); i++ {
			}
		case strings.HasPrefix(l, "@@ -"):
			old, nw, ok := hunkCounts(l)
			i++
			if !ok {
				continue
			}
		body:
			for ; (old > 0 || nw > 0) && i < len(lines); i++ {
				switch lines[i][0] {
				case '\n', ' ':
					old--
					nw--
				case '-':
					old--
				case '+':
					nw--
				case '\\':
				default:
					break body
				}
			}
			if noNewline(line(i)) {
				i++
			}
		case strings.HasPrefix(l, "--- ") && strings.HasPrefix(line(i+1), "+++ ") &&
			strings.HasPrefix(line(i+2), "@@ -") && len(line(i+2)) >= len("@@ -1 +1 @@\n"):
			old, err := headerName(l[len("--- "):])
			if err != nil {
				return nil, err
			}
			nw, err := headerName(line(i + 1)[len("+++ "):])
			if err != nil {
				return nil, err
			}
			out = append(out, &plainNames{old: old, new: nw})
			i += 2
		default:
			i++
		}
	}
	return out, nil
}

// gitHeaderLine is a line that continues a git file header (gitdiff's list).
func gitHeaderLine(l string) bool {
	for _, p := range []string{"--- ", "+++ ", "old mode ", "new mode ", "deleted file mode ", "new file mode ",
		"copy from ", "copy to ", "rename old ", "rename new ", "rename from ", "rename to ",
		"similarity index ", "dissimilarity index ", "index "} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

func noNewline(l string) bool { return len(l) >= 12 && l[:2] == "\\ " }

// hunkCounts reads the line counts of a hunk header "@@ -a,b +c,d @@".
func hunkCounts(l string) (old, nw int64, ok bool) {
	head, _, found := strings.Cut(l[len("@@ -"):], " @@")
	if !found {
		return 0, 0, false
	}
	o, n, found := strings.Cut(head, " +")
	if !found {
		return 0, 0, false
	}
	count := func(r string) (int64, bool) {
		start, c, has := strings.Cut(r, ",")
		if _, err := strconv.ParseInt(start, 10, 64); err != nil {
			return 0, false
		}
		if !has {
			return 1, true
		}
		v, err := strconv.ParseInt(c, 10, 64)
		return v, err == nil
	}
	old, ok1 := count(o)
	nw, ok2 := count(n)
	return old, nw, ok1 && ok2
}

// headerName reads the name of a --- or +++ line: quoted as git quotes
// it, or up to a tab (the timestamp diff writes after it) or the end of
// the line; "" for /dev/null.
func headerName(s string) (string, error) {
	s = strings.TrimSuffix(s, "\n")
	var name string
	if strings.HasPrefix(s, `"`) {
		end := 1
		for ; end < len(s); end++ {
			if s[end] == '"' && s[end-1] != '\\' {
				break
			}
		}
		if end >= len(s) {
			return "", &Error{Err: fmt.Errorf("unterminated quoted file name: %s", s)}
		}
		n, err := strconv.Unquote(s[:end+1])
		if err != nil {
			return "", &Error{Err: fmt.Errorf("bad quoted file name %s: %v", s[:end+1], err)}
		}
		name = n
	} else {
		name, _, _ = strings.Cut(s, "\t")
	}
	if name == "" {
		return "", &Error{Err: errors.New("a file header without a file name")}
	}
	if name == "/dev/null" {
		return "", nil
	}
	return stripName(name, 0)
}

// stripName drops n leading components of a name (patch -pN), repeated
// slashes counting as one; ok is false when it has no more than n.
func stripName(name string, n int) (string, error) {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		if name[i] == '/' {
			if i+1 < len(name) && name[i+1] == '/' {
				continue
			}
			if n > 0 {
				n--
				b.Reset()
				continue
			}
		}
		b.WriteByte(name[i])
	}
	if n > 0 || b.Len() == 0 {
		return "", errShort
	}
	return b.String(), nil
}

var errShort = errors.New("too few directories to strip")

// match checks that the headers scanHeaders found are the files gitdiff
// parsed, and keeps the plain names beside them.
func (p *Patch) match(raw []byte) error {
	hdrs, err := scanHeaders(raw)
	if err != nil {
		return err
	}
	if len(hdrs) != len(p.files) {
		return &Error{Err: errHeaders}
	}
	for i, h := range hdrs {
		if h == nil {
			continue
		}
		f := p.files[i]
		ok := false
		switch {
		case f.IsNew:
			ok = f.OldName == "" && f.NewName == h.new
		case f.IsDelete:
			ok = f.NewName == "" && f.OldName == h.old
		default:
			want := h.new
			if strings.HasPrefix(h.new, h.old) {
				want = h.old
			}
			ok = f.OldName == want && f.NewName == want
		}
		if !ok {
			return &Error{Path: fileName(f), Err: errHeaders}
		}
		if p.plain == nil {
			p.plain = make([]*plainNames, len(p.files))
		}
		p.plain[i] = h
	}
	return nil
}

// name is the path a plain file header names at strip level n, chosen as
// git apply chooses: the side that is not /dev/null, else the old name
// when it is a prefix of the new one (file, file.new), else the new one
// (file.orig, file).
func (h *plainNames) name(f *gitdiff.File, n int) (string, error) {
	old, nw := h.old, h.new
	var err error
	if old != "" {
		if old, err = stripName(old, n); err != nil {
			return "", err
		}
	}
	if nw != "" {
		if nw, err = stripName(nw, n); err != nil {
			return "", err
		}
	}
	switch {
	case f.IsNew:
		return nw, nil
	case f.IsDelete:
		return old, nil
	case strings.HasPrefix(nw, old):
		return old, nil
	}
	return nw, nil
}

// prefixed says the plain headers carry a directory of their own on each
// side, to be stripped: git's a/ and b/ (the side a created or deleted
// file has), or the two directories diff -ru compared (old/x, new/x).
func (p *Patch) prefixed() bool {
	for _, h := range p.plain {
		if h == nil {
			continue
		}
		switch {
		case h.old != "" && h.new != "":
			o, err1 := stripName(h.old, 1)
			n, err2 := stripName(h.new, 1)
			if err1 != nil || err2 != nil || o != n || h.old == h.new {
				return false
			}
		case h.old != "":
			if !strings.HasPrefix(h.old, "a/") {
				return false
			}
		case h.new != "":
			if !strings.HasPrefix(h.new, "b/") {
				return false
			}
		}
	}
	return true
}

// fits reads every plain file at strip level n and checks it against the
// tree: a file the patch changes or deletes exists (or an earlier file of
// the patch creates it), one it creates does not. It returns the first
// name that does not fit and why.
func (p *Patch) fits(n int, exists func(string) bool) (bad, why string) {
	made, gone := map[string]bool{}, map[string]bool{}
	for i, h := range p.plain {
		if h == nil {
			continue
		}
		f := p.files[i]
		name, err := h.name(f, n)
		if err != nil {
			return fileName(f), "has no directory to strip"
		}
		there := (exists(name) || made[name]) && !gone[name]
		switch {
		case f.IsNew && there:
			return name, "already exists"
		case !f.IsNew && !there:
			return name, "does not exist"
		case f.IsNew:
			made[name] = true
			delete(gone, name)
		case f.IsDelete:
			gone[name] = true
			delete(made, name)
		}
	}
	return "", ""
}

// Resolve reads the file names of a plain diff as paths of the tree at
// root, choosing one strip level for the whole patch:
//
//   - the level at which every file fits the tree (the files it changes
//     or deletes exist, those it creates do not) when only one does;
//   - -p1 when both fit, or neither does, and every header carries a
//     directory of its own on each side (a/ and b/, or diff -ru's two
//     directories); then a file that does not fit is reported as for a git
//     diff;
//   - otherwise a *StripError naming both readings: nothing is guessed.
//
// A git diff's names are paths already. Resolve is idempotent; Plan calls
// it, and Paths needs it.
func (p *Patch) Resolve(root *fsroot.Root) error {
	if p.resolved {
		return nil
	}
	if p.plain == nil {
		p.resolved = true
		return nil
	}
	exists := func(name string) bool {
		st, err := root.Lstat(name)
		return err == nil && modeOf(st.Mode) != fs.ModeIrregular
	}
	bad0, why0 := p.fits(0, exists)
	bad1, why1 := p.fits(1, exists)
	fit0, fit1 := bad0 == "", bad1 == ""
	level := 1
	switch {
	case fit1 && !fit0:
	case fit0 && !fit1:
		level = 0
	case p.prefixed():
	case fit0 && fit1:
		first := p.firstPlain()
		n0, _ := p.plain[first].name(p.files[first], 0)
		n1, _ := p.plain[first].name(p.files[first], 1)
		return &StripError{Paths: []string{n0, n1}, Msg: fmt.Sprintf(
			"the plain diff's file names fit the tree both as written (%s) and without their first directory (%s)", n0, n1)}
	default:
		return &StripError{Paths: []string{bad0, bad1}, Msg: fmt.Sprintf(
			"the plain diff's file names fit the tree neither as written (%s %s) nor without their first directory (%s %s)",
			bad0, why0, bad1, why1)}
	}
	for i, h := range p.plain {
		if h == nil {
			continue
		}
		f := p.files[i]
		name, err := h.name(f, level)
		if err != nil {
			return &Error{Path: fileName(f), Err: err}
		}
		if err := checkPath(name); err != nil {
			return &Error{Path: name, Err: err}
		}
		switch {
		case f.IsNew:
			f.NewName = name
		case f.IsDelete:
			f.OldName = name
		default:
			f.OldName, f.NewName = name, name
		}
	}
	p.strip, p.resolved = level, true
	return nil
}

func (p *Patch) firstPlain() int {
	for i, h := range p.plain {
		if h != nil {
			return i
		}
	}
	return -1
}

// Strip is the strip level Resolve chose for a plain diff's names (-1 for
// a git diff, or before Resolve).
func (p *Patch) Strip() int {
	if p.plain == nil || !p.resolved {
		return -1
	}
	return p.strip
}
