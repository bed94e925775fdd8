// Package scope is the write barrier's vocabulary: which repository paths
// an edit may write. A scope is a list of patterns: a directory (pkg/api)
// means everything below it, a doublestar glob (pkg/**/*.go) what it
// matches. Nothing under .git or .orket is ever in a scope.
package scope

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/orket/orket/store"
)

// A Scope is the set of paths an edit may write, repository-relative.
type Scope struct {
	patterns []string
}

// An Error is a scope pattern orket cannot use.
type Error struct {
	Pattern string
	Reason  string // a predicate: "leaves the repository"
}

func (e *Error) Error() string { return fmt.Sprintf("scope %q %s", e.Pattern, e.Reason) }

// Check reports whether p is a usable scope pattern: repository-relative,
// slash-separated, not leaving the repository, a valid glob.
func Check(p string) error {
	reason := ""
	switch {
	case p == "":
		reason = "is empty"
	case strings.HasPrefix(p, "/") || (len(p) > 1 && p[1] == ':'):
		reason = "is absolute; give a path relative to the repository root"
	case strings.Contains(p, `\`):
		reason = `uses \ as a separator; use /`
	case !doublestar.ValidatePattern(p):
		reason = "is not a valid glob"
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." && reason == "" {
			reason = "leaves the repository"
		}
	}
	if reason != "" {
		return &Error{Pattern: p, Reason: reason}
	}
	return nil
}

// Parse checks and cleans scope patterns ("." and "" mean the whole
// repository).
func Parse(patterns []string) (Scope, error) {
	var s Scope
	for _, p := range patterns {
		q := strings.TrimSuffix(strings.TrimPrefix(p, "./"), "/")
		if q == "" || q == "." {
			q = "**"
		}
		if err := Check(q); err != nil {
			return Scope{}, &Error{Pattern: p, Reason: err.(*Error).Reason}
		}
		if !hasMeta(q) {
			q = path.Clean(q)
		}
		s.patterns = append(s.patterns, q)
	}
	return s, nil
}

// Patterns returns the scope's patterns, cleaned.
func (s Scope) Patterns() []string { return s.patterns }

// Empty reports whether the scope allows nothing.
func (s Scope) Empty() bool { return len(s.patterns) == 0 }

func hasMeta(p string) bool { return strings.ContainsAny(p, "*?[{\\") }

// Contains reports whether an edit may write p.
func (s Scope) Contains(p string) bool {
	if Reserved(p) {
		return false
	}
	for _, pat := range s.patterns {
		if !hasMeta(pat) {
			if p == pat || strings.HasPrefix(p, pat+"/") {
				return true
			}
			continue
		}
		if ok, _ := doublestar.Match(pat, p); ok {
			return true
		}
	}
	return false
}

// Outside returns the paths the scope does not allow, in order.
func (s Scope) Outside(paths []string) []string {
	var out []string
	for _, p := range paths {
		if !s.Contains(p) {
			out = append(out, p)
		}
	}
	return out
}

// Holds reports whether everything pattern p can name lies inside s: p
// is one of s's patterns, or everything below p's fixed part (a
// directory's whole tree) lies below a directory s holds whole (a literal
// pattern, or one ending in /**). A glob such as pkg/* holds no directory
// whole: only the same pattern lies inside it.
func (s Scope) Holds(p string) bool {
	if strings.Contains(p, "..") {
		return false
	}
	base := Base(p)
	for _, sp := range s.patterns {
		if p == sp {
			return true
		}
		dir := strings.TrimSuffix(sp, "/**")
		if Base(dir) != dir || dir == "" {
			continue // a glob: it holds no directory whole
		}
		if base != "" && (base == dir || strings.HasPrefix(base, dir+"/")) {
			return true
		}
	}
	return false
}

// Reserved reports whether p is orket's or git's own: never writable by an
// edit.
func Reserved(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	return first == store.Dir || first == ".git"
}

// ResolveFrom makes scope patterns given relative to the directory wd,
// as git pathspecs are (":/" names the root), relative to the work tree
// at root (see Resolve). A wd outside the work tree (--repo elsewhere)
// takes them from the root.
func ResolveFrom(root, wd string, given []string) ([]string, error) {
	dir := ""
	if wd != "" {
		if real, err := filepath.EvalSymlinks(wd); err == nil {
			wd = real
		}
		if rel, err := filepath.Rel(root, wd); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			dir = filepath.ToSlash(rel)
		}
	}
	out := make([]string, 0, len(given))
	for _, g := range given {
		p, err := Resolve(dir, g)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// Resolve makes a scope pattern given on the command line, relative to
// dir (the current directory, repository-relative; "" at the root) as git
// pathspecs are, repository-relative. ":/" starts a pattern at the root;
// "." is dir itself; ".." may climb toward the root but not past it.
func Resolve(dir, pattern string) (string, error) {
	if rest, ok := strings.CutPrefix(pattern, ":/"); ok {
		if rest == "" {
			return ".", nil
		}
		return rest, nil
	}
	if dir == "" || strings.HasPrefix(pattern, "/") {
		return pattern, nil // Parse reports an absolute pattern
	}
	joined := path.Join(dir, pattern)
	if joined == ".." || strings.HasPrefix(joined, "../") {
		return "", &Error{Pattern: pattern, Reason: "leaves the repository"}
	}
	if pattern == "." || pattern == "./" {
		return dir, nil
	}
	if hasMeta(pattern) {
		// path.Join would clean a glob's own syntax; join by hand.
		return dir + "/" + strings.TrimPrefix(pattern, "./"), nil
	}
	return joined, nil
}

// Base returns the directory below which a pattern can match anything:
// the pattern itself for a directory, the part before the first glob
// character for a glob ("" when the glob starts at the root).
func Base(pattern string) string {
	if !hasMeta(pattern) {
		return pattern
	}
	base, _ := doublestar.SplitPattern(pattern)
	if base == "." {
		return ""
	}
	return base
}
