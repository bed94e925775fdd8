package sandbox

// This file maps scope patterns to the directories Landlock can express.
// Invariant: every path a pattern allows (scope.Scope.Contains) lies at or
// below one of the pattern's bases, and the directory opened for a base
// is that base or one of its ancestors. The sandbox is therefore never
// narrower than the scope; where it is wider, measurement is the exact
// line and the report says so.

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/orket/orket/scope"
)

// maxExpansions bounds brace expansion; past it a pattern falls back to
// the directory before its first brace (wider, still sound).
const maxExpansions = 64

// A ScopeDir is how one scope pattern became directories the kernel lets
// the edit command write.
type ScopeDir struct {
	Pattern string   `json:"pattern"`
	Dirs    []string `json:"dirs"`            // repository-relative, "." for the root; empty when none
	Widened bool     `json:"widened"`         // the directories allow more than the pattern
	Notes   []string `json:"notes,omitempty"` // why, where it is not plain
}

// ScopeDirs maps scope patterns (repository-relative, slash-separated, as
// scope.Scope.Patterns returns them) to directories below root:
//
//   - a directory (pkg/api) is itself;
//   - a glob is the deepest directory before its first wildcard
//     (pkg/**/*.go is pkg, *.go is the root); braces are expanded first,
//     so {cmd,internal}/** is cmd and internal;
//   - a file, or a path that does not exist yet, is its nearest existing
//     ancestor directory (a new file needs its directory writable); so is a
//     path that goes through a symbolic link, which is never followed:
//     a write through it lands where measurement counts it anyway.
//
// Nothing is created: a directory made for the sandbox would outlive the
// run, since it existed before the snapshot. Patterns that only name .git
// or .orket paths, which no edit may write, open nothing.
func ScopeDirs(root string, patterns []string) []ScopeDir {
	out := make([]ScopeDir, 0, len(patterns))
	for _, p := range patterns {
		sd := ScopeDir{Pattern: p, Dirs: []string{}}
		bases, exact := Bases(p)
		sd.Widened = !exact
		seen := map[string]bool{}
		for _, b := range bases {
			if scope.Reserved(b) {
				sd.Notes = appendOnce(sd.Notes, "names only "+first(b)+" paths, which no edit may write: nothing opened")
				continue
			}
			dir, why := nearestDir(root, b)
			if dir != b {
				sd.Widened = true
				sd.Notes = appendOnce(sd.Notes, displayRel(b)+" "+why+": opened "+displayRel(dir))
			}
			if !seen[dir] {
				seen[dir] = true
				sd.Dirs = append(sd.Dirs, displayRel(dir))
			}
			if dir == "" {
				sd.Notes = appendOnce(sd.Notes, "the repository root: .git and .orket are within reach; measurement guards them")
			}
		}
		out = append(out, sd)
	}
	return out
}

// Bases returns repository-relative paths ("" for the root) such that
// every path the pattern allows is one of them or lies below one, and
// whether the pattern allows exactly that (a directory, or dir/**).
// It reads no file system.
func Bases(pattern string) (bases []string, exact bool) {
	if !hasMeta(pattern) {
		return []string{clean(pattern)}, true
	}
	// doublestar matches runes: a byte that is not valid UTF-8 matches
	// any other such byte, and expanding braces around one could join it
	// with the next into a valid rune. From the first one on, the pattern
	// is a wildcard (an escape left dangling before it escapes nothing).
	if j := firstInvalid(pattern); j >= 0 {
		lit := pattern[:j]
		if n := len(lit) - len(strings.TrimRight(lit, `\`)); n%2 == 1 {
			lit = lit[:len(lit)-1]
		}
		pattern = lit + "*"
	}
	alts, ok := expandBraces(pattern, maxExpansions)
	if !ok {
		alts = []string{pattern}
	}
	exact = true
	seen := map[string]bool{}
	for _, a := range alts {
		b, ex := base(a)
		exact = exact && ex
		if !seen[b] {
			seen[b] = true
			bases = append(bases, b)
		}
	}
	return bases, exact
}

// base returns the directory below which a brace-free glob matches, and
// whether it matches exactly everything there. A leftover brace (one
// that could not be expanded) counts as a wildcard.
func base(glob string) (string, bool) {
	i := firstMeta(glob, "*?[{")
	if i < 0 {
		// Only escapes: the pattern matches one path.
		return clean(unescape(glob)), false
	}
	// An escaped slash is still a separator.
	lit := unescape(glob[:i])
	dir := ""
	if j := strings.LastIndexByte(lit, '/'); j >= 0 {
		dir = clean(lit[:j])
	}
	exact := glob[i:] == "**" && (i == 0 || glob[i-1] == '/')
	return dir, exact
}

// expandBraces expands every {a,b} of a glob, outermost first. It
// reports false when the braces are not plain (a character class inside,
// unbalanced) or expand to more than max patterns.
func expandBraces(glob string, max int) ([]string, bool) {
	open := firstMeta(glob, "{")
	if open < 0 {
		return []string{glob}, true
	}
	var alts []string
	depth, start, end := 0, open+1, -1
scan:
	for i := open; i < len(glob); i++ {
		switch glob[i] {
		case '\\':
			i++
		case '[':
			return nil, false
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				alts = append(alts, glob[start:i])
				end = i
				break scan
			}
		case ',':
			if depth == 1 {
				alts = append(alts, glob[start:i])
				start = i + 1
			}
		}
	}
	if end < 0 {
		return nil, false
	}
	var out []string
	for _, a := range alts {
		more, ok := expandBraces(glob[:open]+a+glob[end+1:], max-len(out))
		if !ok || len(out)+len(more) > max {
			return nil, false
		}
		out = append(out, more...)
	}
	return out, true
}

// firstMeta returns the index of the first unescaped byte of set in s, or -1.
func firstMeta(s, set string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if strings.IndexByte(set, s[i]) >= 0 {
			return i
		}
	}
	return -1
}

// firstInvalid returns the index of the first byte of s that is not
// valid UTF-8, or -1.
func firstInvalid(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return i
			}
		}
	}
	return -1
}

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// hasMeta is scope's own test for a glob: a pattern without these
// characters is a path.
func hasMeta(p string) bool { return strings.ContainsAny(p, "*?[{\\") }

// clean cleans a repository-relative path; the root is "".
func clean(p string) string {
	p = path.Clean("/" + p)[1:]
	return p
}

func displayRel(p string) string {
	if p == "" {
		return "."
	}
	return p
}

func first(p string) string {
	f, _, _ := strings.Cut(p, "/")
	return f
}

// nearestDir returns the deepest real directory (reached without
// following a symbolic link) at or above rel, and why it is not rel.
func nearestDir(root, rel string) (dir, why string) {
	if rel == "" {
		return "", ""
	}
	cur := ""
	for _, seg := range strings.Split(rel, "/") {
		next := path.Join(cur, seg)
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(next)))
		switch {
		case err != nil:
			return cur, "does not exist yet"
		case fi.Mode()&os.ModeSymlink != 0:
			return cur, "goes through the symbolic link " + next
		case !fi.IsDir():
			if next == rel {
				return cur, "is a file"
			}
			return cur, "goes through the file " + next
		}
		cur = next
	}
	return cur, ""
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
