package redact

import (
	"strings"

	"github.com/orket/orket/internal/lazyre"
)

// The two rules written as code: as regular expressions they need a
// backtracking search at every byte (a key of any length before the
// keyword, a gap of any length before the run), which cost ten times more
// than all the other rules together.

var finders = map[string]func(win []byte, out []span) []span{
	"key-value":        findPairs,
	"keyword-then-run": findRuns,
}

// findPairs finds key=value pairs whose key ends with a word naming a
// secret (password=, "client_secret": "...", AccountKey=, X-Api-Key:,
// token := "..."), and redacts the value; a quoted value keeps its
// quotes. checkPair judges the value. A pair inside a URL's user part
// (://user:...) is left to the URL rules.
func findPairs(win []byte, out []span) []span {
	for p := 0; p < len(win); p++ {
		c := win[p]
		if c != '=' && c != ':' {
			continue
		}
		// The key: blanks, one closing quote, name bytes, back from p.
		keyEnd := p
		for keyEnd > 0 && (win[keyEnd-1] == ' ' || win[keyEnd-1] == '\t') {
			keyEnd--
		}
		nameEnd := keyEnd
		if nameEnd > 0 && (win[nameEnd-1] == '"' || win[nameEnd-1] == '\'') {
			nameEnd--
		}
		k := nameEnd
		for k > 0 && isNameByte(win[k-1]) {
			k--
		}
		// The separator: = : := =>, then blanks.
		e := p + 1
		if e < len(win) && (c == ':' && win[e] == '=' || c == '=' && win[e] == '>') {
			e++
		}
		for e < len(win) && (win[e] == ' ' || win[e] == '\t') {
			e++
		}
		if k == nameEnd || !secretKey(win[k:nameEnd]) || k >= 3 && string(win[k-3:k]) == "://" {
			continue
		}
		end := scanValue(win, e)
		if end == e {
			continue
		}
		if checkPair(win[k:keyEnd], win[keyEnd:e], win[e:end]) {
			s := e
			if win[s] == '"' || win[s] == '\'' {
				s++
				if end > s && win[end-1] == win[e] {
					end--
				}
			}
			if end > s {
				out = append(out, span{s, end})
			}
		}
		p = max(p, end-1)
	}
	return out
}

// secretKeyWords end a key that names a secret; keyPrefixes, followed by
// key (with an optional _ or -), too.
var (
	secretKeyWords = []string{"password", "passwd", "passphrase", "pwd", "secret", "token", "credential", "credentials", "_auth", "signature"}
	keyPrefixes    = []string{"api", "access", "secret", "private", "account", "encryption", "signing", "master", "client", "app", "auth", "license", "deploy", "ssh", "storage"}
)

// secretKey reports whether a key's name ends with a word that names a
// secret (PGPASSWORD, client_secret, x-api-key, AccountKey, but not
// PASSWORD_FILE, token_type or monkey).
func secretKey(name []byte) bool {
	if len(name) < 3 || len(name) > 128 {
		return false
	}
	var buf [128]byte
	low := buf[:len(name)]
	for i, c := range name {
		low[i] = lowerASCII(c)
	}
	s := string(low) // does not escape: compared only
	for _, w := range secretKeyWords {
		if strings.HasSuffix(s, w) {
			return true
		}
	}
	s, ok := strings.CutSuffix(s, "key")
	if !ok {
		return false
	}
	if strings.HasSuffix(s, "_") || strings.HasSuffix(s, "-") {
		s = s[:len(s)-1]
	}
	for _, p := range keyPrefixes {
		if strings.HasSuffix(s, p) {
			return true
		}
	}
	return false
}

// scanValue returns the end of the value that starts at b[i]: a quoted
// string (backslash escapes allowed in double quotes; unterminated, it
// runs to the end of the line), or bytes up to a blank, a quote or a list
// separator (, ; &).
func scanValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	if q := b[i]; q == '"' || q == '\'' {
		j := i + 1
		for ; j < len(b) && b[j] != '\n'; j++ {
			if b[j] == '\\' && q == '"' && j+1 < len(b) && b[j+1] != '\n' {
				j++
			} else if b[j] == q {
				return j + 1
			}
		}
		return j
	}
	j := i
	for j < len(b) && !isSpace(b[j]) && b[j] != ',' && b[j] != ';' && b[j] != '&' && b[j] != '"' && b[j] != '\'' {
		j++
	}
	return j
}

func isNameByte(c byte) bool { return isAlnum(c) || c == '_' || c == '.' || c == '-' }

func isRunByte(c byte) bool { return isAlnum(c) || c == '+' || c == '/' || c == '_' || c == '-' }

// runKeyword is a secret-ish word standing alone (a plural allowed).
var runKeyword = lazyre.New(`(?i)\b(?:token|key|secret|password|passwd|credential|signature)s?\b`)

const (
	minRun = 32 // bytes of hex or base64 that make a run
	maxGap = 24 // bytes at most between the word and the run
)

// findRuns finds a long run of hex or base64 (at least minRun bytes, up
// to two = of padding) that follows a secret-ish word within maxGap bytes
// on the same line: "auth token 3f2a...", "secret is dGhp...". checkRun
// judges the run.
func findRuns(win []byte, out []span) []span {
	for i := 0; i < len(win); {
		if !isRunByte(win[i]) {
			i++
			continue
		}
		j := i
		for j < len(win) && isRunByte(win[j]) {
			j++
		}
		s := i
		for s < j && !isAlnum(win[s]) {
			s++
		}
		e := j
		for e < len(win) && e-j < 2 && win[e] == '=' {
			e++
		}
		i = j
		if j-s < minRun || s > 0 && (isAlnum(win[s-1]) || win[s-1] == '_') {
			continue
		}
		lo := max(0, s-maxGap-len("credentials"))
		ms := runKeyword().FindAllIndex(win[lo:s], -1)
		if len(ms) == 0 {
			continue
		}
		m := ms[len(ms)-1]
		gap := win[lo+m[1] : s]
		if len(gap) > maxGap || containsByte(gap, '\n') || !checkRun(gap, nil, win[s:e]) {
			continue
		}
		out = append(out, span{s, e})
	}
	return out
}

func containsByte(b []byte, c byte) bool {
	for _, x := range b {
		if x == c {
			return true
		}
	}
	return false
}
