// Package scope is the write barrier's vocabulary: which repository paths
// an edit may write. A scope is a list of patterns: a directory (pkg/api)
// means everything below it, a doublestar glob (pkg/**/*.go) what it
// matches. Nothing under .git or .orket is ever in a scope.
package scope

import (
	"fmt"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// OrketDir is orket's state directory at the repository root.
const OrketDir = ".orket"

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

// Reserved reports whether p is orket's or git's own: never writable by an
// edit.
func Reserved(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	return first == OrketDir || first == ".git"
}
