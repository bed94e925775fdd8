// Package gitignore decides which paths git ignores, with exactly the
// rules of git 2.39 (dir.c and wildmatch.c), so that orket sees the same
// untracked and ignored files as git does.
//
// What it promises, each point checked against the real git binary by the
// package's differential tests:
//
//   - Files are read as git reads them: a leading UTF-8 byte order mark is
//     skipped, lines end at "\n" (a "\r" before it is dropped), empty lines
//     and lines starting with '#' are skipped, a line ends at its first NUL
//     byte, and trailing spaces are removed unless escaped with a
//     backslash ("a\ " keeps its space). "\#" and "\!" start a pattern
//     with a literal '#' or '!'.
//   - A leading '!' negates; a trailing '/' makes the pattern match only
//     directories. A pattern with a '/' anywhere but at its end (a leading
//     one too) is anchored to the directory of its file and matched
//     against the path below that directory with WM_PATHNAME; any other
//     pattern matches the last path component at any depth below it.
//   - Globs are git's wildmatch: '*' and '?' never match '/'; "**/" at the
//     start or after a '/' matches zero or more directories; a trailing
//     "/**" matches everything inside a directory but not the directory
//     itself; any other "**" is an ordinary '*'. Classes take '!' or '^'
//     for negation, ranges, a ']' first as a member, backslash escapes and
//     the POSIX classes [:alnum:] ... [:xdigit:] in git's ASCII-only ctype
//     (no byte above 0x7f is in a class, as with git in a C or UTF-8
//     locale); a pattern with an unclosed class or an unknown class name
//     never matches. A backslash quotes the next byte anywhere; a '?'
//     matches one byte, not one UTF-8 character.
//   - git's quirks are kept, for instance that an anchored pattern's
//     literal prefix is compared before the glob runs, so "foo**/bar"
//     matches foo/bar and foo/x/y/bar as if it were "foo/**/bar".
//   - Matching is case-sensitive (core.ignorecase=false) and bytewise.
//
// Speed: patterns are compiled once; the common shapes (a literal name,
// "*.ext", "name*", "/path", "**/name", "**/*.ext") are string compares,
// the rest run a port of git's wildmatch; Match and Ignored never
// allocate. A hostile pattern that makes git's wildmatch backtrack for
// minutes (such as "a/**/a/**/a/**/a/**/a/**/a/**/b" against a deep path)
// is retried with memoization and answers the same in microseconds.
//
// What is the caller's job:
//
//   - Collecting the lists in git's order of precedence, lowest first:
//     core.excludesFile (default $XDG_CONFIG_HOME/git/ignore or
//     ~/.config/git/ignore), then $GIT_DIR/info/exclude, then the root
//     .gitignore, then each deeper .gitignore on the way to the path. A
//     .gitignore is read only if it is a regular file (git does not follow
//     a symlinked .gitignore), and a directory's own .gitignore applies to
//     what is inside it, not to the directory itself.
//   - git's directory rule: "it is not possible to re-include a file if a
//     parent directory of that file is excluded". Ignored judges one path
//     by the patterns it is given and knows nothing of its parents; a walk
//     must not descend into a directory Ignored excludes (and so never
//     reads that directory's .gitignore), and must count everything below
//     it as ignored. With "data/" and "!data/keep.txt", Ignored says
//     data/keep.txt is not ignored, but git ignores it because data is.
//   - isDir is true only for a real directory (or a gitlink). A symbolic
//     link is never a directory to git, even when it points at one, so
//     "build/" does not match a symlink named build.
//   - Tracked files are never ignored, whatever the patterns say.
package gitignore

import (
	"os"
	"path/filepath"
	"strings"
)

// A Pattern is one line of an ignore file, parsed and precompiled.
type Pattern struct {
	line  string // the line as git keeps it (trailing spaces trimmed)
	base  string // directory of the file, relative to the root; "" at the root
	glob  string // what is matched: basename pattern, or the glob after lit
	lit   string // anchored patterns: the literal prefix of the path below base
	kind  kind
	flags uint8
}

type kind uint8

const (
	basenameLiteral kind = iota // name == glob
	basenameSuffix              // "*literal": name ends with glob (the literal)
	basenamePrefix              // "literal*": name starts with glob (the literal)
	basenameGlob                // wildmatch(glob, name) without WM_PATHNAME
	pathLiteral                 // path below base == lit
	pathGlob                    // lit is a prefix, then wildmatch(glob, rest, WM_PATHNAME)
)

const (
	flagNegative  = 1 << iota // "!pattern"
	flagMustBeDir             // "pattern/"
)

// Result is how one pattern matches a path.
type Result int

const (
	NoMatch Result = iota // the pattern says nothing about the path
	Exclude               // the path matches: it is ignored
	Include               // the path matches a negated pattern: it is not ignored
)

func (r Result) String() string {
	switch r {
	case NoMatch:
		return "NoMatch"
	case Exclude:
		return "Exclude"
	case Include:
		return "Include"
	}
	return "Result(?)"
}

var bom = "\xef\xbb\xbf"

// ParsePatterns reads an ignore file's content the way git does. base is
// the slash path of the directory holding the file, relative to the
// repository root: "" for the root .gitignore and for info/exclude and
// core.excludesFile. Lines that can never match anything (empty after
// trimming, or a lone "!" or "/") are dropped.
func ParsePatterns(content []byte, base string) []Pattern {
	base = strings.TrimRight(base, "/")
	s := strings.TrimPrefix(string(content), bom)
	var ps []Pattern
	for len(s) > 0 {
		line := s
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			line, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		if line == "" || line[0] == '#' {
			continue
		}
		line = strings.TrimSuffix(line, "\r")
		if i := strings.IndexByte(line, 0); i >= 0 {
			line = line[:i]
		}
		if p, ok := compile(trimTrailingSpaces(line), base); ok {
			ps = append(ps, p)
		}
	}
	return ps
}

// trimTrailingSpaces is dir.c's trim_trailing_spaces: trailing ' ' go
// unless the first of them is escaped by a backslash (a tab stays).
func trimTrailingSpaces(s string) string {
	lastSpace := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if lastSpace < 0 {
				lastSpace = i
			}
		case '\\':
			i++
			if i >= len(s) {
				return s
			}
			lastSpace = -1
		default:
			lastSpace = -1
		}
	}
	if lastSpace >= 0 {
		return s[:lastSpace]
	}
	return s
}

// simpleLength is dir.c's simple_length: the length of the leading part of
// s without glob special bytes.
func simpleLength(s string) int {
	for i := 0; i < len(s); i++ {
		if isGlobSpecial(s[i]) {
			return i
		}
	}
	return len(s)
}

// compile is dir.c's parse_path_pattern plus the choice of a fast path.
func compile(line, base string) (Pattern, bool) {
	p := Pattern{line: line, base: base}
	s := line
	if strings.HasPrefix(s, "!") {
		p.flags |= flagNegative
		s = s[1:]
	}
	n := len(s)
	if n > 0 && s[n-1] == '/' {
		p.flags |= flagMustBeDir
		n--
	}
	if n == 0 {
		return p, false
	}
	nowild := min(simpleLength(s), n)
	pat := s[:n]
	if strings.IndexByte(pat, '/') < 0 {
		// PATTERN_FLAG_NODIR: match the basename.
		p.glob = pat
		switch {
		case nowild == n:
			p.kind = basenameLiteral
		case pat[0] == '*' && simpleLength(s[1:]) == len(s)-1: // PATTERN_FLAG_ENDSWITH
			p.kind, p.glob = basenameSuffix, pat[1:]
		case nowild == n-1 && pat[n-1] == '*':
			// Not in git, but the same: without WM_PATHNAME a
			// trailing '*' matches any rest of a basename.
			p.kind, p.glob = basenamePrefix, pat[:n-1]
		default:
			p.kind = basenameGlob
		}
		return p, true
	}
	if pat[0] == '/' {
		pat = pat[1:]
		nowild--
	}
	if x, ok := strings.CutPrefix(pat, "**/"); ok && x != "" && strings.IndexByte(x, '/') < 0 {
		// Not in git, but the same: "**/x" matches x at any depth
		// below base, and with WM_PATHNAME a '*' in x stays within
		// the last component, so a literal or "*literal" x can take
		// a basename fast path.
		switch {
		case simpleLength(x) == len(x):
			p.kind, p.glob = basenameLiteral, x
			return p, true
		case x[0] == '*' && simpleLength(x[1:]) == len(x)-1:
			p.kind, p.glob = basenameSuffix, x[1:]
			return p, true
		}
	}
	p.lit, p.glob = pat[:nowild], pat[nowild:]
	if p.glob == "" {
		p.kind = pathLiteral
	} else {
		p.kind = pathGlob
	}
	return p, true
}

// String returns the pattern as written in its file (without the trailing
// spaces git trims), the way git check-ignore -v shows it.
func (p Pattern) String() string { return p.line }

// Base returns the directory the pattern's file is in, relative to the
// repository root ("" for the root and for repository-wide files).
func (p Pattern) Base() string { return p.base }

// Match reports how p matches path, a slash-separated path relative to the
// repository root without a trailing slash, of a directory if isDir is
// set. A pattern never matches a path outside its base directory. Match
// does not apply git's directory rule (see the package comment).
func (p Pattern) Match(path string, isDir bool) Result {
	return p.match(path, path[strings.LastIndexByte(path, '/')+1:], isDir)
}

// match is Match with the path's basename already cut out.
func (p *Pattern) match(path, name string, isDir bool) Result {
	if p.flags&flagMustBeDir != 0 && !isDir {
		return NoMatch
	}
	rel := path
	if b := p.base; b != "" {
		if len(path) <= len(b) || path[len(b)] != '/' || path[:len(b)] != b {
			return NoMatch
		}
		rel = path[len(b)+1:]
	}
	var ok bool
	switch p.kind {
	case basenameLiteral:
		ok = name == p.glob
	case basenameSuffix:
		ok = strings.HasSuffix(name, p.glob)
	case basenamePrefix:
		ok = strings.HasPrefix(name, p.glob)
	case basenameGlob:
		ok = wildmatch(p.glob, name, false)
	case pathLiteral:
		ok = rel == p.lit
	case pathGlob:
		ok = strings.HasPrefix(rel, p.lit) && wildmatch(p.glob, rel[len(p.lit):], true)
	}
	switch {
	case !ok:
		return NoMatch
	case p.flags&flagNegative != 0:
		return Include
	}
	return Exclude
}

// Ignored reports whether path is ignored by ps, a list in git's order of
// precedence, lowest first: core.excludesFile, info/exclude, the root
// .gitignore, then deeper ones in order. The last pattern that matches
// decides; a path no pattern matches is not ignored. path is as for Match.
// Ignored judges the path alone: the caller must not descend into an
// ignored directory (see the package comment).
func Ignored(ps []Pattern, path string, isDir bool) bool {
	name := path[strings.LastIndexByte(path, '/')+1:]
	for i := len(ps) - 1; i >= 0; i-- {
		switch ps[i].match(path, name, isDir) {
		case Exclude:
			return true
		case Include:
			return false
		}
	}
	return false
}

// ExcludesFile is the global ignore file git reads in the work tree at
// top: core.excludesFile as configured ("~/" is the home directory; a
// relative path is relative to top, where git runs), or, when it is not
// set, its default $XDG_CONFIG_HOME/git/ignore, else
// ~/.config/git/ignore. "" when there is none to read.
func ExcludesFile(configured, top string) string {
	home := func() string {
		h, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		return h
	}
	switch {
	case configured == "":
		if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
			return filepath.Join(x, "git", "ignore")
		}
		if h := home(); h != "" {
			return filepath.Join(h, ".config", "git", "ignore")
		}
		return ""
	case strings.HasPrefix(configured, "~/"):
		if h := home(); h != "" {
			return filepath.Join(h, configured[2:])
		}
	case !filepath.IsAbs(configured):
		return filepath.Join(top, configured)
	}
	return configured
}
