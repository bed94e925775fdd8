package txn

import (
	"fmt"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// A Scope is the set of paths an edit may write: directories (everything
// below them) and doublestar globs (what they match), repository-relative.
type Scope struct {
	patterns []string
}

// ParseScope checks and cleans scope patterns.
func ParseScope(patterns []string) (Scope, error) {
	var s Scope
	for _, p := range patterns {
		q := strings.TrimSuffix(strings.TrimPrefix(p, "./"), "/")
		if q == "" || q == "." {
			q = "**"
		}
		switch {
		case strings.HasPrefix(q, "/"):
			return s, fmt.Errorf("scope %q is absolute; give a path relative to the repository root", p)
		case strings.Contains(q, `\`):
			return s, fmt.Errorf("scope %q: use / as the separator", p)
		case !doublestar.ValidatePattern(q):
			return s, fmt.Errorf("scope %q is not a valid glob", p)
		}
		if !hasMeta(q) {
			q = path.Clean(q)
		}
		for _, seg := range strings.Split(q, "/") {
			if seg == ".." {
				return s, fmt.Errorf("scope %q leaves the repository", p)
			}
		}
		s.patterns = append(s.patterns, q)
	}
	return s, nil
}

// Patterns returns the scope as given, cleaned.
func (s Scope) Patterns() []string { return s.patterns }

func hasMeta(p string) bool { return strings.ContainsAny(p, "*?[{\\") }

// Contains reports whether an edit may write path. Nothing under .git or
// .orket is ever in scope.
func (s Scope) Contains(p string) bool {
	if reserved(p) {
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

// reserved reports whether p is orket's or git's own.
func reserved(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	return first == OrketDir || first == ".git"
}

// Outside returns the paths of a touch set the scope does not allow.
func (s Scope) Outside(paths []string) []string {
	var out []string
	for _, p := range paths {
		if !s.Contains(p) {
			out = append(out, p)
		}
	}
	return out
}
