package txn

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	format "github.com/go-git/go-git/v5/plumbing/format/config"

	"github.com/orket/orket/internal/fsroot"
	"github.com/orket/orket/internal/gitignore"
)

// CheckSupported refuses the repositories orket cannot restore exactly,
// saying what to change. Content conversions (line endings, Git LFS and
// other filters), core.fileMode=false and sparse checkouts are not
// refused: a snapshot records the work tree's own bytes and modes (see
// conversions).
func (r *Repo) CheckSupported() error {
	// Local settings over global over system, as git reads them.
	raw, err := r.config()
	if err != nil {
		return &UnsupportedError{Path: ".git/config", Reason: "cannot read: " + err.Error()}
	}
	return checkConfig(raw)
}

func checkConfig(raw *format.Config) error {
	core := raw.Section("core")
	opt := func(name string) string { return strings.ToLower(core.Option(name)) }
	switch {
	case opt("symlinks") == "false":
		return &UnsupportedError{Path: ".git/config", Reason: "core.symlinks=false checks symlinks out as plain files, which orket cannot tell from files; set core.symlinks=true (git config core.symlinks true) and check the symlinks out again"}
	case opt("ignorecase") == "true":
		return &UnsupportedError{Path: ".git/config", Reason: "core.ignorecase=true makes paths that differ in case one file; orket needs a case-sensitive work tree: git config core.ignorecase false"}
	case strings.ToLower(raw.Section("extensions").Option("objectformat")) == "sha256":
		return &UnsupportedError{Path: ".git/config", Reason: "SHA-256 repositories (extensions.objectFormat=sha256) are not supported: the object store orket reads and writes is SHA-1's; use orket on a SHA-1 clone"}
	case opt("splitindex") == "true":
		return &UnsupportedError{Path: ".git/config", Reason: "a split index (core.splitIndex=true) is not supported; run git config core.splitIndex false && git update-index --no-split-index"}
	}
	return nil
}

// conversions says which paths git may hold in its index and objects as
// bytes other than those in the work tree: a content filter (Git LFS),
// line-ending conversion (core.autocrlf, core.eol, the text, eol and crlf
// attributes), ident or working-tree-encoding. For those paths the index's
// stat data vouches for the blob git would make from the file, not for
// the file's bytes: a snapshot reads them (see indexInfo.vouches) and
// keeps what it read, so a revert writes the bytes that were there.
//
// It errs on the side of reading: every path below a .gitattributes that
// sets any of those attributes counts, whatever its patterns match.
type conversions struct {
	all  bool            // configuration, or an attributes file for the whole repository
	dirs map[string]bool // directories ("" the top) whose .gitattributes converts
	// macros are the attribute macros ([attr]name) that set a converting
	// attribute.
	macros map[string]bool
	// noFileMode: core.fileMode=false, git does not see the executable bit.
	noFileMode bool
}

// applies reports whether git may store p other than as its bytes.
func (c *conversions) applies(p string) bool {
	if c == nil {
		return false
	}
	if c.all {
		return true
	}
	return below(c.dirs, p)
}

// below reports whether p is below one of dirs ("" the top).
func below(dirs map[string]bool, p string) bool {
	if len(dirs) == 0 {
		return false
	}
	for d := p; d != ""; {
		d = parentDir(d)
		if dirs[d] {
			return true
		}
	}
	return false
}

// addFound counts the .gitattributes files a scan found (the index did
// not name them all: untracked and ignored ones count for git too) and
// returns the directories that convert and were not counted yet.
func (c *conversions) addFound(root *fsroot.Root, paths []string) map[string]bool {
	if c.all {
		return nil
	}
	var added map[string]bool
	for _, p := range paths {
		d := parentDir(p)
		if c.dirs[d] {
			continue
		}
		if b, err := readAttributesFile(root, p); err != nil || c.converts(b) {
			c.dirs[d] = true
			if added == nil {
				added = map[string]bool{}
			}
			added[d] = true
		}
	}
	return added
}

// gitReports reports whether git status would show f, a file the index
// does not vouch for the bytes of, as changed: not when git takes it as
// clean by its stat (a converted file), when only the executable bit
// differs under core.fileMode=false, or when sparse checkout has git
// ignore it (skip-worktree).
func (ii *indexInfo) gitReports(p string, f *File) bool {
	lo, hi := ii.lookup(p)
	for i := lo; i < hi; i++ {
		e := &ii.list[i]
		if e.Stage != 0 || e.IntentToAdd || ii.gitlinks[p] {
			continue
		}
		switch {
		case e.SkipWorktree:
			return false
		case ii.conv.applies(p) && ii.gitClean(e, f):
			return false
		case e.Hash == f.OID && (e.Mode == f.Mode || ii.conv != nil && ii.conv.noFileMode && e.Mode != filemode.Symlink && f.Mode != filemode.Symlink):
			return false
		}
	}
	return true
}

// readConversions reads what converts content in the repository: the
// configuration, the attributes files outside the tree (the system's,
// core.attributesFile, info/attributes) and the .gitattributes files the
// index tracks, as the work tree has them. A .gitattributes the index
// does not track is found by the scan (see snapshot).
func (r *Repo) readConversions(ii *indexInfo) (*conversions, error) {
	c := &conversions{dirs: map[string]bool{}, macros: map[string]bool{}}
	raw, err := r.config()
	if err != nil {
		return nil, &UnsupportedError{Path: ".git/config", Reason: "cannot read: " + err.Error()}
	}
	core := raw.Section("core")
	opt := func(name string) string { return strings.ToLower(core.Option(name)) }
	switch {
	case opt("autocrlf") == "true", opt("autocrlf") == "input", opt("eol") == "crlf":
		c.all = true
	}
	c.noFileMode = opt("filemode") == "false"
	var global [][]byte
	for _, f := range []string{"/etc/gitattributes", r.attributesFile(core.Option("attributesfile")), filepath.Join(r.CommonDir, "info", "attributes")} {
		if f == "" {
			continue
		}
		if b, err := os.ReadFile(f); err == nil {
			global = append(global, b)
		}
	}
	// Macros are defined at the top only (and outside the tree).
	root, err := r.FS()
	if err != nil {
		return nil, err
	}
	top, topErr := readAttributesFile(root, ".gitattributes")
	for _, b := range append(global, top) {
		c.addMacros(b)
	}
	for _, b := range global {
		if c.converts(b) {
			c.all = true
		}
	}
	if c.all {
		return c, nil
	}
	for i := range ii.list {
		e := &ii.list[i]
		if baseName(e.Name) != ".gitattributes" || i > 0 && ii.list[i-1].Name == e.Name {
			continue
		}
		b, err := top, topErr
		if e.Name != ".gitattributes" {
			b, err = readAttributesFile(root, e.Name)
		}
		// A file that cannot be read is taken to convert.
		if err != nil || c.converts(b) {
			c.dirs[parentDir(e.Name)] = true
		}
	}
	return c, nil
}

// attributesFile is core.attributesFile, or git's default for it.
func (r *Repo) attributesFile(configured string) string {
	if configured != "" {
		return gitignore.ExcludesFile(configured, r.Root)
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "git", "attributes")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".config", "git", "attributes")
	}
	return ""
}

// readAttributesFile reads a .gitattributes of the tree, beneath the root
// and never through a symlink (git does not follow one either); a file
// that is not there says nothing.
func readAttributesFile(root *fsroot.Root, p string) ([]byte, error) {
	f, err := root.Open(p)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b bytes.Buffer
	_, err = b.ReadFrom(f)
	return b.Bytes(), err
}

// convertingAttr reports whether an attribute, as a .gitattributes line
// states it (name, -name, !name, name=value), may make git's bytes differ
// from the work tree's.
func (c *conversions) convertingAttr(a string) bool {
	if strings.HasPrefix(a, "-") || strings.HasPrefix(a, "!") {
		return false // unset or unspecified: no conversion
	}
	name, _, _ := strings.Cut(a, "=")
	switch name {
	case "filter", "text", "eol", "crlf", "ident", "working-tree-encoding":
		return true
	}
	return c.macros[name]
}

// addMacros records the macros of an attributes file that set a
// converting attribute.
func (c *conversions) addMacros(b []byte) {
	forEachAttrLine(b, func(pattern string, attrs []string) {
		if name, ok := strings.CutPrefix(pattern, "[attr]"); ok {
			for _, a := range attrs {
				if c.convertingAttr(a) {
					c.macros[name] = true
				}
			}
		}
	})
}

// converts reports whether an attributes file sets a converting attribute
// for any pattern.
func (c *conversions) converts(b []byte) bool {
	found := false
	read := forEachAttrLine(b, func(pattern string, attrs []string) {
		if strings.HasPrefix(pattern, "[attr]") {
			return
		}
		for _, a := range attrs {
			found = found || c.convertingAttr(a)
		}
	})
	return found || !read // a file that cannot be read to its end is taken to convert
}

// forEachAttrLine calls fn with each line's pattern and attributes. A
// quoted pattern's words beyond the first are read as attributes, which
// can only make more paths count as converted. It reports whether it read
// every line.
func forEachAttrLine(b []byte, fn func(pattern string, attrs []string)) bool {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		fn(fields[0], fields[1:])
	}
	return sc.Err() == nil
}
