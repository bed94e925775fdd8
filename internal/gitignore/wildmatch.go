package gitignore

import "strings"

// This file is a line-by-line port of git 2.39's wildmatch.c (dowild), with
// the case-folding branches left out (orket assumes core.ignorecase=false).
// The C code walks NUL-terminated strings; here at() returns 0 past the end
// of a string, which is the same thing because neither a pattern (cut at its
// first NUL by ParsePatterns) nor a path ever holds a NUL byte.

// Results of dowild, as in wildmatch.h. Only wmMatch means a match; the two
// abort values let an outer '*' stop trying further positions early.
const (
	wmMatch           = 0
	wmNoMatch         = 1
	wmAbortAll        = -1
	wmAbortToStarStar = -2
)

// at returns s[i], or 0 (C's terminating NUL) past the end of s.
func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// isGlobSpecial is git's is_glob_special: the bytes * ? [ and \.
func isGlobSpecial(c byte) bool {
	return c == '*' || c == '?' || c == '[' || c == '\\'
}

// callBudget is how many calls of dowild a match may make before it is
// run again with memoization. git's own wildmatch has no such limit, and a
// hostile pattern such as "a/**/a/**/a/**/a/**/a/**/a/**/b" against a deep
// path takes it seconds to minutes; dowild is a pure function of the two
// suffixes it is given, so remembering its results changes nothing but
// the time.
const callBudget = 1 << 12

// wildmatch reports whether text matches the glob p. With pathname set
// (git's WM_PATHNAME) '*', '?' and classes never match '/', and "**" has its
// directory meaning where it stands alone between slashes.
func wildmatch(p, text string, pathname bool) bool {
	w := wmState{pathname: pathname, textLen: len(text)}
	r := w.dowild(p, text)
	if w.calls > callBudget {
		w = wmState{pathname: pathname, textLen: len(text), memo: map[int]int8{}}
		r = w.dowild(p, text)
	}
	return r == wmMatch
}

// wmState is one call of wildmatch.
type wmState struct {
	pathname bool
	calls    int
	textLen  int          // length of the whole text, to index memo
	memo     map[int]int8 // result by len(p)*(textLen+1)+len(text) of a call
}

// dowild counts its calls and, once over budget, gives up at once (the
// caller runs the match again with memo), or looks up and records results.
func (w *wmState) dowild(p, text string) int {
	if w.memo == nil {
		if w.calls++; w.calls > callBudget {
			return wmAbortAll
		}
		return w.dowild1(p, text)
	}
	i := len(p)*(w.textLen+1) + len(text)
	if m, ok := w.memo[i]; ok {
		return int(m)
	}
	r := w.dowild1(p, text)
	w.memo[i] = int8(r)
	return r
}

func (w *wmState) dowild1(p, text string) int {
	pathname := w.pathname
	pi, ti := 0, 0
	for ; pi < len(p); pi, ti = pi+1, ti+1 {
		pch := p[pi]
		tch := at(text, ti)
		if tch == 0 && pch != '*' {
			return wmAbortAll
		}
		switch pch {
		case '\\':
			// Literal match with the following character; a pattern
			// ending in a backslash compares with NUL and fails.
			pi++
			if tch != at(p, pi) {
				return wmNoMatch
			}
		default:
			if tch != pch {
				return wmNoMatch
			}
		case '?':
			if pathname && tch == '/' {
				return wmNoMatch
			}
		case '*':
			var matchSlash bool
			pi++
			if at(p, pi) == '*' {
				prev := pi - 2
				pi++
				for at(p, pi) == '*' {
					pi++
				}
				switch {
				case !pathname:
					matchSlash = true
				case (prev < 0 || p[prev] == '/') &&
					(at(p, pi) == 0 || at(p, pi) == '/' ||
						(at(p, pi) == '\\' && at(p, pi+1) == '/')):
					// "**/" matches zero directories first: try the
					// rest of the pattern right here.
					if at(p, pi) == '/' && w.dowild(p[pi+1:], text[ti:]) == wmMatch {
						return wmMatch
					}
					matchSlash = true
				default:
					matchSlash = false
				}
			} else {
				matchSlash = !pathname
			}
			if pi >= len(p) {
				// A trailing "**" matches everything, a trailing '*'
				// only what holds no more slashes.
				if !matchSlash && strings.IndexByte(text[ti:], '/') >= 0 {
					return wmNoMatch
				}
				return wmMatch
			} else if !matchSlash && p[pi] == '/' {
				// One '*' followed by a slash matches up to the next
				// slash of the text; the loop steps over both slashes.
				slash := strings.IndexByte(text[ti:], '/')
				if slash < 0 {
					return wmNoMatch
				}
				ti += slash
				continue
			}
			for tch != 0 {
				// Advance fast when a literal follows the star: the
				// text before that literal must belong to the star.
				if !isGlobSpecial(p[pi]) {
					pch = p[pi]
					for {
						tch = at(text, ti)
						if tch == 0 || (!matchSlash && tch == '/') || tch == pch {
							break
						}
						ti++
					}
					if tch != pch {
						return wmNoMatch
					}
				}
				if m := w.dowild(p[pi:], text[ti:]); m != wmNoMatch {
					if !matchSlash || m != wmAbortToStarStar {
						return m
					}
				} else if !matchSlash && tch == '/' {
					return wmAbortToStarStar
				}
				ti++
				tch = at(text, ti)
			}
			return wmAbortAll
		case '[':
			pi++
			pch = at(p, pi)
			if pch == '^' {
				pch = '!'
			}
			negated := pch == '!'
			if negated {
				pi++
				pch = at(p, pi)
			}
			var prevCh byte
			matched := false
			for {
				if pch == 0 {
					return wmAbortAll
				}
				switch {
				case pch == '\\':
					pi++
					pch = at(p, pi)
					if pch == 0 {
						return wmAbortAll
					}
					if tch == pch {
						matched = true
					}
				case pch == '-' && prevCh != 0 && at(p, pi+1) != 0 && at(p, pi+1) != ']':
					pi++
					pch = p[pi]
					if pch == '\\' {
						pi++
						pch = at(p, pi)
						if pch == 0 {
							return wmAbortAll
						}
					}
					if tch <= pch && tch >= prevCh {
						matched = true
					}
					pch = 0 // so that prevCh becomes 0
				case pch == '[' && at(p, pi+1) == ':':
					pi += 2
					s := pi
					for {
						pch = at(p, pi)
						if pch == 0 || pch == ']' {
							break
						}
						pi++
					}
					if pch == 0 {
						return wmAbortAll
					}
					i := pi - s - 1
					if i < 0 || p[pi-1] != ':' {
						// No ":]": the '[' is an ordinary member.
						pi = s - 2
						pch = '['
						if tch == pch {
							matched = true
						}
						break
					}
					in, ok := inClass(p[s:s+i], tch)
					if !ok {
						return wmAbortAll // malformed [:class:]
					}
					if in {
						matched = true
					}
					pch = 0 // so that prevCh becomes 0
				default:
					if tch == pch {
						matched = true
					}
				}
				prevCh = pch
				pi++
				pch = at(p, pi)
				if pch == ']' {
					break
				}
			}
			if matched == negated || (pathname && tch == '/') {
				return wmNoMatch
			}
		}
	}
	if ti < len(text) {
		return wmNoMatch
	}
	return wmMatch
}

// inClass reports whether c belongs to the POSIX class name, with git's
// locale-independent ASCII ctype (ctype.c): no byte above 0x7f is in any
// class, and space is only ' ', '\t', '\n' and '\r'. ok is false for an
// unknown class name, which makes the whole pattern fail.
func inClass(name string, c byte) (in, ok bool) {
	switch name {
	case "alnum":
		return isAlpha(c) || isDigit(c), true
	case "alpha":
		return isAlpha(c), true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < 0x20 || c == 0x7f, true
	case "digit":
		return isDigit(c), true
	case "graph":
		return c > 0x20 && c < 0x7f, true
	case "lower":
		return c >= 'a' && c <= 'z', true
	case "print":
		return c >= 0x20 && c < 0x7f, true
	case "punct":
		return c > 0x20 && c < 0x7f && !isAlpha(c) && !isDigit(c), true
	case "space":
		return c == ' ' || c == '\t' || c == '\n' || c == '\r', true
	case "upper":
		return c >= 'A' && c <= 'Z', true
	case "xdigit":
		return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'), true
	}
	return false, false
}

func isAlpha(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
